package rans

import (
	"testing"

	"github.com/wmzip/wmzip/internal/asmcheck"
)

// TestGeneratedAsm checks that rans_amd64.s and stubs_amd64.go are what
// the avo program in _generate writes.
func TestGeneratedAsm(t *testing.T) {
	asmcheck.Generated(t, "rans", "rans_amd64.s", "stubs_amd64.go")
}
