package npz

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var fixtures = filepath.Join("..", "testdata", "npz")

func fixture(name string) string { return filepath.Join(fixtures, name) }

// sameData compares two Data slices exactly, floats by their bits.
func sameData(a, b any) bool {
	switch x := a.(type) {
	case []float32:
		y, ok := b.([]float32)
		return ok && slices.EqualFunc(x, y, func(p, q float32) bool { return math.Float32bits(p) == math.Float32bits(q) })
	case []float64:
		y, ok := b.([]float64)
		return ok && slices.EqualFunc(x, y, func(p, q float64) bool { return math.Float64bits(p) == math.Float64bits(q) })
	case []uint8:
		y, ok := b.([]uint8)
		return ok && slices.Equal(x, y)
	case []uint16:
		y, ok := b.([]uint16)
		return ok && slices.Equal(x, y)
	case []int32:
		y, ok := b.([]int32)
		return ok && slices.Equal(x, y)
	case []int64:
		y, ok := b.([]int64)
		return ok && slices.Equal(x, y)
	}
	return false
}

func sameArray(a, b Array) error {
	if a.Name != b.Name || a.Dtype != b.Dtype || !slices.Equal(a.Shape, b.Shape) {
		return fmt.Errorf("got %s %s %v, want %s %s %v", a.Name, a.Dtype, a.Shape, b.Name, b.Dtype, b.Shape)
	}
	if !sameData(a.Data, b.Data) {
		return fmt.Errorf("%s: data differ: got %v, want %v", a.Name, a.Data, b.Data)
	}
	return nil
}

func sameArrays(t *testing.T, got, want []Array) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d arrays, want %d", len(got), len(want))
	}
	for i := range got {
		if err := sameArray(got[i], want[i]); err != nil {
			t.Error(err)
		}
	}
}

// wantErr checks that err is of kind (and, if set, matches cause) and that
// its message contains every fragment.
func wantErr(t *testing.T, err error, kind, cause error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", kind)
	}
	if !errors.Is(err, kind) {
		t.Errorf("error %q is not %v", err, kind)
	}
	if cause != nil && !errors.Is(err, cause) {
		t.Errorf("error %q is not %v", err, cause)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q spans lines", err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q lacks %q", err, f)
		}
	}
}
