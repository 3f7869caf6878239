package npz

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestActionsAnyInt64 writes and reads back actions across the whole int64
// range, as a .wmz file may hold (SPEC.md 6.10 codes any i64): whole and
// streaming, int32 when every action fits and int64 otherwise.
func TestActionsAnyInt64(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		actions []int64
		dtype   string
	}{
		{[]int64{-1, -300, -2, math.MinInt32, math.MaxInt32}, "int32"},
		{[]int64{-1, math.MinInt64, -300, math.MaxInt64}, "int64"},
		{[]int64{-1, 0, math.MinInt32 - 1}, "int64"},
	} {
		T := len(tc.actions)
		tr := &Trajectory{T: T, Codes: make([]uint16, 2*T), S: 1, M: 2, CodesDtype: "uint8", Actions: tc.actions, HasActions: true}
		whole, stream := filepath.Join(dir, "whole.npz"), filepath.Join(dir, "stream.npz")
		if err := WriteTrajectory(whole, tr); err != nil {
			t.Fatal(err)
		}
		if err := writeStreaming(rng, stream, tr); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(whole)
		b, _ := os.ReadFile(stream)
		if !bytes.Equal(a, b) {
			t.Fatalf("%v: CreateTrajectory and WriteTrajectory differ", tc.actions)
		}
		arrays, err := ReadNPZ(whole)
		if err != nil {
			t.Fatal(err)
		}
		for _, ar := range arrays {
			if ar.Name == NameActions && ar.Dtype != tc.dtype {
				t.Errorf("%v: written as %s, want %s", tc.actions, ar.Dtype, tc.dtype)
			}
		}
		got, err := ReadTrajectory(whole)
		if err != nil {
			t.Fatal(err)
		}
		sgot, err := readStreaming(rng, whole)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Actions, tc.actions) || !slices.Equal(sgot.Actions, tc.actions) {
			t.Fatalf("read back %v and %v, want %v", got.Actions, sgot.Actions, tc.actions)
		}
	}
}
