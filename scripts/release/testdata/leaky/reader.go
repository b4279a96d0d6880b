package tool

import "github.com/agentcontract/tool/internal/json"

// Read uses an internal package in its body only: not reported.
func Read(data []byte) bool { return json.Valid(data) }
