package wm

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateTables = flag.Bool("update-tables", false, "rewrite testdata/conformance/log2frac.txt and exp2neg.txt")

// TestTableFiles checks that the constant tables of SPEC.md ("Fixed-point
// functions"), published as testdata/conformance/log2frac.txt and exp2neg.txt, are
// the ones the world model and the retention gate compute with.
func TestTableFiles(t *testing.T) {
	for _, tc := range []struct {
		name, head string
		value      func(i int) uint32
	}{
		{"log2frac.txt", "# LOG2FRAC[i] = round(256*log2(1 + i/256)), i = 0..255: index, value", func(i int) uint32 { return uint32(log2Frac[i]) }},
		{"exp2neg.txt", "# EXP2NEG[i] = round(65536*2^(-i/256)), i = 0..255: index, value", func(i int) uint32 { return exp2Neg[i] }},
	} {
		var b strings.Builder
		fmt.Fprintln(&b, tc.head)
		for i := range 256 {
			fmt.Fprintf(&b, "%d %d\n", i, tc.value(i))
		}
		path := filepath.Join("..", "testdata", "conformance", tc.name)
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

// TestTableClosedForm is issue 25, point 5: SPEC.md 1.4 defines the two
// tables by closed forms that double precision evaluates exactly, with
// their sums as check values. Every entry must be the formula's, at least
// 0.0008 from a half-integer, and the sums those the text gives.
func TestTableClosedForm(t *testing.T) {
	var sumL, sumE uint64
	for i := range 256 {
		l := 256 * math.Log2(1+float64(i)/256)
		e := 65536 * math.Exp2(-float64(i)/256)
		if uint64(math.Round(l)) != uint64(log2Frac[i]) || uint64(math.Round(e)) != uint64(exp2Neg[i]) {
			t.Fatalf("entry %d: %d, %d; the formulas give %v, %v", i, log2Frac[i], exp2Neg[i], l, e)
		}
		if i > 0 && (math.Abs(l-math.Floor(l)-0.5) < 0.0008 || math.Abs(e-math.Floor(e)-0.5) < 0.0008) {
			t.Fatalf("entry %d within 0.0008 of a half-integer: %v, %v", i, l, e)
		}
		sumL += uint64(log2Frac[i])
		sumE += uint64(exp2Neg[i])
	}
	if sumL != 36401 || sumE != 12118596 {
		t.Fatalf("sums %d, %d; SPEC.md 1.4 says 36401, 12118596", sumL, sumE)
	}
}
