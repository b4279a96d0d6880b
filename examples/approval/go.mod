module github.com/agentcontract/tool/examples/approval

go 1.26.0

replace (
	github.com/agentcontract/tool => ../..
	github.com/agentcontract/tool/adapters/internal => ../../adapters/internal
	github.com/agentcontract/tool/adapters/openai => ../../adapters/openai
	github.com/agentcontract/tool/desk => ../../desk
)

require (
	github.com/agentcontract/tool v0.1.0
	github.com/agentcontract/tool/adapters/openai v0.1.0
	github.com/agentcontract/tool/desk v0.1.0
	github.com/openai/openai-go/v3 v3.99.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/agentcontract/tool/adapters/internal v0.1.0 // indirect
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/buger/jsonparser v1.1.2 // indirect
	github.com/coder/websocket v1.8.15 // indirect
	github.com/dlclark/regexp2 v1.12.0 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/invopop/jsonschema v0.14.0 // indirect
	github.com/pb33f/ordered-map/v2 v2.3.1 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	go.yaml.in/yaml/v4 v4.0.0-rc.2 // indirect
	golang.org/x/text v0.42.0 // indirect
)
