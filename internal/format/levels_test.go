package format

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// gateModel trains a model with a retention gate for eps.
func gateModel(t *testing.T, g wm.Geometry, eps []episode) *wm.Model {
	t.Helper()
	return conformanceModels(t, g, 12, eps)["model-gate.wmm"]
}

// TestLevels writes states at several retention levels: every level's
// states decode to the reconstruction under its own lambda, the Reader
// reports each state's level, and a level that retains more stores more.
func TestLevels(t *testing.T) {
	g := wm.Geometry{S: 3, M: 4, K: 16}
	rng := rand.New(rand.NewPCG(41, 42))
	eps := genEpisodes(rng, g, []int{40, 25, 1, 0, 33})
	m := gateModel(t, g, eps)
	levels := []lambda.Lambda{1 << 12, 4 << 16, LambdaLossless}
	level := func(i, k int) int { return (i + k/5) % len(levels) }
	var buf bytes.Buffer
	w, err := NewWriter(&buf, m, WithLevels(levels...), WithKeyframeInterval(8))
	if err != nil {
		t.Fatal(err)
	}
	n := g.N()
	var cost, retained uint64
	for i, e := range eps {
		if err := w.WriteEpisode(nil); err != nil {
			t.Fatal(err)
		}
		for k, a := range e.Actions {
			if err := w.SetLevel(level(i, k)); err != nil {
				t.Fatal(err)
			}
			if err := w.WriteState(a, e.Codes[k*n:(k+1)*n]); err != nil {
				t.Fatal(err)
			}
			acc := w.LastAccount()
			if acc.Level != level(i, k) || (acc.Level == 2 && acc.Retained != uint64(n)) {
				t.Fatalf("episode %d step %d: account %+v", i, k, acc)
			}
			cost += acc.Cost
			retained += acc.Retained
		}
	}
	if err := w.SetLevel(3); !errors.Is(err, ErrInput) {
		t.Fatalf("level out of range: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	f, err := Open(bytes.NewReader(b), int64(len(b)), m)
	if err != nil {
		t.Fatal(err)
	}
	// A chunk coded losslessly, as no longer than by the rule, replaces
	// the per-state accounts of the rule's coding.
	info := f.Info()
	if fb := w.Account().LosslessChunks; (fb == 0) != (info.IdealCode+info.IdealAct == cost && info.Retained == retained) {
		t.Fatalf("%d chunks coded losslessly; per-state accounts sum to %d bits/2^16 and %d retained, the index says %d and %d",
			fb, cost, retained, info.IdealCode+info.IdealAct, info.Retained)
	}
	r, err := NewReader(bytes.NewReader(b), m)
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Header(); len(h.Levels) != 3 || h.Lambda != LambdaLossless || h.Lossless() {
		t.Fatalf("header levels %v lambda %#x lossless %v", h.Levels, h.Lambda, h.Lossless())
	}
	// Per-level reconstruction: a single-lambda file of each level gives
	// the same state when every state is at that level; here compare the
	// lossless level with the source and count omissions per level.
	omitted := make([]int, len(levels))
	for i := 0; ; i++ {
		if _, err := r.NextEpisode(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for k := 0; ; k++ {
			_, st, err := r.ReadState(nil)
			if err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			l := level(i, k)
			if r.Level() == -1 {
				// A chunk coded losslessly, as no longer than by the
				// rule: its states are the input.
				if !slices.Equal(st, eps[i].Codes[k*n:(k+1)*n]) {
					t.Fatalf("episode %d step %d: a lossless chunk's state differs from the input", i, k)
				}
				continue
			}
			if r.Level() != l {
				t.Fatalf("episode %d step %d: level %d, want %d", i, k, r.Level(), l)
			}
			for j, v := range st {
				if v != eps[i].Codes[k*n+j] {
					omitted[l]++
				}
			}
		}
	}
	if omitted[2] != 0 || omitted[0] <= omitted[1] || omitted[0] == 0 {
		t.Fatalf("wrong coordinates by level %v: want many at level 0, fewer at 1, none at 2 (lossless)", omitted)
	}
	dec, err := decodeAllWays(b, m)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := readAll(b, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameEpisodes(dec, seq); err != nil {
		t.Fatal(err)
	}
}

func TestLevelOptions(t *testing.T) {
	g := wm.Geometry{S: 2, M: 2, K: 8}
	rng := rand.New(rand.NewPCG(43, 44))
	eps := genEpisodes(rng, g, []int{10})
	m := trainModel(g, 12, eps)
	for _, bad := range [][]lambda.Lambda{nil, {5}, {5, 5}, {6, 5}, make([]lambda.Lambda, MaxLevels+1)} {
		if _, err := NewWriter(io.Discard, m, WithLevels(bad...)); !errors.Is(err, ErrInput) {
			t.Fatalf("levels %v: %v", bad, err)
		}
	}
	if _, err := NewWriter(io.Discard, m, WithLevels(1, 2), WithLambda(2)); !errors.Is(err, ErrInput) {
		t.Fatalf("levels and lambda: %v", err)
	}
	// Finite levels need a gate.
	if _, err := NewWriter(io.Discard, m, WithLevels(1, LambdaLossless)); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("levels without a gate: %v", err)
	}
	// Without levels only level 0 exists.
	w, err := NewWriter(io.Discard, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetLevel(0); err != nil {
		t.Fatal(err)
	}
	if err := w.SetLevel(1); !errors.Is(err, ErrInput) {
		t.Fatalf("level 1 of a file without levels: %v", err)
	}
}

// TestFlushIsDurable flushes after every state and cuts the output right
// after each flush: recovery must return every state written before it.
func TestFlushIsDurable(t *testing.T) {
	g := wm.Geometry{S: 2, M: 3, K: 9}
	rng := rand.New(rand.NewPCG(45, 46))
	eps := genEpisodes(rng, g, []int{7, 0, 12, 3})
	m := trainModel(g, 12, eps)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, m, WithKeyframeInterval(5), WithEmbeddedModel(true))
	if err != nil {
		t.Fatal(err)
	}
	n := g.N()
	var want []episode
	check := func() {
		t.Helper()
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		cut := bytes.Clone(buf.Bytes())
		var out bytes.Buffer
		if _, _, err := Recover(&out, bytes.NewReader(cut), int64(len(cut)), nil); err != nil {
			t.Fatalf("after %d episodes: %v", len(want), err)
		}
		got, err := readAll(out.Bytes(), nil)
		if err != nil {
			t.Fatal(err)
		}
		// An episode without states last cannot be told from one whose
		// states were lost: recovery drops it.
		keep := want
		if k := len(keep); k > 0 && len(keep[k-1].Actions) == 0 {
			keep = keep[:k-1]
		}
		if err := sameEpisodes(normalize(got), normalize(keep)); err != nil {
			t.Fatalf("recovered after a flush: %v", err)
		}
	}
	for _, e := range eps {
		if err := w.WriteEpisode(e.Meta); err != nil {
			t.Fatal(err)
		}
		want = append(want, episode{Meta: e.Meta})
		check()
		for k, a := range e.Actions {
			if err := w.WriteState(a, e.Codes[k*n:(k+1)*n]); err != nil {
				t.Fatal(err)
			}
			cur := &want[len(want)-1]
			cur.Actions = append(cur.Actions, a)
			cur.Codes = append(cur.Codes, e.Codes[k*n:(k+1)*n]...)
			if k%2 == 1 {
				check()
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := decodeAllWays(buf.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameEpisodes(got, eps); err != nil {
		t.Fatal(err)
	}
}

// TestDecodeEpisodeMemoryLimit: a decoded episode is held to the memory
// limit before it is decoded.
func TestDecodeEpisodeMemoryLimit(t *testing.T) {
	g := wm.Geometry{S: 4, M: 4, K: 8}
	rng := rand.New(rand.NewPCG(47, 48))
	eps := genEpisodes(rng, g, []int{300})
	m := trainModel(g, 12, eps)
	b := encode(t, m, eps, WithKeyframeInterval(16))
	f, err := Open(bytes.NewReader(b), int64(len(b)), m, WithMaxMemory(8000))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.DecodeEpisode(0); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("episode of 300 states under an 8000-byte limit: %v", err)
	}
	if _, err := f.State(0, 299); err != nil {
		t.Fatalf("one state fits: %v", err)
	}
}

// TestAccessLog records the accesses of a File.
func TestAccessLog(t *testing.T) {
	g := wm.Geometry{S: 2, M: 2, K: 8}
	rng := rand.New(rand.NewPCG(49, 50))
	eps := genEpisodes(rng, g, []int{3, 4})
	m := trainModel(g, 12, eps)
	b := encode(t, m, eps, WithKeyframeInterval(2))
	var got [][2]int64
	f, err := Open(bytes.NewReader(b), int64(len(b)), m, WithAccessLog(func(e, s int64) { got = append(got, [2]int64{e, s}) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.State(1, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := f.State(1, 9); err == nil {
		t.Fatal("step out of range")
	}
	if _, _, err := f.DecodeEpisode(0); err != nil {
		t.Fatal(err)
	}
	want := [][2]int64{{1, 3}, {0, 0}, {0, 1}, {0, 2}}
	if len(got) != len(want) {
		t.Fatalf("log %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("log %v, want %v", got, want)
		}
	}
}
