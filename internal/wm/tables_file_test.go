package wm

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/fixed"
)

var updateTables = flag.Bool("update-tables", false, "rewrite testdata/conformance/log2frac.txt and exp2neg.txt")

// TestTableFiles checks that the constant tables of SPEC.md ("Fixed-point
// functions"), published as testdata/conformance/log2frac.txt and exp2neg.txt, are
// the ones the world model and the retention gate compute with, read
// through lg and W: lg(256 + i) = 2048 + LOG2FRAC[i], W(i) = EXP2NEG[i].
func TestTableFiles(t *testing.T) {
	for _, tc := range []struct {
		name, head string
		value      func(i int) uint32
	}{
		{"log2frac.txt", "# LOG2FRAC[i] = round(256*log2(1 + i/256)), i = 0..255: index, value", func(i int) uint32 { return uint32(fixed.Lg(uint64(256+i)) - 2048) }},
		{"exp2neg.txt", "# EXP2NEG[i] = round(65536*2^(-i/256)), i = 0..255: index, value", func(i int) uint32 { return uint32(fixed.W(int32(i))) }},
	} {
		var b strings.Builder
		fmt.Fprintln(&b, tc.head)
		for i := range 256 {
			fmt.Fprintf(&b, "%d %d\n", i, tc.value(i))
		}
		path := filepath.Join("..", "..", "testdata", "conformance", tc.name)
		if *updateTables {
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != b.String() {
			t.Fatalf("%s differs from the table the code uses (go test ./wm -run TestTableFiles -update-tables)", path)
		}
	}
}
