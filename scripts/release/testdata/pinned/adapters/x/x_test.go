package x

import (
	"testing"

	"github.com/agentcontract/tool/internal/fixture"
)

func TestKey(t *testing.T) {
	if Key() == fixture.Name {
		t.Fatal("the key is the fixture's name")
	}
}
