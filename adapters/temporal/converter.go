package tooltemporal

import (
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
)

// NewFailureConverter returns the failure converter to give a client
// (client.Options.FailureConverter, and so its workers) whose
// DataConverter is dc, when dc encodes payloads with a codec (that
// encrypts them, say). Give both options the same dc:
//
//	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), codec)
//	c, err := client.Dial(client.Options{DataConverter: dc, FailureConverter: tooltemporal.NewFailureConverter(dc)})
//
// Why: Temporal encodes the details of an error (what the call activity
// puts there: a Failure's kind and public Output, an InputRejection's
// message) with the failure converter's own data converter, not the
// client's. The default failure converter has the default data
// converter, without the codec, so with only a codec configured the
// details are written to the workflow's history in plain text. The
// converter returned encodes them with dc, and so with its codec; it
// also encodes every failure's message and stack trace
// ([temporal.DefaultFailureConverterOptions].EncodeCommonAttributes),
// which covers the messages of your own errors too: the history then
// shows "Encoded failure" where the message was, and a client or tool
// reads the message only with a converter that has the codec.
//
// A nil dc is the default data converter, which encodes nothing; the
// failure converter is then as plain as the default one. The result is
// safe for concurrent use, as Temporal requires of converters.
func NewFailureConverter(dc converter.DataConverter) converter.FailureConverter {
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: dc, EncodeCommonAttributes: true})
}
