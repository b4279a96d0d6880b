module github.com/agentcontract/tool

go 1.26.0
