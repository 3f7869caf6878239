package wm

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/rans"
)

// synth makes episodes with persistence, revisits and noise.
func synth(seed uint64, g Geometry, eps, steps int) []Episode {
	r := rand.New(rand.NewPCG(seed, 1))
	pages := make([][]uint16, 12)
	for i := range pages {
		pages[i] = make([]uint16, g.N())
		for j := range pages[i] {
			pages[i][j] = uint16(r.IntN(g.K))
		}
	}
	var out []Episode
	for range eps {
		var e Episode
		cur := r.IntN(len(pages))
		for t := range steps {
			a := int64(r.IntN(3))
			if t == 0 {
				a = NoAction
			} else if a == 0 {
				cur = r.IntN(len(pages))
			}
			st := append([]uint16(nil), pages[cur]...)
			for j := range st {
				if r.IntN(50) == 0 {
					st[j] = uint16(r.IntN(g.K))
				}
			}
			e.Codes = append(e.Codes, st...)
			e.Actions = append(e.Actions, a)
		}
		out = append(out, e)
	}
	return out
}

func checkTable(t *testing.T, cum []uint16, k int, prec uint) {
	t.Helper()
	if len(cum) != k || cum[0] != 0 {
		t.Fatalf("table len %d first %d", len(cum), cum[0])
	}
	for i := 1; i < k; i++ {
		if cum[i] <= cum[i-1] {
			t.Fatalf("table not strictly increasing at %d: %v", i, cum)
		}
	}
	if uint32(cum[k-1]) >= 1<<prec {
		t.Fatalf("last entry %d >= 2^%d", cum[k-1], prec)
	}
}

// run drives a predictor over episodes and returns the concatenated tables.
func run(t *testing.T, m *Model, eps []Episode) []byte {
	p := m.NewPredictor()
	n := m.Geom.N()
	var out []byte
	for _, e := range eps {
		p.Reset()
		for s := range e.Actions {
			p.Begin(e.Actions[s])
			for j := range n {
				v := e.Codes[s*n+j]
				if _, cum := predictTable(p, j, v, &out); cum != nil {
					checkTable(t, cum, m.Geom.K, m.Precision)
				}
				p.Commit(j, v)
			}
		}
	}
	return out
}

func TestTrainDeterministic(t *testing.T) {
	g := Geometry{S: 4, M: 8, K: 16}
	eps := synth(1, g, 5, 30)
	a, err := Train(g, eps, TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Train(g, eps, TrainOptions{})
	ab, _ := a.MarshalBinary()
	bb, _ := b.MarshalBinary()
	if !bytes.Equal(ab, bb) || a.ID() != b.ID() {
		t.Fatal("training is not deterministic")
	}
	test := synth(2, g, 2, 30)
	if !bytes.Equal(run(t, a, test), run(t, b, test)) {
		t.Fatal("predictions differ between identical models")
	}
}

func TestPredictorLearns(t *testing.T) {
	g := Geometry{S: 4, M: 8, K: 16}
	m, err := Train(g, synth(1, g, 6, 40), TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A state repeated many times must become cheap.
	p := m.NewPredictor()
	st := synth(3, g, 1, 1)[0].Codes
	var last float64
	for i := range 6 {
		p.Begin(1)
		var bits float64
		for j, v := range st {
			bits += predict(p, j, v, nil)
			p.Commit(j, v)
		}
		last = bits
		_ = i
	}
	if last > 0.2*float64(g.N()) {
		t.Fatalf("a state seen 5 times still costs %.1f bits", last)
	}
}

func TestResetIsFresh(t *testing.T) {
	g := Geometry{S: 2, M: 4, K: 8}
	eps := synth(4, g, 3, 10)
	m, _ := Train(g, eps, TrainOptions{})
	p := m.NewPredictor()
	// The tables after Reset must not depend on what came before.
	one := run(t, m, eps[:1])
	p2 := run(t, m, eps[1:2])
	both := run(t, m, eps[:2])
	if !bytes.Equal(both, append(one, p2...)) {
		t.Fatal("Reset does not restore the fresh state")
	}
	_ = p
}

func TestUnmarshalRejects(t *testing.T) {
	g := Geometry{S: 2, M: 4, K: 8}
	m, _ := Train(g, synth(5, g, 2, 5), TrainOptions{})
	b, _ := m.MarshalBinary()
	if _, err := UnmarshalModel(b); err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		if _, err := UnmarshalModel(b[:n]); err == nil {
			t.Fatalf("truncation to %d bytes accepted", n)
		}
	}
	bad := append([]byte(nil), b...)
	bad[4] = 9
	if _, err := UnmarshalModel(bad); !errors.Is(err, ErrModelVersion) {
		t.Fatalf("version: %v", err)
	}
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x55
		m2, err := UnmarshalModel(c)
		if err == nil && m2.ID() == m.ID() {
			t.Fatalf("flip at %d kept the ID", i)
		}
	}
}

func TestTrainRejects(t *testing.T) {
	g := Geometry{S: 2, M: 2, K: 4}
	if _, err := Train(g, nil, TrainOptions{}); err == nil {
		t.Fatal("no states accepted")
	}
	if _, err := Train(g, []Episode{{Codes: []uint16{0, 1, 2, 9}, Actions: []int64{-1}}}, TrainOptions{}); err == nil {
		t.Fatal("code >= K accepted")
	}
	if _, err := Train(Geometry{S: 0, M: 2, K: 4}, nil, TrainOptions{}); err == nil {
		t.Fatal("bad geometry accepted")
	}
	if _, err := Train(g, []Episode{{Codes: []uint16{0, 1, 2}, Actions: []int64{-1}}}, TrainOptions{}); err == nil {
		t.Fatal("ragged codes accepted")
	}
}

// TestLog2Q8 checks the exported lg against examples of SPEC.md 1.4.
func TestLog2Q8(t *testing.T) {
	for _, c := range []struct {
		x    uint64
		want int32
	}{{1, 0}, {2, 256}, {3, 406}, {4, 512}, {65536, 4096}} {
		if got := Log2Q8(c.x); got != c.want {
			t.Errorf("Log2Q8(%d) = %d, want %d", c.x, got, c.want)
		}
	}
}

func log2(x float64) float64 { return math.Log2(x) }

func TestSections(t *testing.T) {
	g := Geometry{S: 2, M: 4, K: 8}
	m, _ := Train(g, synth(5, g, 2, 5), TrainOptions{})
	m2, err := m.WithSection("GATE", []byte("calibration"))
	if err != nil {
		t.Fatal(err)
	}
	m3, err := m2.WithSection("OPQ ", []byte("quantizer"))
	if err != nil {
		t.Fatal(err)
	}
	if m2.ID() == m.ID() || m3.ID() == m2.ID() {
		t.Fatal("a section does not change the ID")
	}
	b, _ := m3.MarshalBinary()
	back, err := UnmarshalModel(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID() != m3.ID() || string(back.Section("GATE")) != "calibration" || string(back.Section("OPQ ")) != "quantizer" || back.Section("NONE") != nil {
		t.Fatal("sections do not round-trip")
	}
	if _, err := m.WithSection("TOOLONG", nil); err == nil {
		t.Fatal("bad tag accepted")
	}
	if _, err := UnmarshalModel(append(b, 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func TestPredictorSteadyStateAllocs(t *testing.T) {
	g := Geometry{S: 4, M: 8, K: 16}
	eps := synth(7, g, 3, 20)
	m, _ := Train(g, eps, TrainOptions{})
	p := m.NewPredictor()
	e := eps[0]
	n := g.N()
	run := func() {
		p.Reset()
		for s := range e.Actions {
			p.Begin(e.Actions[s])
			for j := range n {
				predict(p, j, e.Codes[s*n+j], nil)
				p.Commit(j, e.Codes[s*n+j])
			}
		}
	}
	run() // warm up buffers
	if a := testing.AllocsPerRun(3, run); a > 0 {
		t.Errorf("%.0f allocations per chunk in the steady state", a)
	}
}

// TestModalFreqFresh checks that the modal value reported for every
// coordinate is that of its own prediction, across states and Resets: a
// value cached for one coordinate must not outlive it.
func TestModalFreqFresh(t *testing.T) {
	g := Geometry{S: 4, M: 8, K: 16}
	eps := synth(9, g, 3, 12)
	m, err := Train(g, eps, TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := m.NewPredictor()
	n := g.N()
	for _, e := range eps {
		p.Reset()
		for s := range e.Actions {
			p.Begin(e.Actions[s])
			for j := range n {
				top, hit := p.Predict(j)
				v, f := p.ModalFreq()
				if hit > 0 {
					if v != top || f != hit {
						t.Fatalf("state %d coordinate %d: modal %d/%d, two-step %d/%d", s, j, v, f, top, hit)
					}
				} else {
					cum := p.Table()
					// The first value of highest frequency, by a plain scan.
					w, bf := 0, uint32(0)
					for x := range cum {
						if f := rans.Freq(cum, x, m.Precision); f > bf {
							w, bf = x, f
						}
					}
					if int(v) != w || f != rans.Freq(cum, w, m.Precision) {
						t.Fatalf("state %d coordinate %d: modal %d/%d, table's %d", s, j, v, f, w)
					}
				}
				p.Commit(j, e.Codes[s*n+j])
			}
		}
	}
}

// TestModelIDFormat: %x of a ModelID prints its 32 hex digits, not the hex
// of its String (issue 15, point 6).
func TestModelIDFormat(t *testing.T) {
	var id ModelID
	for i := range id {
		id[i] = byte(i * 17)
	}
	want := id.String()
	for _, f := range []string{"%v", "%s", "%x"} {
		if got := fmt.Sprintf(f, id); got != want {
			t.Errorf("%s: %q, want %q", f, got, want)
		}
	}
	if got := fmt.Sprintf("%X", id); got != strings.ToUpper(want) {
		t.Errorf("%%X: %q", got)
	}
}
