module github.com/agentcontract/tool/adapters/x

go 1.26.0

require github.com/agentcontract/tool v0.1.0

replace github.com/agentcontract/tool => ../..
