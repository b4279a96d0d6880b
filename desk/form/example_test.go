package form_test

import (
	"fmt"

	"github.com/agentcontract/tool/desk/form"
)

// An MCP elicitation schema read as a form, the answer a person's values
// make, and a schema that is not a form.
func ExampleRead() {
	schema := []byte(`{"type":"object","properties":{
		"approve":{"type":"boolean","title":"Send the money back?"},
		"reason":{"type":"string","oneOf":[{"const":"damaged","title":"Arrived damaged"},{"const":"late","title":"Arrived late"}]},
		"cents":{"type":"integer","minimum":1,"maximum":100000}},
		"required":["approve"]}`)
	f, err := form.Read(schema, form.Options{})
	if err != nil {
		panic(err)
	}
	for _, fd := range f.Fields {
		fmt.Printf("%s %s required=%t %q\n", fd.Name, fd.Kind, fd.Required, fd.Title)
	}
	answer, err := f.Answer(map[string][]string{"approve": {"true"}, "reason": {"late"}, "cents": {""}})
	fmt.Println(string(answer), err)
	_, err = f.Answer(map[string][]string{"cents": {"ten"}})
	fmt.Println(err)

	_, err = form.Read([]byte(`{"type":"object","properties":{"code":{"type":"string","pattern":"^[0-9]+$"}}}`), form.Options{})
	fmt.Println(err)
	// Output:
	// approve boolean required=true "Send the money back?"
	// reason select required=false ""
	// cents integer required=false ""
	// {"approve":true,"reason":"late"} <nil>
	// tool: invalid form values: "approve" is required; "cents" must be a number, not "ten"
	// tool: not a form: property "code": keyword "pattern" is not allowed on a string in an elicitation form
}

// The desk's extras, each an option: a bare boolean is an Approve
// button, a root value a form of one field.
func ExampleOptions() {
	desk := form.Options{Approve: true, Value: true, ExclusiveBounds: true}
	approve, err := form.Read([]byte(`{"type":"boolean","description":"Go ahead?"}`), desk)
	if err != nil {
		panic(err)
	}
	answer, _ := approve.Answer(nil)
	fmt.Println(approve.Shape, approve.Description, string(answer))

	count, err := form.Read([]byte(`{"type":"integer","exclusiveMinimum":0}`), desk)
	if err != nil {
		panic(err)
	}
	answer, _ = count.Answer(map[string][]string{"": {"3"}})
	fmt.Println(count.Shape, count.Fields[0].ExclusiveMinimum, string(answer))

	_, err = form.Read([]byte(`{"type":"boolean"}`), form.Options{})
	fmt.Println(err)
	// Output:
	// approve Go ahead? true
	// value 0 3
	// tool: not a form: the root must have "type":"object"
}
