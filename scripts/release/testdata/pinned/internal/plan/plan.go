// Package plan is an internal package of the core that only a file of the
// adapter built for another system imports.
package plan

// Nine is nine.
const Nine = 9
