// Package tool is the core of a fixture of two modules.
package tool
