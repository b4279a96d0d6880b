package toolgemini

import (
	"strconv"
	"strings"
)

// child extends a JSON pointer by one reference token, escaped per RFC 6901.
func child(ptr, token string) string {
	token = strings.ReplaceAll(token, "~", "~0")
	token = strings.ReplaceAll(token, "/", "~1")
	return ptr + "/" + token
}

func index(ptr string, i int) string { return ptr + "/" + strconv.Itoa(i) }
