// This file holds the scanner's check that no object of the arguments
// gives a member name twice: names compared as written while they are few
// and hold no escape, decoded into a set otherwise.

package strictschema

import (
	"strings"
	"unicode/utf16"

	"github.com/agentcontract/tool/internal/strictjson"
)

// fewNames is the most member names of one object compared one by one
// to find a name given twice; an object with more puts them in a set, as
// does one with a name that holds an escape.
const fewNames = 12

// objectNames are the names of one object's members: at first on the
// scanner's stack of names, from base on; in set once there are many, the
// stack is full, or one holds an escape.
type objectNames struct {
	base int
	set  map[string]bool
}

// add records the name of a member of an object, written between its
// quotes at sc.text[at:at+len(raw)]; false when the object already has it.
func (sc *scanner) add(on *objectNames, at int, raw string, escaped bool) bool {
	if on.set == nil && !escaped && sc.namesInUse < len(sc.names) && sc.namesInUse-on.base < fewNames {
		for _, prev := range sc.names[on.base:sc.namesInUse] {
			if sc.text[prev.from:prev.to] == raw {
				return false
			}
		}
		sc.names[sc.namesInUse] = span{at, at + len(raw)}
		sc.namesInUse++
		return true
	}
	if on.set == nil {
		// The names so far hold no escape: as written, they are decoded.
		on.set = make(map[string]bool, 2*fewNames)
		for _, prev := range sc.names[on.base:sc.namesInUse] {
			on.set[sc.text[prev.from:prev.to]] = true
		}
		sc.namesInUse = on.base
	}
	name := raw
	if escaped {
		name = unquote(raw)
	}
	if on.set[name] {
		return false
	}
	on.set[name] = true
	return true
}

// unquote decodes the text of a string that str accepted.
func unquote(raw string) string {
	var b strings.Builder
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			b.WriteByte(raw[i])
			i++
			continue
		}
		if c := raw[i+1]; c != 'u' {
			u, _ := strictjson.Unescape(c)
			b.WriteByte(u)
			i += 2
			continue
		}
		r, _ := strictjson.Hex4(raw[i+2:])
		i += 6
		if utf16.IsSurrogate(r) {
			r2, _ := strictjson.Hex4(raw[i+2:])
			r = utf16.DecodeRune(r, r2)
			i += 6
		}
		b.WriteRune(r)
	}
	return b.String()
}
