package train

import (
	"errors"
	"slices"
	"testing"

	"github.com/wmzip/wmzip"
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

func TestRecentStates(t *testing.T) {
	ep := func(t0, n int) wmzip.Episode {
		e := wmzip.Episode{Slots: 2}
		for i := range n {
			e.Actions = append(e.Actions, int64(t0+i))
			e.Codes = append(e.Codes, uint16(t0+i), uint16(t0+i))
		}
		return e
	}
	eps := []wmzip.Episode{ep(0, 3), {}, ep(3, 4), ep(7, 2)}
	if got, copied, err := recentStates(eps, 9); err != nil || copied || &got[0] != &eps[0] {
		t.Fatalf("a bound that does not bind must keep the episodes: %v", err)
	}
	got, copied, err := recentStates(eps, 5)
	if err != nil || !copied {
		t.Fatal(err)
	}
	want := [][]int64{{4, 5, 6}, {7, 8}}
	if len(got) != len(want) {
		t.Fatalf("%d episodes, want %d", len(got), len(want))
	}
	for i, w := range want {
		if !slices.Equal(got[i].Actions, w) || len(got[i].Codes) != 2*len(w) || got[i].Codes[0] != uint16(w[0]) {
			t.Errorf("episode %d: actions %v codes %v, want actions %v", i, got[i].Actions, got[i].Codes, w)
		}
	}
	got[1].Codes[0] = 99
	if eps[3].Codes[0] != 7 {
		t.Error("kept episodes share the caller's arrays")
	}
	if _, _, err := recentStates([]wmzip.Episode{{Actions: []int64{0, 1}, Codes: []uint16{1, 2, 3}}}, 1); !errors.Is(err, wmzip.ErrInput) {
		t.Errorf("codes that make no states: %v, want wmzip.ErrInput", err)
	}
}
