// Package kit is the fixture's internal package.
package kit

// Lint is a finding.
type Lint struct {
	Tool string
	Rule string
	note string
}

// String returns the finding as text.
func (l Lint) String() string { return l.Tool + l.Rule + l.note }

// Options, Hidden, Base and Level are types the fixture's API names.
type (
	Options struct{}
	Hidden  struct{ Name string }
	Base    struct{}
	Level   int
)
