package toolmcp

import (
	"context"
	"math"
	"runtime"
	"sync"
	"weak"

	"github.com/agentcontract/tool/internal/errprefix"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConnectConfig is what [Connect] needs to make a client session whose
// reads and elicitations are bounded. Zero limits mean their defaults;
// [NoLimit] turns a bound off, another negative value is refused. The
// zero ConnectConfig is refused: it names no client and no transport.
// Connect copies what it keeps; the Options and Transport given are not
// changed.
type ConnectConfig struct {
	// Implementation names the client to the server (the clientInfo of
	// initialize). Required.
	Implementation *mcp.Implementation
	// Options are the client's options; nil means the SDK's defaults.
	// Connect copies them and wraps ElicitationHandler, when set, with
	// [LimitElicitations], so that each call of an imported tool answers
	// at most [ImportConfig].MaxElicitations elicitations.
	Options *mcp.ClientOptions
	// Transport reaches the server. Required. Connect bounds a copy of it
	// as [LimitTransport] does, with the limits below; the given transport
	// is not changed. A transport LimitTransport cannot bound (the SDK's
	// in-memory and command transports) is refused, unless
	// MaxMessageBytes is NoLimit.
	Transport mcp.Transport
	// Session is passed to [mcp.Client.Connect]; nil means its defaults.
	Session *mcp.ClientSessionOptions
	// MaxMessageBytes bounds one message read from the server, results
	// and pages of the listing included: the connection fails as soon as
	// the bound is passed, before the message is decoded. 0 means
	// [DefaultMaxMessageBytes] (16 MiB). NoLimit takes the transport as
	// it is, unbounded (and then the stream bounds below are not applied
	// either).
	MaxMessageBytes int
	// MaxStreamEvents bounds the events of one event stream that answers a
	// request over streamable HTTP: the call's response, and the
	// notifications and requests that precede it. 0 means
	// [DefaultMaxStreamEvents] (10,000); NoLimit, no bound.
	MaxStreamEvents int
	// MaxStreamBytes bounds the bytes of such a stream. 0 means
	// [DefaultMaxStreamBytes] (32 MiB); NoLimit, no bound.
	MaxStreamBytes int
}

// Connect connects a client to the server that config.Transport reaches and
// returns its session, bounded for [Import] and the tools it imports: every
// message the server sends is bounded while it is read
// (ConnectConfig.MaxMessageBytes), so is each event stream that answers a
// request (MaxStreamEvents, MaxStreamBytes), and the client's elicitation
// handler answers at most [ImportConfig].MaxElicitations elicitations per
// imported call. A server past a bound fails the connection, and the calls
// waiting on it end with an error wrapping [ErrRemoteCall] that names the
// bound. The event stream a GET opens for the server's own notifications
// lives as long as the session and is bounded per event only; every
// imported call is also bounded in time ([ImportConfig].CallTimeout).
//
// The session is the caller's to close. Connect's error wraps
// [ErrInvalidConfig] for a missing implementation or transport, a
// transport it cannot bound, or a negative limit other than NoLimit, and
// [ErrRemoteCall] when the connection or its initialization fails.
func Connect(ctx context.Context, config ConnectConfig) (*mcp.ClientSession, error) {
	if config.Implementation == nil {
		return nil, errprefix.Errorf("%w: ConnectConfig.Implementation is nil", ErrInvalidConfig)
	}
	if config.Transport == nil {
		return nil, errprefix.Errorf("%w: ConnectConfig.Transport is nil", ErrInvalidConfig)
	}
	transport := config.Transport
	if config.MaxMessageBytes != NoLimit {
		l, err := config.resolve()
		if err != nil {
			return nil, err
		}
		if transport, err = limitTransport(transport, l); err != nil {
			return nil, err
		}
	}
	var opts mcp.ClientOptions
	if config.Options != nil {
		opts = *config.Options
	}
	opts.ElicitationHandler = LimitElicitations(opts.ElicitationHandler)
	session, err := mcp.NewClient(config.Implementation, &opts).Connect(ctx, transport, config.Session)
	if err != nil {
		return nil, errprefix.Errorf("%w: connecting: %w", ErrRemoteCall, err)
	}
	markConnected(session)
	return session, nil
}

// resolve checks the transport's limits of config and replaces each zero
// with its default; a stream bound turned off is 0.
func (config ConnectConfig) resolve() (transportLimits, error) {
	var l transportLimits
	var err error
	if l.message, err = limitOrDefault("ConnectConfig.MaxMessageBytes", config.MaxMessageBytes, DefaultMaxMessageBytes); err != nil {
		return l, err
	}
	for _, f := range []struct {
		name     string
		value    int
		fallback int
		to       *int
	}{
		{"MaxStreamEvents", config.MaxStreamEvents, DefaultMaxStreamEvents, &l.streamEvents},
		{"MaxStreamBytes", config.MaxStreamBytes, DefaultMaxStreamBytes, &l.streamBytes},
	} {
		if *f.to, err = limitOrDefault("ConnectConfig."+f.name, f.value, f.fallback); err != nil {
			return l, err
		}
		if *f.to == math.MaxInt {
			*f.to = 0 // NoLimit
		}
	}
	return l, nil
}

// sessions holds the sessions Connect made, weakly: an entry goes when its
// session is collected.
var sessions sync.Map // weak.Pointer[mcp.ClientSession] → struct{}

func markConnected(session *mcp.ClientSession) {
	key := weak.Make(session)
	sessions.Store(key, struct{}{})
	runtime.AddCleanup(session, func(key weak.Pointer[mcp.ClientSession]) { sessions.Delete(key) }, key)
}

// connected reports whether Connect made session.
func connected(session *mcp.ClientSession) bool {
	_, ok := sessions.Load(weak.Make(session))
	return ok
}
