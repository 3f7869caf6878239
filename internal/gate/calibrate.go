package gate

import (
	"errors"
	"fmt"
	"math"

	"github.com/wmzip/wmzip/internal/wm"
)

// CalibOptions configure Calibrate. The zero value gives uniform distances,
// unit weights and the default bins.
type CalibOptions struct {
	// Dist are integer codebook distance tables (opq's DistanceTables(16):
	// one K·K table per subspace, or per coordinate), nil for uniform
	// distances. Entries must be below 2^16.
	Dist [][]uint32
	// SlotNorm is the mean squared norm of a slot vector in the units of
	// Dist (see EmbeddingScale); ignored without Dist.
	SlotNorm float64
	// Weights are optional per-coordinate impact weights (N values ≥ 0),
	// normalized to mean 1 and stored in Q8.
	Weights []float64
	// EntropyBins bins ê on the tables' entropy (GATE version 1, MemoWM's
	// binning) instead of on their modal probability (AxisModal, the
	// default; see Calibrate).
	EntropyBins bool
	// BinShift sets the bin width to 2^BinShift/256 bit (default 5: 1/8 bit
	// of entropy, or 1/8 octave of the table's own error probability).
	BinShift uint
	// PlainError stores the plain error frequency of each bin and
	// coordinate. By default the frequency is weighted by the damage each
	// error did relative to the impact V the table predicted for it (see
	// Calibrate); the two agree under uniform distances.
	PlainError bool
	// Horizon caps how many later steps an error is counted for (default
	// 64; see Calibrate). 1 counts each error once.
	Horizon int
	// Marginal leaves every bin without an estimate, so that ê is each
	// coordinate's own marginal error rate however confident its table
	// (the Static-e ablation, as a gate any decoder reads). With
	// SearchFill it keeps a memory findable at low rates: the binned ê
	// omits confident predictions first, and a confident wrong one (a new
	// page predicted as the last) moves a state far from its neighbours.
	// Alone it does not: the default fills spoil the states it saves
	// (docs/results-retrieval.md).
	Marginal bool
	// SearchFill sets the gate's fill for memories that are searched
	// (Params.SearchFill, GATE flag bit 2). With Marginal, it is the gate
	// of `wmzip train --gate-for search`: at 0.15 of the lossless rate
	// its memories kept 0.84 of the lossless memory's state recall@10 on
	// web embeddings, where the default gate's keep under a half
	// (docs/results-retrieval.md).
	SearchFill bool
	// MinSamples is the fewest calibration samples a bin needs for its
	// pooled estimate (default 64); sparser bins fall back to the
	// coordinate's marginal error rate, as MemoWM's text prescribes.
	MinSamples int
}

// Calibrate fits the gate's Params to held-out episodes, which it runs
// through the model's predictor with the true history (lossless coding):
// per bin and per coordinate it measures how often the modal value is
// wrong, weighted by how much damage the error would do:
//
//	ê = Σ D(v̂, v)·L / Σ V_j   over the samples of the bin (or coordinate)
//
// where D(v̂, v) is the distance between the modal and the true code (0 when
// right), V_j the impact the table predicted, and L the number of steps the
// error would last: 1 plus the number of following steps of the episode
// over which the true code stays v (at most Horizon−1), since the world
// model carries an omitted value forward for as long as the content it
// replaced persists, while a transient code (observation noise) reverts
// at the next step. With exact impacts and L = 1 this is the error
// frequency; the weights correct ê·V to the damage actually observed in
// closed loop (a smoothed table's tail overstates the distance of the
// errors that occur; a persistent error costs more than a transient one).
// PlainError gives the plain frequency. Floating point is used only here;
// the result is integer.
//
// By default the bins are taken on the probability 1 − F/2^P the table
// itself gives to its modal value being wrong, in eighths of an octave
// (AxisModal): a reliability diagram of the model's own confidence. Tables
// of one entropy differ in how their remaining mass is spread, and with it
// in how often their modal value is wrong; binning on the entropy
// (EntropyBins, AxisEntropy) pools them.
func Calibrate(m *wm.Model, eps []wm.Episode, opt CalibOptions) (*Params, error) {
	g, n := m.Geom, m.Geom.N()
	if opt.BinShift == 0 {
		opt.BinShift = 5
	}
	if opt.MinSamples == 0 {
		opt.MinSamples = 64
	}
	if opt.Horizon == 0 {
		opt.Horizon = 64
	}
	if opt.BinShift > 16 || opt.MinSamples < 1 {
		return nil, errors.New("gate: BinShift or MinSamples out of range")
	}
	p := &Params{Geom: g, Precision: m.Precision, BinShift: opt.BinShift, Axis: AxisModal, SearchFill: opt.SearchFill}
	if opt.EntropyBins {
		p.Axis = AxisEntropy
	}
	// Neither the entropy nor lg(2^prec − F) exceeds 256·prec (1/256 bit).
	nb := int(256*m.Precision)>>opt.BinShift + 1
	if nb > MaxBins {
		return nil, fmt.Errorf("gate: %d bins exceed %d", nb, MaxBins)
	}
	if opt.Dist != nil {
		if len(opt.Dist) != g.M && len(opt.Dist) != n {
			return nil, fmt.Errorf("gate: %d distance tables, want %d or %d", len(opt.Dist), g.M, n)
		}
		p.Dist = make([][]uint16, len(opt.Dist))
		for i, t := range opt.Dist {
			if len(t) != g.K*g.K {
				return nil, fmt.Errorf("gate: distance table %d has %d entries, want %d", i, len(t), g.K*g.K)
			}
			p.Dist[i] = make([]uint16, len(t))
			for c, v := range t {
				if v > UnitDistance {
					return nil, fmt.Errorf("gate: distance %d does not fit 16 bits", v)
				}
				p.Dist[i][c] = uint16(v)
			}
		}
		p.SlotNorm = uint64(math.Round(opt.SlotNorm))
	} else {
		p.SlotNorm = uint64(g.M) * UnitDistance
	}
	if opt.Weights != nil {
		if len(opt.Weights) != n {
			return nil, fmt.Errorf("gate: %d weights for %d coordinates", len(opt.Weights), n)
		}
		var s float64
		for _, w := range opt.Weights {
			if !(w >= 0) || math.IsInf(w, 0) {
				return nil, fmt.Errorf("gate: weight %v is not a finite non-negative number", w)
			}
			s += w
		}
		if s <= 0 {
			return nil, errors.New("gate: weights sum to zero")
		}
		mean := s / float64(n)
		p.Weights = make([]uint16, n)
		for j, w := range opt.Weights {
			p.Weights[j] = uint16(math.Min(math.Round(w/mean*WeightOne), 0xFFFF))
		}
	}
	p.Prepare()
	binN, binE := make([]uint64, nb), make([]uint64, nb)
	crdN, crdE := make([]uint64, n), make([]uint64, n)
	binD, binV := make([]float64, nb), make([]float64, nb)
	crdD, crdV := make([]float64, n), make([]float64, n)
	var sumV float64
	pr := m.NewPredictor()
	for i, e := range eps {
		if len(e.Codes) != len(e.Actions)*n {
			return nil, fmt.Errorf("gate: episode %d: %d codes for %d actions", i, len(e.Codes), len(e.Actions))
		}
		pr.Reset()
		// run[t·n+j]: following steps over which code j keeps its value.
		run := make([]uint16, len(e.Codes))
		for t := len(e.Actions) - 2; t >= 0; t-- {
			for j := range n {
				if e.Codes[(t+1)*n+j] == e.Codes[t*n+j] {
					run[t*n+j] = min(run[(t+1)*n+j]+1, uint16(max(opt.Horizon-1, 0)))
				}
			}
		}
		for t, a := range e.Actions {
			pr.Begin(a)
			codes := e.Codes[t*n : (t+1)*n]
			for j := 0; j < n; j++ {
				// A model with slot events (the fast level) codes a slot
				// its event copies whole, with no coordinate the gate
				// decides, as the container's writer does (SPEC.md 6.9).
				if j%g.M == 0 && pr.CopySlot(j, codes[j:j+g.M]) {
					j += g.M - 1
					continue
				}
				v := codes[j]
				pr.Predict(j)
				st := PredStats(pr)
				b := min(int(p.binKey(st)>>p.BinShift), nb-1)
				binN[b]++
				crdN[j]++
				iv := float64(p.impact(j, st))
				if st.Modal != v {
					binE[b]++
					crdE[j]++
					d := float64(p.Distance(j, st.Modal, v)) * float64(1+run[t*n+j])
					binD[b] += d
					crdD[j] += d
				}
				binV[b] += iv
				crdV[j] += iv
				sumV += iv
				pr.Commit(j, v)
			}
		}
	}
	p.BinErr = make([]uint32, nb)
	for b := range nb {
		if binN[b] < uint64(opt.MinSamples) || opt.Marginal {
			p.BinErr[b] = NoEstimate
			continue
		}
		p.BinErr[b] = q16(rate(binE[b], binN[b], binD[b], binV[b], opt.PlainError))
	}
	p.CoordErr = make([]uint32, n)
	for j := range n {
		p.CoordErr[j] = q16(rate(crdE[j], crdN[j], crdD[j], crdV[j], opt.PlainError))
		p.Samples += crdN[j]
	}
	if p.Samples > 0 {
		p.MeanV = uint32(math.Round(sumV / float64(p.Samples)))
	}
	return p, p.validate()
}

// rate is the calibrated error probability of a bin or coordinate with n
// samples, e errors of total distance d, and total predicted impact v.
func rate(e, n uint64, d, v float64, plain bool) float64 {
	if plain || v <= 0 {
		return (float64(e) + 0.5) / (float64(n) + 1)
	}
	// Same prior as the plain rate: half an error of the mean impact.
	return (d + 0.5*v/float64(n)) / (v + v/float64(n))
}

// q16 rounds a rate to Q16 in [1, MaxErr].
func q16(x float64) uint32 {
	return uint32(min(max(math.Round(x*65536), 1), MaxErr))
}

// Apply returns a copy of m carrying p as its GATE section (a new model ID).
func Apply(m *wm.Model, p *Params) (*wm.Model, error) {
	b, err := p.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return m.WithSection(Tag, b)
}

// EmbeddingScale estimates how many distance-table units one squared unit
// of embedding space is worth, from pairs of states: states holds whole
// states of N codes; decode turns one state into its S slot vectors of dim
// floats. It returns that scale and the mean squared norm of a decoded slot
// vector in table units (CalibOptions.SlotNorm).
func EmbeddingScale(dist [][]uint32, g wm.Geometry, states []uint16, dim int, decode func(state []uint16, out []float32) error) (scale, slotNorm float64, err error) {
	n := g.N()
	ns := len(states) / n
	if ns < 2 {
		return 0, 0, errors.New("gate: need at least two states")
	}
	a, b := make([]float32, g.S*dim), make([]float32, g.S*dim)
	var sumT, sumF, sumN float64
	step := max(1, ns/512)
	count := 0
	for i := 0; i+step < ns; i += step {
		sa, sb := states[i*n:(i+1)*n], states[(i+step)*n:(i+step+1)*n]
		if err := decode(sa, a); err != nil {
			return 0, 0, err
		}
		if err := decode(sb, b); err != nil {
			return 0, 0, err
		}
		for k := range a {
			x := float64(a[k]) - float64(b[k])
			sumF += x * x
			sumN += float64(a[k]) * float64(a[k])
		}
		for j := range n {
			t := dist[j%len(dist)]
			sumT += float64(t[int(sa[j])*g.K+int(sb[j])])
		}
		count += g.S
	}
	if sumF == 0 {
		return 0, 0, errors.New("gate: decoded vectors do not differ")
	}
	scale = sumT / sumF
	return scale, sumN / float64(count) * scale, nil
}
