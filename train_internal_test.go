package wmzip

import (
	"slices"
	"testing"
)

func TestJoinFloats(t *testing.T) {
	base := []float32{1, 2, 3, 4, 5, 6}
	got := joinFloats([][]float32{base[0:2], base[2:5], base[5:6]})
	if &got[0] != &base[0] || len(got) != 6 {
		t.Errorf("contiguous parts were copied: %v", got)
	}
	got = joinFloats([][]float32{base[0:2], base[3:5]})
	if !slices.Equal(got, []float32{1, 2, 4, 5}) || &got[0] == &base[0] {
		t.Errorf("parts with a gap: %v", got)
	}
	got = joinFloats([][]float32{base[0:2], {9}, base[2:3]})
	if !slices.Equal(got, []float32{1, 2, 9, 3}) {
		t.Errorf("parts from two arrays: %v", got)
	}
	if got := joinFloats(nil); got != nil {
		t.Errorf("no parts: %v", got)
	}
}
