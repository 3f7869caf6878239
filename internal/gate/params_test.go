package gate

import (
	"errors"
	"testing"

	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// lam is the Lambda of a 16.16 value.
func lam(l uint32) lambda.Lambda { return lambda.Lambda(l) }

func uniformCum(k int, prec uint) []uint16 {
	c := make([]uint16, k)
	for v := range c {
		c[v] = uint16(v << prec / k)
	}
	return c
}

func TestTableStats(t *testing.T) {
	st := TableStats(uniformCum(4, 16), 16)
	if st.H != 512 || st.Modal != 0 || st.FMax != 1<<14 {
		t.Fatalf("uniform K=4: %+v, want H=512 modal 0", st)
	}
	// One symbol of 2^16−3, three of 1: ⌊(3·4096 + 65533·(4096−4095))/2^16⌋ = 1.
	c := []uint16{0, 1, 2, 3}
	st = TableStats(c, 16)
	if st.Modal != 3 || st.FMax != 1<<16-3 || st.H != 1 {
		t.Fatalf("peaked: %+v", st)
	}
	// Ties go to the lowest index.
	st = TableStats([]uint16{0, 100, 200}, 10)
	if st.Modal != 2 {
		// f = 100, 100, 824
		t.Fatalf("modal %d", st.Modal)
	}
	st = TableStats([]uint16{0, 412, 824}, 10) // 412, 412, 200
	if st.Modal != 0 {
		t.Fatalf("tie: modal %d, want 0", st.Modal)
	}
}

func TestKeep(t *testing.T) {
	// λ=1, ê=1/2, V=1, w=1 → 1/2 bit against H.
	if !keep(1<<16, 1<<15, 1<<16, WeightOne, 128) || keep(1<<16, 1<<15, 1<<16, WeightOne, 129) {
		t.Fatal("threshold at H = 128")
	}
	// The worked example of SPEC.md: uniform distances, V = 0xFFFF.
	if !keep(1<<16, 1<<15, UnitDistance, WeightOne, 127) || keep(1<<16, 1<<15, UnitDistance, WeightOne, 128) {
		t.Fatal("worked example: threshold at H = 127")
	}
	if !keep(0xFFFFFFFE, MaxErr, 0xFFFF, 0xFFFF, 4096) {
		t.Fatal("largest product overflows")
	}
	if keep(0, 0xFFFE, 0xFFFF, 0xFFFF, 1) {
		t.Fatal("λ = 0 keeps")
	}
}

func testParams() *Params {
	g := wm.Geometry{S: 2, M: 3, K: 4}
	p := &Params{Geom: g, Precision: 12, BinShift: 5, BinErr: []uint32{100, NoEstimate, 300000},
		CoordErr: []uint32{1, 2, 3, 4, 5, MaxErr}, SlotNorm: 77, MeanV: 9, Samples: 123}
	p.Dist = make([][]uint16, g.M)
	for i := range p.Dist {
		p.Dist[i] = make([]uint16, g.K*g.K)
		for a := range g.K {
			for b := range g.K {
				if a != b {
					p.Dist[i][a*g.K+b] = uint16(1000*(i+1) + 10*a + b)
				}
			}
		}
	}
	p.Weights = []uint16{256, 0, 512, 256, 256, 1}
	return p
}

func TestParamsRoundTrip(t *testing.T) {
	p := testParams()
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Parse(b, p.Geom, p.Precision)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := q.MarshalBinary()
	if string(c) != string(b) {
		t.Fatal("round trip changes bytes")
	}
	if q.Distance(4, 1, 2) != 2012 || q.Distance(4, 2, 2) != 0 {
		t.Fatalf("distance %d", q.Distance(4, 1, 2))
	}
	for i := range b {
		if _, err := Parse(b[:i], p.Geom, p.Precision); !errors.Is(err, ErrSection) {
			t.Fatalf("prefix of %d bytes: %v", i, err)
		}
	}
	if _, err := Parse(append(b, 0), p.Geom, p.Precision); !errors.Is(err, ErrSection) {
		t.Fatal("trailing byte accepted")
	}
	if _, err := Parse(b, wm.Geometry{S: 2, M: 3, K: 5}, p.Precision); !errors.Is(err, ErrSection) {
		t.Fatal("other geometry accepted")
	}
	// Flag bit 2: the search fill; bit 3 stays reserved.
	p.SearchFill = true
	m, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if m[2] != b[2]|4 || string(m[3:]) != string(b[3:]) {
		t.Fatalf("SearchFill written as flags %#x (without it %#x)", m[2], b[2])
	}
	if q, err := Parse(m, p.Geom, p.Precision); err != nil || !q.SearchFill {
		t.Fatalf("SearchFill not parsed back: %v", err)
	}
	m[2] |= 8
	if _, err := Parse(m, p.Geom, p.Precision); !errors.Is(err, ErrSection) {
		t.Fatal("reserved flag bit 3 accepted")
	}
}

func FuzzParse(f *testing.F) {
	p := testParams()
	b, _ := p.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := Parse(b, p.Geom, p.Precision)
		if err != nil {
			return
		}
		c, err := q.MarshalBinary()
		if err != nil || string(c) != string(b) {
			t.Fatalf("accepted section does not round-trip: %v", err)
		}
		cum := uniformCum(4, 12)
		q.Rule(1<<16).RetainStats(5, TableStats(cum, 12))
		q.Rule(1<<16).RetainStats(5, TwoStepStats(1, 3000, 12, 4))
	})
}

func TestBinKey(t *testing.T) {
	p := &Params{Precision: 16, Axis: AxisModal}
	// The worked examples of SPEC.md: a uniform table over 4 (F = 16384)
	// has key lg(49152) = 3990; frequencies (1, 1, 1, 65533) lg(3) = 406.
	if k := p.binKey(TableStats(uniformCum(4, 16), 16)); k != 3990 {
		t.Fatalf("uniform: key %d, want 3990", k)
	}
	if k := p.binKey(TableStats([]uint16{0, 1, 2, 3}, 16)); k != 406 {
		t.Fatalf("peaked: key %d, want 406", k)
	}
	p.Axis = AxisEntropy
	if k := p.binKey(TableStats(uniformCum(4, 16), 16)); k != 512 {
		t.Fatalf("entropy axis: key %d, want H = 512", k)
	}
}

func TestAxisSelectsBin(t *testing.T) {
	p := testParams()
	p.BinShift = 9
	cum := uniformCum(4, 12) // H = 512: entropy bin 1; lg(3072) = 2966: modal bin 5 → 2
	st := TableStats(cum, 12)
	if e := p.errRate(4, st); e != p.CoordErr[4] {
		t.Fatalf("entropy axis: ê = %d, want the fallback %d", e, p.CoordErr[4])
	}
	p.Axis = AxisModal
	if e := p.errRate(4, st); e != 300000 {
		t.Fatalf("modal axis: ê = %d, want 300000", e)
	}
}

func TestParamsVersions(t *testing.T) {
	p := testParams()
	b1, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if b1[0] != 1 || b1[18] != 0 {
		t.Fatalf("entropy axis written as version %d, axis %d", b1[0], b1[18])
	}
	p.Axis = AxisModal
	b2, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if b2[0] != 2 || b2[18] != 1 {
		t.Fatalf("modal axis written as version %d, axis %d", b2[0], b2[18])
	}
	q, err := Parse(b2, p.Geom, p.Precision)
	if err != nil || q.Axis != AxisModal {
		t.Fatalf("version 2: %v, axis %v", err, q)
	}
	if c, _ := q.MarshalBinary(); string(c) != string(b2) {
		t.Fatal("version 2 round trip changes bytes")
	}
	bad := func(name string, mut func(b []byte)) {
		b := append([]byte(nil), b2...)
		mut(b)
		if _, err := Parse(b, p.Geom, p.Precision); !errors.Is(err, ErrSection) {
			t.Errorf("%s accepted", name)
		}
	}
	bad("version 2 with axis 0", func(b []byte) { b[18] = 0 })
	bad("axis 2", func(b []byte) { b[18] = 2 })
	bad("version 1 with axis 1", func(b []byte) { b[0] = 1 })
	bad("version 3", func(b []byte) { b[0] = 3 })
	bad("byte 19", func(b []byte) { b[19] = 1 })
	p.Axis = 2
	if _, err := p.MarshalBinary(); !errors.Is(err, ErrSection) {
		t.Fatal("axis 2 marshalled")
	}
}

// TestRetainOnePass checks the coder's one-pass rule against
// RetainStats(TwoStepStats(...)) for every frequency, on both bin axes,
// with and without distance tables and weights, at λ from 0 to lossless.
func TestRetainOnePass(t *testing.T) {
	for _, axis := range []Axis{AxisModal, AxisEntropy} {
		for _, uniform := range []bool{false, true} {
			p := testParams()
			p.Axis = axis
			if uniform {
				p.Dist, p.Weights = nil, nil
			}
			p.Prepare()
			K := p.Geom.K
			for _, lambda := range []uint32{0, 1, 1 << 10, 1 << 16, 1 << 24, 0xFFFFFFFE} {
				r := p.Rule(lam(lambda))
				for j := range p.Geom.N() {
					for f := uint32(1); f <= 1<<p.Precision; f++ {
						v := uint16(int(f) % K)
						want := r.RetainStats(j, TwoStepStats(v, f, p.Precision, K))
						if got := r.retain(j, v, f); got != want {
							t.Fatalf("axis %d uniform %v λ %d j %d f %d: retain %v, RetainStats %v", axis, uniform, lambda, j, f, got, want)
						}
					}
				}
			}
		}
	}
}

// TestDistortionCost: the cost of a reconstruction at λ is λ·Σ w·d over
// the differing coordinates, in 1/256 bit, each term capped at the limit.
func TestDistortionCost(t *testing.T) {
	g := wm.Geometry{S: 1, M: 4, K: 4}
	p := &Params{Geom: g, Precision: 12}
	r := p.Rule(3 << 16) // λ = 3 bits a unit of distance
	truth := []uint16{0, 1, 2, 3}
	recon := []uint16{0, 2, 2, 0}                          // two differences, UnitDistance each
	term := uint64(3<<16) * UnitDistance * WeightOne >> 32 // ≈ 3 bits
	if got, want := r.DistortionCost(0, recon, truth, ^uint64(0)), 2*term; got != want {
		t.Errorf("cost %d, want %d", got, want)
	}
	if got, want := r.DistortionCost(0, recon, truth, 2<<8), uint64(2*2<<8); got != want {
		t.Errorf("capped cost %d, want %d", got, want)
	}
	if got := r.DistortionCost(0, truth, truth, ^uint64(0)); got != 0 {
		t.Errorf("cost of the truth %d", got)
	}
	if got := p.Rule(0xFFFFFFFF).DistortionCost(0, recon, truth, ^uint64(0)); got == 0 || got == ^uint64(0) {
		t.Errorf("cost at the largest λ %d", got)
	}
}
