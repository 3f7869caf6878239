package bench

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"sort"
	"text/tabwriter"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/internal/knn"
	"github.com/wmzip/wmzip/internal/policy"
	"github.com/wmzip/wmzip/search"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// RetrievalConfig sets up `wmzip bench retrieval`: nearest-neighbour
// recall against exact float ground truth, for memories stored at several
// rates.
type RetrievalConfig struct {
	RD           RDConfig  // with Model (a gate and a quantizer) and Traj (with obs)
	SlotQueries  int       // slot vector queries (default 1,000)
	StateQueries int       // state queries (default 200)
	K            int       // recall@K (default 10)
	Policies     bool      // also the other policies of bench rd
	Lambdas      []float64 // λ of the rule (nil: powers of two from 2^14 down to 2^-4)
}

// RetrievalPoint is one memory's recall.
type RetrievalPoint struct {
	Policy       string  `json:"policy"`
	Knob         float64 `json:"knob"`
	BitsPerState float64 `json:"bits_per_state"`
	RateRatio    float64 `json:"rate_vs_lossless"`
	Cosine       float64 `json:"cosine"`
	SlotRecall   float64 `json:"slot_recall"`
	StateRecall  float64 `json:"state_recall"`
	// Tie-aware recall: a result counts when its exact float distance is
	// at most that of the exact K-th neighbour, so that among exactly
	// equal vectors (repeated screens) any K serve.
	SlotRecallTies  float64 `json:"slot_recall_ties"`
	StateRecallTies float64 `json:"state_recall_ties"`
}

// RetrievalReport is the outcome of a retrieval benchmark.
type RetrievalReport struct {
	Input        string           `json:"input"`
	ModelID      string           `json:"model_id"`
	MemoryStates int              `json:"memory_states"`
	SlotQueries  int              `json:"slot_queries"`
	StateQueries int              `json:"state_queries"`
	K            int              `json:"k"`
	Points       []RetrievalPoint `json:"points"`
	// AtRate is the rule's best state recall at most 0.15× the lossless
	// rate, over the lossless memory's (the bar), and its slot
	// recall likewise.
	StateRecallAt015 float64 `json:"rule_state_recall_at_0_15x_vs_lossless"`
	SlotRecallAt015  float64 `json:"rule_slot_recall_at_0_15x_vs_lossless"`
}

// Retrieval runs the benchmark: the input's last episodes (a sixth, at
// least one) are queries, the others the memory; every memory is
// searched by ADC on its codes (package search), and recall@K is the
// fraction of the exact float K nearest neighbours (of the observations
// the memory was quantized from) found.
func Retrieval(c RetrievalConfig, logf func(string, ...any)) (*RetrievalReport, error) {
	if c.SlotQueries == 0 {
		c.SlotQueries = 1000
	}
	if c.StateQueries == 0 {
		c.StateQueries = 200
	}
	if c.K == 0 {
		c.K = 10
	}
	tr := c.RD.Traj
	if c.RD.Model == nil || tr.Obs == nil {
		return nil, fmt.Errorf("%s: retrieval needs float obs and a model with a quantizer and a gate (-m)", c.RD.Input)
	}
	s, err := PrepareRD(c.RD, logf)
	if err != nil {
		return nil, err
	}
	if s.q == nil {
		return nil, fmt.Errorf("%s: the model has no quantizer", c.RD.Input)
	}
	cv, err := wmzip.NewCodec(s.m)
	if err != nil {
		return nil, err
	}
	codec := cv
	eps := tr.Episodes()
	if len(eps) < 2 {
		return nil, fmt.Errorf("%s: %d episodes; retrieval needs at least 2 (memory and queries)", c.RD.Input, len(eps))
	}
	hold := max(1, len(eps)/6)
	memEps := eps[:len(eps)-hold]
	memStates := memEps[len(memEps)-1][1]
	var lens, first []int
	for _, e := range memEps {
		lens, first = append(lens, e[1]-e[0]), append(first, e[0])
	}
	S, d := tr.ObsS, tr.ObsD
	qFrom, qTo := eps[len(eps)-hold][0], eps[len(eps)-1][1]
	slotQ, stateQ := evenly(c.SlotQueries, (qTo-qFrom)*S), evenly(c.StateQueries, qTo-qFrom)
	rep := &RetrievalReport{Input: c.RD.Input, ModelID: s.m.ID().String(), MemoryStates: memStates, SlotQueries: len(slotQ), StateQueries: len(stateQ), K: c.K}
	var sq, stq []search.Query
	for _, i := range slotQ {
		v := qFrom*S + i
		sq = append(sq, search.Query{Vectors: tr.Obs[v*d : (v+1)*d]})
	}
	for _, i := range stateQ {
		t := qFrom + i
		stq = append(stq, search.Query{Vectors: tr.Obs[t*S*d : (t+1)*S*d]})
	}
	mem := tr.Obs[:memStates*S*d]
	truthSlot, kthSlot := knn.Exact(sq, mem, d, c.K)
	truthState, kthState := knn.Exact(stq, mem, d*S, c.K)
	logf("memory: %d states; %d slot and %d state queries from %d held-out episodes", memStates, len(sq), len(stq), hold)
	measure := func(pt *RDPoint) error {
		n := s.m.Geom.N()
		ix, err := search.FromCodes(codec, lens, pt.recon[:memStates*n], -1)
		if err != nil {
			return err
		}
		m, err := search.NewMemory(codec, ix)
		if err != nil {
			return err
		}
		rs, err := m.Search(context.Background(), sq, search.Options{K: c.K})
		if err != nil {
			return err
		}
		rt, err := m.Search(context.Background(), stq, search.Options{K: c.K, States: true})
		if err != nil {
			return err
		}
		p := RetrievalPoint{Policy: pt.Policy, Knob: pt.Knob, BitsPerState: pt.BitsPerState, Cosine: pt.Cosine,
			SlotRecall: recall(rs, truthSlot, first, S, false), StateRecall: recall(rt, truthState, first, S, true),
			SlotRecallTies:  tieRecall(rs, sq, kthSlot, mem, d, 1, first, S, false, c.K),
			StateRecallTies: tieRecall(rt, stq, kthState, mem, d, S, first, S, true, c.K)}
		rep.Points = append(rep.Points, p)
		logf("%-11s knob %-9.4g %8.1f bits/state  cosine %.4f  slot recall@%d %.3f (ties %.3f)  state recall@%d %.3f (ties %.3f)",
			p.Policy, p.Knob, p.BitsPerState, p.Cosine, c.K, p.SlotRecall, p.SlotRecallTies, c.K, p.StateRecall, p.StateRecallTies)
		return nil
	}
	ll, err := s.run("", 0)
	if err != nil {
		return nil, err
	}
	if err := measure(ll); err != nil {
		return nil, err
	}
	pols := []policy.Policy{policy.Rule}
	if c.Policies {
		pols = policy.All()
	}
	for _, pol := range pols {
		knobs := coarseKnobs(pol)
		if pol == policy.Rule {
			knobs = c.Lambdas
			for k := 14.0; k >= -4 && c.Lambdas == nil; k-- {
				knobs = append(knobs, math.Exp2(k))
			}
		}
		for _, x := range knobs {
			pt, err := s.run(pol, knobValue(pol, x))
			if err != nil {
				return nil, err
			}
			pt.Knob = x
			if err := measure(pt); err != nil {
				return nil, err
			}
			if pt.Retained < 0.002 {
				break
			}
		}
	}
	lossless := rep.Points[0]
	for i := range rep.Points {
		p := &rep.Points[i]
		p.RateRatio = p.BitsPerState / lossless.BitsPerState
		if p.Policy == string(policy.Rule) && p.RateRatio <= 0.15 {
			rep.StateRecallAt015 = max(rep.StateRecallAt015, p.StateRecall/lossless.StateRecall)
			rep.SlotRecallAt015 = max(rep.SlotRecallAt015, p.SlotRecall/lossless.SlotRecall)
		}
	}
	return rep, nil
}

// evenly returns n indices spread evenly over [0, total), or all of them.
func evenly(n, total int) []int {
	n = min(n, total)
	out := make([]int, n)
	for i := range out {
		out[i] = int(int64(i) * int64(total) / int64(n))
	}
	return out
}

// tieRecall is the mean fraction of K results whose exact distance is at
// most the exact K-th neighbour's.
func tieRecall(res [][]search.Result, qs []search.Query, kth []float64, mem []float32, d, per int, first []int, S int, states bool, k int) float64 {
	var sum float64
	for i, rs := range res {
		found := 0
		for _, r := range rs {
			if knn.SqDist(qs[i].Vectors, mem, d*per, position(r, first, S, states)) <= kth[i] {
				found++
			}
		}
		sum += float64(found) / float64(k)
	}
	return sum / float64(len(res))
}

// recall is the mean fraction of the true neighbours found.
func recall(res [][]search.Result, truth [][]int, first []int, S int, states bool) float64 {
	var sum float64
	for i, rs := range res {
		want := map[int]bool{}
		for _, t := range truth[i] {
			want[t] = true
		}
		// Memory episodes are numbered in file order; positions count
		// states from the first.
		found := 0
		for _, r := range rs {
			if want[position(r, first, S, states)] {
				found++
			}
		}
		sum += float64(found) / float64(len(truth[i]))
	}
	return sum / float64(len(res))
}

// position is a result's place among the memory's slot vectors or
// states; first holds each episode's first state.
func position(r search.Result, first []int, S int, states bool) int {
	st := first[r.Episode] + r.Step
	if states {
		return st
	}
	return st*S + r.Slot
}

// PrintRetrieval prints a report as a table.
func PrintRetrieval(w io.Writer, rep *RetrievalReport) {
	fmt.Fprintf(w, "%s: memory of %d states (model %s); recall@%d of %d slot and %d state queries against exact float neighbours\n",
		rep.Input, rep.MemoryStates, rep.ModelID, rep.K, rep.SlotQueries, rep.StateQueries)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tknob\tbits/state\tvs lossless\tcosine\tslot recall\tstate recall\tslot, ties\tstate, ties\t")
	for _, p := range rep.Points {
		fmt.Fprintf(tw, "%s\t%.4g\t%.1f\t%.3fx\t%.4f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", p.Policy, p.Knob, p.BitsPerState, p.RateRatio, p.Cosine, p.SlotRecall, p.StateRecall, p.SlotRecallTies, p.StateRecallTies)
	}
	tw.Flush()
	fmt.Fprintf(w, "rule at ≤ 0.15x the lossless rate: state recall %.3f, slot recall %.3f of the lossless memory's\n", rep.StateRecallAt015, rep.SlotRecallAt015)
}

// PlotRetrieval draws state and slot recall@K against bits/state, one
// line per policy, the lossless memory as a cross.
func PlotRetrieval(path string, rep *RetrievalReport) error {
	cols := []color.RGBA{{R: 200, A: 255}, {G: 140, A: 255}, {B: 200, A: 255}, {R: 200, G: 140, A: 255}, {R: 140, B: 160, A: 255}, {R: 90, G: 90, B: 90, A: 255}}
	panel := func(ylabel string, y func(RetrievalPoint) float64, legend bool) (*plot.Plot, error) {
		p := plot.New()
		p.X.Label.Text = "bits/state"
		p.Y.Label.Text = ylabel
		var order []string
		byPol := map[string]plotter.XYs{}
		for _, pt := range rep.Points {
			if _, ok := byPol[pt.Policy]; !ok {
				order = append(order, pt.Policy)
			}
			byPol[pt.Policy] = append(byPol[pt.Policy], plotter.XY{X: pt.BitsPerState, Y: y(pt)})
		}
		for i, pol := range order {
			xy := byPol[pol]
			sort.Slice(xy, func(a, b int) bool { return xy[a].X < xy[b].X })
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, err
			}
			sc.Color = cols[i%len(cols)]
			p.Add(sc)
			if len(xy) > 1 {
				l, err := plotter.NewLine(xy)
				if err != nil {
					return nil, err
				}
				l.Color = cols[i%len(cols)]
				p.Add(l)
				if legend {
					p.Legend.Add(pol, l, sc)
				}
			} else if legend {
				sc.Shape = draw.CrossGlyph{}
				sc.Radius = vg.Points(5)
				p.Legend.Add(pol, sc)
			}
		}
		p.Legend.Top, p.Legend.Left = false, false
		p.Y.Min, p.Y.Max = 0, 1
		return p, nil
	}
	st, err := panel(fmt.Sprintf("state recall@%d", rep.K), func(p RetrievalPoint) float64 { return p.StateRecall }, true)
	if err != nil {
		return err
	}
	st.Title.Text = "retrieval: " + filepath.Base(rep.Input)
	sl, err := panel(fmt.Sprintf("slot recall@%d", rep.K), func(p RetrievalPoint) float64 { return p.SlotRecall }, false)
	if err != nil {
		return err
	}
	const w, h = 11 * vg.Inch, 4.5 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(12), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	for i, p := range []*plot.Plot{st, sl} {
		p.Draw(tiles.At(dc, i, 0))
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, buf.Bytes())
}
