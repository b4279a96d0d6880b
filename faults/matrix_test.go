package faults

import (
	"sync"
	"testing"
)

// results collects the cases of a run, for the table.
var results struct {
	sync.Mutex
	all []result
}

func record(r result) {
	results.Lock()
	defer results.Unlock()
	results.all = append(results.all, r)
}

// smoke says whether a case runs under -short.
func smoke(p point, k kind) bool { return p == toolAfterEffect && k == reconciled }

// runPath runs one path of the matrix: every point for every kind, or
// the smoke subset under -short.
func runPath(t *testing.T, run func(t *testing.T, p point, k kind) result) {
	for _, p := range points {
		for _, k := range kinds {
			t.Run(p.String()+"/"+k.String(), func(t *testing.T) {
				if testing.Short() && !smoke(p, k) {
					t.Skip("the full matrix runs without -short")
				}
				record(run(t, p, k))
			})
		}
	}
}

func TestProcessKill(t *testing.T) { runPath(t, killCase) }
