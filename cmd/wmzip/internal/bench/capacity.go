package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"
	"time"

	wmtrain "github.com/wmzip/wmzip/train"

	"github.com/wmzip/wmzip/internal/baseline"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
)

// Storage is model + episodes (MemoWM, Appendix A.4): a coder that needs a
// shared model of B bytes and spends r bits per state stores H states in
// 8·B + r·H bits, so its total storage per state at horizon H is
// 8·B/H + r. A larger model pays once H passes its break-even with a
// smaller one, 8·(B_large − B_small) / (r_small − r_large).

// DefaultCapacities are the capacities CapacityBench trains by default.
var DefaultCapacities = []float64{1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2, 1}

// DefaultHorizons are the horizons, in states, CapacityBench reports:
// one per decade from 10^2 to 10^7.
var DefaultHorizons = []int64{1e2, 1e3, 1e4, 1e5, 1e6, 1e7}

// CapacityOptions configure CapacityBench. The zero value measures
// DefaultCapacities at DefaultHorizons with xz when it is installed.
type CapacityOptions struct {
	Capacities []float64 // wm.TrainOptions.Capacity of each model, in (0, 1]
	Horizons   []int64
	// SkipExternal leaves out xz (klauspost zstd is always measured).
	SkipExternal bool
	// Log, if set, receives progress lines.
	Log func(format string, a ...any)
}

// StorageCoder is one way to store the test states: a wmzip model of some
// capacity, or a general-purpose compressor (with a "model" when it is
// given the training codes: their compressed size).
type StorageCoder struct {
	Name         string  `json:"name"`
	Capacity     float64 `json:"capacity,omitempty"`   // 0 for a general-purpose compressor
	RefStates    int     `json:"ref_states,omitempty"` // states in the model's reference store
	ModelBytes   int64   `json:"model_bytes"`
	BitsPerState float64 `json:"bits_per_state"` // episodes only: file bytes × 8 ÷ states
	Seconds      float64 `json:"train_seconds,omitempty"`
}

// Total is the coder's storage per state, in bits, when h states share
// its model.
func (c StorageCoder) Total(h int64) float64 {
	return float64(8*c.ModelBytes)/float64(h) + c.BitsPerState
}

// BreakEven is the horizon from which the coder with the larger model
// stores less than the other; Never when its episodes are not cheaper.
type BreakEven struct {
	Larger  string  `json:"larger"`
	Smaller string  `json:"smaller"`
	States  float64 `json:"states,omitempty"`
	Never   bool    `json:"never,omitempty"`
}

// BreakEvenOf returns the break-even of two coders (A.4.3).
func BreakEvenOf(a, b StorageCoder) BreakEven {
	if a.ModelBytes < b.ModelBytes || a.ModelBytes == b.ModelBytes && a.BitsPerState > b.BitsPerState {
		a, b = b, a
	}
	be := BreakEven{Larger: a.Name, Smaller: b.Name}
	if a.BitsPerState >= b.BitsPerState {
		be.Never = true
		return be
	}
	be.States = float64(8*(a.ModelBytes-b.ModelBytes)) / (b.BitsPerState - a.BitsPerState)
	return be
}

// CapacityReport is what CapacityBench measured and what follows from it.
type CapacityReport struct {
	Name       string         `json:"name"`
	Geometry   wm.Geometry    `json:"geometry"`
	TrainState int            `json:"train_states"`
	TestStates int            `json:"test_states"`
	Coders     []StorageCoder `json:"coders"` // wmzip capacities ascending, then general compressors
	Horizons   []int64        `json:"horizons"`
	// Total[i][j] is Coders[i]'s storage per state at Horizons[j], bits.
	Total [][]float64 `json:"total_bits_per_state"`
	// Best[j] is the coder storing least at Horizons[j]; BestCapacity[j]
	// the wmzip capacity storing least there.
	Best         []string    `json:"best"`
	BestCapacity []float64   `json:"best_capacity"`
	BreakEvens   []BreakEven `json:"break_evens"`
	Date         string      `json:"date"`
}

// CapacityBench trains a wmzip model at each capacity on train, codes
// test losslessly with it, measures general-purpose compressors on the same
// codes, and tabulates total storage per state by horizon.
func CapacityBench(name string, train, test *npz.Trajectory, opt CapacityOptions) (*CapacityReport, error) {
	logf := opt.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	caps := opt.Capacities
	if caps == nil {
		caps = DefaultCapacities
	}
	hs := opt.Horizons
	if hs == nil {
		hs = DefaultHorizons
	}
	caps = slices.Clone(caps)
	slices.Sort(caps)
	for _, c := range caps {
		if !(c > 0 && c <= 1) {
			return nil, fmt.Errorf("%w: capacity %v outside (0, 1]", ErrInput, c)
		}
	}
	for _, h := range hs {
		if h < 1 {
			return nil, fmt.Errorf("%w: horizon %d", ErrInput, h)
		}
	}
	if train.Codes == nil || test.Codes == nil {
		return nil, fmt.Errorf("%w: want codes in both trajectories", ErrInput)
	}
	if train.S*train.M != test.S*test.M {
		return nil, fmt.Errorf("%w: train has %d coordinates per state, test %d", ErrInput, train.S*train.M, test.S*test.M)
	}
	g := wm.Geometry{S: train.S, M: train.M, K: max(wmtrain.Alphabet(train.Codes), wmtrain.Alphabet(test.Codes))}
	rep := &CapacityReport{Name: name, Geometry: g, TrainState: train.T, TestStates: test.T, Horizons: hs, Date: time.Now().UTC().Format("2006-01-02")}
	eps := episodes(train)
	for _, c := range caps {
		t0 := time.Now()
		m, err := wm.Train(g, eps, wm.TrainOptions{Capacity: c})
		if err != nil {
			return nil, fmt.Errorf("capacity %v: %w", c, err)
		}
		sec := time.Since(t0).Seconds()
		raw, _ := m.MarshalBinary()
		n, err := losslessBytes(m, test)
		if err != nil {
			return nil, fmt.Errorf("capacity %v: %w", c, err)
		}
		sc := StorageCoder{Name: fmt.Sprintf("wmzip c=%g", c), Capacity: c, RefStates: m.RefStates(), ModelBytes: int64(len(raw)),
			BitsPerState: float64(8*n) / float64(test.T), Seconds: sec}
		logf("%s: model %d bytes (%d reference states), %.1f bits/state, trained in %.1fs", sc.Name, sc.ModelBytes, sc.RefStates, sc.BitsPerState, sec)
		rep.Coders = append(rep.Coders, sc)
	}
	general, err := generalCoders(train, test, g.K, opt.SkipExternal)
	if err != nil {
		return nil, err
	}
	rep.Coders = append(rep.Coders, general...)
	rep.derive()
	return rep, nil
}

// GeneralRates measures klauspost zstd (best) and, unless skipExternal or
// when it is not installed, xz -9e on states of n codes below k: coders
// without a model, whose break-evens with a wmzip model BreakEvenOf gives.
func GeneralRates(codes []uint16, n, k int, skipExternal bool) ([]StorageCoder, error) {
	res, err := baseline.Run(baseline.Input{Codes: codes, N: n, K: k}, baseline.Options{SkipExternal: true})
	if err != nil {
		return nil, err
	}
	states := float64(len(codes) / n)
	var out []StorageCoder
	for _, r := range res {
		if r.Name == "zstd" && r.Available {
			out = append(out, StorageCoder{Name: "zstd best", BitsPerState: r.BitsPerState})
		}
	}
	if tl, ok := xzTool(skipExternal); ok {
		a, err := tl.Compress(baseline.Pack(codes, k))
		if err != nil {
			return nil, err
		}
		out = append(out, StorageCoder{Name: "xz -9e", BitsPerState: float64(8*len(a)) / states})
	}
	return out, nil
}

// xzTool returns xz -9e when it may run and is installed.
func xzTool(skipExternal bool) (baseline.Tool, bool) {
	if !skipExternal {
		for _, tl := range baseline.Tools() {
			if tl.Name == "xz -9e" && tl.Available() == nil {
				return tl, true
			}
		}
	}
	return baseline.Tool{}, false
}

// generalCoders measures GeneralRates on the test codes, and xz -9e given
// the training codes, whose model is the training codes compressed.
func generalCoders(train, test *npz.Trajectory, k int, skipExternal bool) ([]StorageCoder, error) {
	out, err := GeneralRates(test.Codes, test.S*test.M, k, skipExternal)
	if err != nil {
		return nil, err
	}
	if tl, ok := xzTool(skipExternal); ok {
		tr, te := baseline.Pack(train.Codes, k), baseline.Pack(test.Codes, k)
		b, err := tl.Compress(tr)
		if err != nil {
			return nil, err
		}
		ab, err := tl.Compress(append(slices.Clip(tr), te...))
		if err != nil {
			return nil, err
		}
		out = append(out, StorageCoder{Name: "xz -9e given train", ModelBytes: int64(len(b)), BitsPerState: float64(8*(len(ab)-len(b))) / float64(test.T)})
	}
	return out, nil
}

// losslessBytes codes test losslessly with m as `wmzip encode` does and
// returns the file's size.
func losslessBytes(m *wm.Model, test *npz.Trajectory) (int64, error) {
	var buf bytes.Buffer
	w, err := format.NewWriter(&buf, m)
	if err != nil {
		return 0, err
	}
	n := test.S * test.M
	for _, e := range test.Episodes() {
		if err := w.WriteEpisode(nil); err != nil {
			return 0, err
		}
		for i := e[0]; i < e[1]; i++ {
			if err := w.WriteState(test.Actions[i], test.Codes[i*n:(i+1)*n]); err != nil {
				return 0, err
			}
		}
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return int64(buf.Len()), nil
}

// derive fills the totals, the best coders and the break-evens.
func (r *CapacityReport) derive() {
	r.Total = make([][]float64, len(r.Coders))
	for i, c := range r.Coders {
		for _, h := range r.Horizons {
			r.Total[i] = append(r.Total[i], c.Total(h))
		}
	}
	r.Best, r.BestCapacity = nil, nil
	for j := range r.Horizons {
		best, bestCap, capTotal := 0, 0.0, math.Inf(1)
		for i, c := range r.Coders {
			if r.Total[i][j] < r.Total[best][j] {
				best = i
			}
			if c.Capacity > 0 && r.Total[i][j] < capTotal {
				bestCap, capTotal = c.Capacity, r.Total[i][j]
			}
		}
		r.Best = append(r.Best, r.Coders[best].Name)
		r.BestCapacity = append(r.BestCapacity, bestCap)
	}
	r.BreakEvens = nil
	for i := range r.Coders {
		for j := i + 1; j < len(r.Coders); j++ {
			a, b := r.Coders[i], r.Coders[j]
			if a.Capacity == 0 && b.Capacity == 0 {
				continue // two general compressors
			}
			r.BreakEvens = append(r.BreakEvens, BreakEvenOf(a, b))
		}
	}
}

// WriteJSON writes the report as one JSON object.
func (r *CapacityReport) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteText writes the coders, the table of total storage per state by
// horizon, the best capacity per horizon and the break-evens.
func (r *CapacityReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s: %d training states, %d test states, geometry %dx%d K=%d (%s)\n\n", r.Name, r.TrainState, r.TestStates, r.Geometry.S, r.Geometry.M, r.Geometry.K, r.Date)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "coder\tref states\tmodel bytes\tepisodes bits/state\t")
	for _, c := range r.Coders {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t\n", c.Name, c.RefStates, c.ModelBytes, c.BitsPerState)
	}
	tw.Flush()
	fmt.Fprintln(w, "\ntotal storage per state (bits) = model bytes × 8 / horizon + episodes bits/state")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "horizon\t")
	for _, c := range r.Coders {
		fmt.Fprintf(tw, "%s\t", c.Name)
	}
	fmt.Fprintln(tw, "best\tbest capacity\t")
	for j, h := range r.Horizons {
		fmt.Fprintf(tw, "%d\t", h)
		for i := range r.Coders {
			fmt.Fprintf(tw, "%.1f\t", r.Total[i][j])
		}
		fmt.Fprintf(tw, "%s\t%g\t\n", r.Best[j], r.BestCapacity[j])
	}
	tw.Flush()
	fmt.Fprintln(w, "\nbreak-even horizons (states from which the larger model stores less)")
	for _, be := range r.BreakEvens {
		if be.Never {
			fmt.Fprintf(w, "  %s vs %s: never\n", be.Larger, be.Smaller)
		} else {
			fmt.Fprintf(w, "  %s vs %s: %.0f\n", be.Larger, be.Smaller, be.States)
		}
	}
	return nil
}
