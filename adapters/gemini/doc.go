// Package toolgemini offers the tools of a tool.Registry to Gemini through
// the official Go SDK (google.golang.org/genai).
package toolgemini
