package toolmcp

// CheckElicitationForm exposes the elicitation-form check to the tests.
var CheckElicitationForm = checkElicitation
