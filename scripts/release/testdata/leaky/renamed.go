package tool

import k "github.com/agentcontract/tool/internal/kit"

// Fetch returns an internal type, imported under another name.
func Fetch() k.Options { return k.Options{} }
