package alloc_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/alloc"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/opq"
	synth "github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/train"
)

// evenReads are the access counts of TestStoreRD: every other state of the
// file (the even ones, in file order) read 3 times, the others never, so
// that the read and the unread states are alike but for their reads.
func evenReads(n int) []int64 {
	counts := make([]int64, n)
	for i := range counts {
		if i%2 == 0 {
			counts[i] = 3
		}
	}
	return counts
}

// hotCold returns the mean of d over the states read and over the others.
func hotCold(d []float64, counts []int64) (hot, cold float64) {
	var nh, nc float64
	for i, x := range d {
		if counts[i] > 0 {
			hot, nh = hot+x, nh+1
		} else {
			cold, nc = cold+x, nc+1
		}
	}
	return hot / nh, cold / nc
}

// stateDist returns the mean over the slot vectors of state x̂ of
// ‖x − x̂‖²/‖x‖² against x.
func stateDist(x, xh []float32, slots int) float64 {
	d := len(x) / slots
	var sum float64
	for s := range slots {
		var e, n float64
		for j := s * d; j < (s+1)*d; j++ {
			a, b := float64(x[j]), float64(xh[j])
			e += (a - b) * (a - b)
			n += a * a
		}
		sum += e / n
	}
	return sum / float64(slots)
}

// checkDecoded opens file with codec c (nil: its embedded model) and checks
// that it was written by the member Store names and that every state
// decodes to the distortion Store measured, against ref (the source floats
// or the reconstruction of the codes given, file order).
func checkDecoded(t *testing.T, c *wmzip.Codec, file []byte, res *alloc.Stored, ref [][]float32) {
	t.Helper()
	f, err := wmzip.NewFile(bytes.NewReader(file), int64(len(file)), c)
	if err != nil {
		t.Fatal(err)
	}
	if c != nil {
		if got, want := f.Info().ModelID, c.Members()[res.Member].Model().ID(); got != want {
			t.Errorf("the file's model %s, want member %d's %s", got, res.Member, want)
		}
	}
	slots := f.Codec().Slots()
	i := 0
	for e, n := range f.Episodes() {
		for s := range n {
			_, obs, err := f.Obs(e, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := stateDist(ref[i], obs, slots); math.Abs(d-res.Dist[i]) > 1e-6*max(d, 1e-3) {
				t.Fatalf("state %d decodes to distortion %.9g, Store measured %.9g", i, d, res.Dist[i])
			}
			i++
		}
	}
	if i != len(res.Dist) {
		t.Fatalf("%d states decoded, %d stored", i, len(res.Dist))
	}
	if rep := f.Info().Report; rep.SourceSlots != res.Report.SourceSlots || math.Abs(rep.SourceDistortion()-res.Report.SourceDistortion()) > 1e-12 {
		t.Errorf("the file's report %+v, Store's %+v", rep, res.Report)
	}
}

// TestStoreRD: a family codec (no gate; coded by rate and distortion)
// stores by access: at a budget near the coarsest member's rate and at
// one where a finer member serves, the file is within 1% below the
// budget, the states read get less distortion against their source floats
// than those never read (and less than one λ for all gives them), the
// access-weighted distortion is below the access-blind allocation's, and
// the file decodes, with the bundle, to what Store measured.
func TestStoreRD(t *testing.T) {
	ctx := context.Background()
	c := alloc.FamilyForTest(t)
	test := synth.Episodes(2, 2)
	var src [][]float32
	for _, e := range test {
		per := len(e.Obs) / len(e.Actions)
		for k := range e.Actions {
			src = append(src, e.Obs[k*per:(k+1)*per])
		}
	}
	counts := evenReads(len(src))
	for _, budget := range []float64{150, 400} {
		var file, blindFile bytes.Buffer
		res, err := alloc.Store(ctx, &file, c, test, counts, budget)
		if err != nil {
			t.Fatal(err)
		}
		blind, err := alloc.Store(ctx, &blindFile, c, test, counts, budget, alloc.WithTau(0))
		if err != nil {
			t.Fatal(err)
		}
		if q := len(res.Lams); !res.RD() || res.Lambdas != nil || q < 8 || q > 16 || res.Lams[q-1] != 0 || !res.Source {
			t.Fatalf("budget %v: not a file coded by rate and distortion from the source: %+v", budget, res)
		}
		if res.Bits > budget || res.Bits < 0.99*budget {
			t.Errorf("budget %v: %.2f bits/state, not within 1%% below", budget, res.Bits)
		}
		if got := float64(file.Len()) * 8 / float64(len(src)); got != res.Bits {
			t.Errorf("budget %v: file of %.2f bits/state, Store says %.2f", budget, got, res.Bits)
		}
		mean, weighted, perLevel, err := res.Distortion(c, counts)
		if err != nil {
			t.Fatal(err)
		}
		hot, cold := hotCold(res.Dist, counts)
		bHot, bCold := hotCold(blind.Dist, counts)
		_, bWeighted, _, _ := blind.Distortion(c, counts)
		t.Logf("budget %v: member %d, %.2f bits/state, %d encodings; distortion %.5f, access-weighted %.5f, read %.5f, never read %.5f (one λ for all: %.2f bits/state, access-weighted %.5f, read %.5f, never read %.5f); states per level %v",
			budget, res.Member, res.Bits, res.Encodings, mean, weighted, hot, cold, blind.Bits, bWeighted, bHot, bCold, perLevel)
		if !(hot < 0.95*cold) {
			t.Errorf("budget %v: the states read have distortion %.5f, those never read %.5f", budget, hot, cold)
		}
		if !(hot < bHot) || !(weighted < bWeighted) {
			t.Errorf("budget %v: read states %.5f, access-weighted %.5f; one λ for all: %.5f, %.5f", budget, hot, weighted, bHot, bWeighted)
		}
		if math.Abs(weighted-hot) > 1e-12 || math.Abs(mean-(hot+cold)/2) > 1e-12 || math.Abs(res.Report.SourceDistortion()-mean) > 1e-9 {
			t.Errorf("budget %v: Distortion %.9g, %.9g; read %.9g, never read %.9g; the file's report %.9g", budget, mean, weighted, hot, cold, res.Report.SourceDistortion())
		}
		n := 0
		for _, k := range perLevel {
			n += k
		}
		if n != len(src) || len(res.Levels) != len(src) {
			t.Errorf("budget %v: %d states by level, %d levels", budget, n, len(res.Levels))
		}
		checkDecoded(t, c, file.Bytes(), res, src)
	}
}

// TestStoreRDCodes: episodes given as codes (of the bundle's finest
// member) are coded against their reconstruction, with the model
// embedded: the file decodes without the codec to what Store measured.
func TestStoreRDCodes(t *testing.T) {
	c := alloc.FamilyForTest(t)
	test := synth.Episodes(2, 2)
	var ref [][]float32
	for i := range test {
		e := &test[i]
		codes, err := c.Quantize(nil, e.Obs)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := c.Reconstruct(nil, codes)
		if err != nil {
			t.Fatal(err)
		}
		per := len(rec) / len(e.Actions)
		for k := range e.Actions {
			ref = append(ref, rec[k*per:(k+1)*per])
		}
		e.Obs, e.Codes = nil, codes
	}
	counts := evenReads(len(ref))
	const budget = 400
	var file bytes.Buffer
	res, err := alloc.Store(context.Background(), &file, c, test, counts, budget, alloc.WithEmbeddedModel(true))
	if err != nil {
		t.Fatal(err)
	}
	if res.Source || res.Report.SourceSlots != 0 {
		t.Errorf("codes measured against source floats: %v, %+v", res.Source, res.Report)
	}
	if res.Bits > budget || res.Bits < 0.99*budget {
		t.Errorf("%.2f bits/state (model excluded), not within 1%% below %v", res.Bits, budget)
	}
	hot, cold := hotCold(res.Dist, counts)
	t.Logf("member %d, %.2f bits/state; read %.5f, never read %.5f", res.Member, res.Bits, hot, cold)
	if !(hot < cold) {
		t.Errorf("the states read have distortion %.5f, those never read %.5f", hot, cold)
	}
	checkDecoded(t, nil, file.Bytes(), res, ref)
}

// TestStoreRDBadInput: a budget below every measured member's lowest level
// is ErrBudget; observations of the wrong size are ErrInput.
func TestStoreRDBadInput(t *testing.T) {
	ctx := context.Background()
	c := alloc.FamilyForTest(t)
	test := synth.Episodes(2, 1)
	if _, err := alloc.Store(ctx, &bytes.Buffer{}, c, test, make([]int64, 50), 5); !errors.Is(err, alloc.ErrBudget) {
		t.Errorf("budget 5: %v, want ErrBudget", err)
	}
	test[0].Obs = test[0].Obs[:len(test[0].Obs)-1]
	if _, err := alloc.Store(ctx, &bytes.Buffer{}, c, test, make([]int64, 50), 200); !errors.Is(err, wmzip.ErrInput) {
		t.Errorf("short observations: %v, want ErrInput", err)
	}
}

// TestStoreRDSingle: a codec of one OPQ quantizer (rotated) without a
// gate, and without a calibration, is coded by rate and distortion too;
// its file decodes to what Store measured.
func TestStoreRDSingle(t *testing.T) {
	c, err := train.Codec(context.Background(), synth.Episodes(1, 8), train.WithQuantizer(opq.Config{M: 8, K: 16}), train.WithGate(0, gate.CalibOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Members()) != 1 || !c.Quantizer().Rotated() || len(c.Calibration()) != 0 {
		t.Fatalf("want one rotated quantizer without calibration: %d members, rotated %v", len(c.Members()), c.Quantizer().Rotated())
	}
	test := synth.Episodes(2, 2)
	var src [][]float32
	for _, e := range test {
		per := len(e.Obs) / len(e.Actions)
		for k := range e.Actions {
			src = append(src, e.Obs[k*per:(k+1)*per])
		}
	}
	const budget = 100 // the quantizer's own codes take about 105
	var file bytes.Buffer
	res, err := alloc.Store(context.Background(), &file, c, test, evenReads(len(src)), budget)
	if err != nil {
		t.Fatal(err)
	}
	if res.Member != 0 || res.Bits > budget || res.Bits < 0.99*budget {
		t.Errorf("member %d, %.2f bits/state, budget %v", res.Member, res.Bits, budget)
	}
	checkDecoded(t, c, file.Bytes(), res, src)
}
