package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/npz"
)

// tinyWorld is a graphworld small enough to train a quantizer on in a
// moment: 4 slots of 4 subspaces, K = 8, 16-d slot vectors.
func tinyWorld(t *testing.T) (train, test *npz.Trajectory) {
	t.Helper()
	gen := func(eps int, seed uint64) *npz.Trajectory {
		r, err := graphworld.Generate(graphworld.Config{Nodes: 12, Degree: 3, GraphSeed: 1, Episodes: eps, Steps: 12, Seed: seed,
			Slots: 4, Subspaces: 4, K: 8, Obs: true, ObsDim: 16})
		if err != nil {
			t.Fatal(err)
		}
		return &npz.Trajectory{T: len(r.Actions), Codes: r.Codes, S: r.S, M: r.M, Actions: r.Actions, HasActions: true,
			EpisodeStart: r.EpisodeStart, Obs: r.Obs, ObsS: r.S, ObsD: r.ObsDim}
	}
	return gen(8, 1), gen(2, 2)
}

var tinyQuantizer = opq.Config{M: 4, K: 8, Iters: 3, OPQIters: 2}

func tinyOptions() SpeedOptions {
	return SpeedOptions{Threads: 2, Reads: 7, MinTime: time.Nanosecond, Keyframe: 5, Distortions: []float64{0.05, 0.9}}
}

// TestSpeedTable checks the table's rows and that every row round-tripped
// (Measure fails otherwise); it asserts nothing about time.
func TestSpeedTable(t *testing.T) {
	train, test := tinyWorld(t)
	s, err := Prepare("tiny", train, test, SetupOptions{Quantizer: tinyQuantizer})
	if err != nil {
		t.Fatal(err)
	}
	if s.Gate == nil {
		t.Fatalf("no gate: %s", s.NoGate)
	}
	rep, err := Speed(s, tinyOptions())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rep.Rows {
		names = append(names, r.Coder)
		if !r.Exact || r.Reads != 7 || r.Bytes <= 0 || r.BitsPerState <= 0 || r.EncodeRate <= 0 || r.DecodeRate <= 0 || r.ReadP90 < r.ReadP50 {
			t.Errorf("%s: %+v", r.Coder, r)
		}
		wmzip := strings.HasPrefix(r.Coder, "wmzip")
		if wmzip && r.ModelBytes == 0 || !wmzip && r.Threads > 1 && r.Exec {
			t.Errorf("%s: model bytes %d, threads %d", r.Coder, r.ModelBytes, r.Threads)
		}
		want := 2 // the ×2 figures, measured when GOMAXPROCS allows
		if runtime.GOMAXPROCS(0) < 2 {
			want = 0
		}
		if wmzip && (r.Threads != want || r.BytesN != 0) {
			t.Errorf("%s: measured on %d goroutines (GOMAXPROCS %d), file of %d bytes there (want the same bytes)", r.Coder, r.Threads, runtime.GOMAXPROCS(0), r.BytesN)
		}
		if r.Lossless == (r.Target > 0) {
			t.Errorf("%s: lossless %v with target %g", r.Coder, r.Lossless, r.Target)
		}
		if r.Target > 0 && !(r.Lambda > 0 && r.Distortion <= r.Target && r.SearchRuns > 0 && r.SearchSeconds > 0) {
			t.Errorf("%s: λ %g, distortion %g of %g, %d search encodings", r.Coder, r.Lambda, r.Distortion, r.Target, r.SearchRuns)
		}
	}
	want := []string{"wmzip lossless", "wmzip D<=0.05", "wmzip D<=0.9", "wmzip full lossless", "wmzip fast lossless", "zstd fastest", "zstd default", "zstd best", "zstd best dict(train)"}
	if len(names) < len(want) || strings.Join(names[:len(want)], "|") != strings.Join(want, "|") {
		t.Fatalf("rows %q, want %q first; notes %q", names, want, rep.Notes)
	}
	for _, n := range names[len(want):] {
		if !strings.HasPrefix(n, "xz -9e") && !strings.HasPrefix(n, "brotli") {
			t.Errorf("unexpected row %q", n)
		}
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + text.String())
	for _, n := range names {
		if !strings.Contains(text.String(), n) {
			t.Errorf("text table lacks %q:\n%s", n, text.String())
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back SpeedReport
	if err := json.Unmarshal(b, &back); err != nil || len(back.Rows) != len(rep.Rows) {
		t.Fatalf("JSON round trip: %v, %d rows", err, len(back.Rows))
	}
}

// TestSpeedCodesOnly: codes without obs train no gate, and the lossy rows
// are left out with a note.
func TestSpeedCodesOnly(t *testing.T) {
	train, test := tinyWorld(t)
	s, err := Prepare("tiny codes", train, test, SetupOptions{CodesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	opt := tinyOptions()
	opt.SkipExternal = true
	rep, err := Speed(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 7 || rep.Rows[0].Coder != "wmzip lossless" || rep.Rows[1].Coder != "wmzip full lossless" || rep.Rows[2].Coder != "wmzip fast lossless" || !strings.Contains(strings.Join(rep.Notes, "\n"), "lossy wmzip rows skipped") {
		t.Fatalf("%d rows, notes %q", len(rep.Rows), rep.Notes)
	}
	for _, r := range rep.Rows {
		if !r.Lossless || !r.Exact {
			t.Errorf("%s: lossless %v exact %v", r.Coder, r.Lossless, r.Exact)
		}
	}
}

// brokenCoder decodes one code wrong.
type brokenCoder struct{ Coder }

func (b brokenCoder) Decode(file []byte, threads int) (*Decoded, error) {
	d, err := b.Coder.Decode(file, threads)
	if err == nil {
		d.Packed = append([]byte(nil), d.Packed...)
		d.Packed[len(d.Packed)/2] ^= 1
	}
	return d, err
}

// TestSpeedMismatch: a decode that differs from the input fails the run.
func TestSpeedMismatch(t *testing.T) {
	train, test := tinyWorld(t)
	s, err := Prepare("tiny codes", train, test, SetupOptions{CodesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	opt := tinyOptions()
	opt.SkipExternal, opt.Distortions = true, []float64{}
	cs, _, err := DefaultCoders(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Measure(s, []Coder{brokenCoder{cs[3]}}, opt); !errors.Is(err, ErrMismatch) {
		t.Fatalf("Measure of a broken coder: %v, want ErrMismatch", err)
	}
}

// TestSpeedFront: the front holds the lossless coders no other lossless one
// beats on both axes; lossy rows are placed but never on it; CPU time is
// the axis only when every row has it.
func TestSpeedFront(t *testing.T) {
	rep := &SpeedReport{Rows: []Row{
		{Coder: "a", Lossless: true, BitsPerState: 100, DecodeRate: 10, DecodeCPURate: 20},
		{Coder: "b", Lossless: true, BitsPerState: 200, DecodeRate: 100, DecodeCPURate: 200},
		{Coder: "c", Lossless: true, BitsPerState: 300, DecodeRate: 50, DecodeCPURate: 100},  // b beats it
		{Coder: "d", Lossless: true, BitsPerState: 200, DecodeRate: 100, DecodeCPURate: 200}, // ties b: both on the front
		{Coder: "e", Lossless: false, BitsPerState: 10, DecodeRate: 1000, DecodeCPURate: 2000},
		{Coder: "f", Lossless: true, BitsPerState: 0, DecodeRate: 5, DecodeCPURate: 5}, // no size: left out
	}}
	pts, cpu := SpeedFront(rep)
	if !cpu {
		t.Fatal("every row has CPU rates: want the CPU axis")
	}
	got := map[string]bool{}
	for _, p := range pts {
		got[p.Coder] = p.Pareto
		if p.Coder == "b" && p.DecodeRate != 200 {
			t.Errorf("b placed at %v states/s, want its CPU rate 200", p.DecodeRate)
		}
	}
	want := map[string]bool{"a": true, "b": true, "c": false, "d": true, "e": false}
	if !maps.Equal(got, want) {
		t.Fatalf("front %v, want %v", got, want)
	}
	rep.Rows[2].DecodeCPURate = 0
	if pts, cpu = SpeedFront(rep); cpu || pts[1].DecodeRate != 100 {
		t.Fatalf("a row without CPU rates: cpu axis %v, b at %v", cpu, pts[1].DecodeRate)
	}
	if err := PlotSpeed(filepath.Join(t.TempDir(), "s.png"), rep); err != nil {
		t.Fatal(err)
	}
	if err := PlotSpeed(filepath.Join(t.TempDir(), "s.png"), &SpeedReport{}); err == nil {
		t.Fatal("an empty report plotted")
	}
}
