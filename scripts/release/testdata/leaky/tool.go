// Package tool is a fixture: a published package whose exported API names
// types of an internal package, in every place the release check reads.
package tool

import "github.com/agentcontract/tool/internal/kit"

// Lint is an alias of an internal type.
type Lint = kit.Lint

// Config has an exported field of an internal type, and an unexported one,
// which is not API.
type Config struct {
	Options kit.Options
	hidden  kit.Hidden
}

// Level returns an internal type.
func (c Config) Level() kit.Level { return kit.Level(len(c.hidden.Name)) }

// Checker embeds an internal type.
type Checker struct {
	kit.Base
}

// Runner has a method that takes an internal type.
type Runner interface {
	Run(kit.Options) error
}

// Default is a variable declared with an internal type.
var Default kit.Options

// Check takes an internal type.
func Check(o kit.Options) error { return check(o) }

// Not API: an unexported function, an unexported type and its methods,
// and function bodies.

func check(o kit.Options) error {
	_ = kit.Hidden{}
	_ = o
	return nil
}

type private struct{ o kit.Options }

func (p private) Exported(o kit.Options) { p.o = o }
