package sqlstore

import "github.com/agentcontract/tool/dispatch"

// StrandedQuery returns the query Stranded runs for q and its arguments,
// for a test of the query's plan.
func StrandedQuery(s *Store, q dispatch.StrandedQuery) (string, []any) {
	return s.strandedQuery(q)
}
