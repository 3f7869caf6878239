package format

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wmzip/wmzip/internal/wm"
)

// distCosts is a SlotCosts of one state: a value v of coordinate j costs
// |v − codes[j]|·unit, so the state's own codes cost nothing.
type distCosts struct {
	codes []uint16
	k     int
	unit  uint32
}

func (c distCosts) Slot(s int, dst []uint32) {
	m := len(dst) / c.k
	for i := range m {
		want := int(c.codes[s*m+i])
		for v := range c.k {
			d := v - want
			if d < 0 {
				d = -d
			}
			dst[i*c.k+v] = uint32(d) * c.unit
		}
	}
}

// writeRD writes eps by rate and distortion at lam and returns the file
// and the reconstruction LastState gave of every state.
func writeRD(t *testing.T, m *wm.Model, eps []episode, lam uint64, opts ...Option) ([]byte, []uint16) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, m, opts...)
	if err != nil {
		t.Fatal(err)
	}
	n := m.Geom.N()
	var recon, last []uint16
	for _, e := range eps {
		if err := w.WriteEpisode(nil); err != nil {
			t.Fatal(err)
		}
		for k, a := range e.Actions {
			codes := e.Codes[k*n : (k+1)*n]
			if err := w.WriteStateRD(a, codes, distCosts{codes, m.Geom.K, DistUnit / 64}, lam); err != nil {
				t.Fatal(err)
			}
			last = w.LastState(last)
			recon = append(recon, last...)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), recon
}

// TestWriteStateRD: a file coded by rate and distortion decodes, with the
// lossless decoder, to the values its writer reported; at λ = 0 those are
// the codes given; larger λ writes fewer bytes; the bytes do not depend on
// the threads, for every level of model.
func TestWriteStateRD(t *testing.T) {
	g := wm.Geometry{S: 4, M: 3, K: 16}
	rng := rand.New(rand.NewPCG(8, 9))
	eps := genEpisodes(rng, g, []int{40, 25})
	base := trainModel(g, 12, genEpisodes(rng, g, []int{60, 60}))
	for _, lv := range []int{wm.LevelFull, wm.LevelCopy, wm.LevelFast} {
		m, err := base.WithLevel(lv)
		if err != nil {
			t.Fatal(err)
		}
		var all []uint16
		for _, e := range eps {
			all = append(all, e.Codes...)
		}
		prev := -1
		for _, lam := range []uint64{1 << 22, 1 << 18, 1 << 14, 0} {
			file, recon := writeRD(t, m, eps, lam, WithKeyframeInterval(16), WithThreads(1))
			two, _ := writeRD(t, m, eps, lam, WithKeyframeInterval(16), WithThreads(2))
			if !bytes.Equal(file, two) {
				t.Errorf("level %d λ %d: bytes differ between one and two threads", lv, lam)
			}
			got, err := readAll(file, m)
			if err != nil {
				t.Fatalf("level %d λ %d: %v", lv, lam, err)
			}
			var dec []uint16
			for _, e := range got {
				dec = append(dec, e.Codes...)
			}
			if !slices.Equal(dec, recon) {
				t.Errorf("level %d λ %d: the decode differs from the writer's reconstruction", lv, lam)
			}
			if lam == 0 && !slices.Equal(dec, all) {
				t.Errorf("level %d: λ 0 changed codes that cost no bits to keep", lv)
			}
			if prev >= 0 && len(file) < prev {
				t.Errorf("level %d λ %d: %d bytes, fewer than the %d of a larger λ", lv, lam, len(file), prev)
			}
			prev = len(file)
		}
	}
}

// TestWriteStateRDRefused: no costs, or a file with a retention gate.
func TestWriteStateRDRefused(t *testing.T) {
	g := wm.Geometry{S: 2, M: 2, K: 8}
	rng := rand.New(rand.NewPCG(1, 1))
	eps := genEpisodes(rng, g, []int{30})
	m := gateModel(t, g, eps)
	codes := eps[0].Codes[:g.N()]
	for name, opts := range map[string][]Option{"no costs": nil, "gated": {WithLambda(1 << 16)}} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, m, opts...)
		if err != nil {
			t.Fatal(err)
		}
		w.WriteEpisode(nil)
		var c SlotCosts = distCosts{codes, g.K, 1}
		if name == "no costs" {
			c = nil
		}
		if err := w.WriteStateRD(0, codes, c, 1); !errors.Is(err, ErrInput) {
			t.Errorf("%s: %v, want ErrInput", name, err)
		}
	}
}
