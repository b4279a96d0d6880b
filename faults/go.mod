module github.com/agentcontract/tool/faults

go 1.26.0

replace (
	github.com/agentcontract/tool => ../
	github.com/agentcontract/tool/adapters/internal => ../adapters/internal
	github.com/agentcontract/tool/adapters/mcp => ../adapters/mcp
	github.com/agentcontract/tool/desk => ../desk
	github.com/agentcontract/tool/stores/sqlstore => ../stores/sqlstore
)

require (
	github.com/agentcontract/tool v0.1.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/buger/jsonparser v1.1.2 // indirect
	github.com/dlclark/regexp2 v1.12.0 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/invopop/jsonschema v0.14.0 // indirect
	github.com/pb33f/ordered-map/v2 v2.3.1 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	go.yaml.in/yaml/v4 v4.0.0-rc.2 // indirect
	golang.org/x/text v0.41.0 // indirect
)
