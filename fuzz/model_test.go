package fuzz

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/rans"
	"github.com/wmzip/wmzip/internal/wm"
)

// FuzzModel loads arbitrary bytes as a model file. A model is untrusted
// input (files embed it): loading must fail with a model error or give a
// model whose ID is its hash, whose bytes round-trip, whose parsed form is
// proportionate to its bytes, and whose predictor yields valid tables.
func FuzzModel(f *testing.F) {
	for _, b := range seedFiles(f, 64<<10, "conformance/*.wmm") {
		f.Add(b, []byte{1, 2, 3, 0, 7})
	}
	f.Fuzz(func(t *testing.T, b, drive []byte) {
		var m *wm.Model
		var err error
		if n := allocated(func() { m, err = wm.UnmarshalModel(b) }); n > slack+modelAlloc(b) {
			t.Fatalf("loading a model of %d bytes allocated %d", len(b), n)
		}
		if err != nil {
			if !errors.Is(err, wm.ErrModelFormat) && !errors.Is(err, wm.ErrModelVersion) {
				t.Fatalf("error %v is neither ErrModelFormat nor ErrModelVersion", err)
			}
			return
		}
		raw, err := m.MarshalBinary()
		if err != nil || !bytes.Equal(raw, b) {
			t.Fatalf("model does not marshal to its bytes: %v", err)
		}
		// Versions 1 and 2 are their canonical serialization; version 3's
		// ID is that of its canonical serialization, which loads as the
		// same model, and so is version 4's (the fields of version 2 or 3
		// and a level).
		canon := b
		if b[4] >= 3 {
			if canon, err = m.CanonicalBinary(); err != nil {
				t.Fatal(err)
			}
			c, err := wm.UnmarshalModel(canon)
			if err != nil {
				t.Fatalf("canonical serialization does not load: %v", err)
			}
			if c.ID() != m.ID() {
				t.Fatal("canonical serialization has another ID")
			}
		}
		sum := sha256.Sum256(canon)
		if id := m.ID(); !bytes.Equal(id[:], sum[:wm.ModelIDSize]) {
			t.Fatal("model ID is not the hash of its canonical serialization")
		}
		g := m.Geom
		if g.N()*g.K > 1<<16 {
			return // keep each execution quick
		}
		p := m.NewPredictor()
		p.Reset()
		for t0 := 0; t0 < 3; t0++ {
			a := int64(wm.NoAction)
			if t0 < len(drive) {
				a = int64(int8(drive[t0]))
			}
			p.Begin(a)
			for j := range g.N() {
				if top, hit := p.Predict(j); hit > 0 && (int(top) >= g.K || hit < 1<<(m.Precision-1) || hit >= 1<<m.Precision) {
					t.Fatalf("state %d coordinate %d: two-step top %d frequency %d", t0, j, top, hit)
				}
				cum := p.Table()
				if len(cum) != g.K {
					t.Fatalf("table of %d symbols, want K=%d", len(cum), g.K)
				}
				if err := rans.CheckTable(cum, m.Precision); err != nil {
					t.Fatalf("state %d coordinate %d: %v", t0, j, err)
				}
				v := 0
				if k := t0*g.N() + j; k < len(drive) {
					v = int(drive[k]) % g.K
				}
				p.Commit(j, uint16(v))
			}
		}
	})
}

// FuzzBundle loads arbitrary bytes as a bundle (SPEC.md 3.6), as wm
// parses one and as the codec loads one: both fail with a model error
// (never a panic) or give members that marshal back to the same bundle.
func FuzzBundle(f *testing.F) {
	for _, b := range seedFiles(f, 64<<10, "conformance/bundle*.wmm") {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := wm.UnmarshalBundle(b, 64<<20)
		if err != nil {
			if !errors.Is(err, wm.ErrModelFormat) && !errors.Is(err, wm.ErrModelVersion) && !errors.Is(err, wm.ErrModelTooLarge) {
				t.Fatalf("error %v is not a model error", err)
			}
			return
		}
		out, err := wm.MarshalBundle(ms)
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("an accepted bundle does not marshal back to its bytes: %v", err)
		}
		if _, err := wmzip.UnmarshalCodec(b); err != nil {
			t.Fatalf("a valid bundle does not load as a codec: %v", err)
		}
	})
}
