// Package pub is a published package of a fixture repository whose root
// module is the repository's: it names a type of the fixture's internal
// package through an alias, for TestAPIListsInternalAliases.
package pub

import "github.com/agentcontract/tool/internal/kit"

// Finding is the internal package's Finding.
type Finding = kit.Finding
