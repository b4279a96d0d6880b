// Package kit is the internal package of a fixture repository.
package kit

// Finding is a type reached through an alias.
type Finding struct {
	Tool string
	Rule string
}

// String renders f.
func (f Finding) String() string { return f.Tool + ": " + f.Rule }

// Other is not reached through the alias.
type Other struct{}
