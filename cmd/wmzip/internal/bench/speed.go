package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/wmzip/wmzip/internal/baseline"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/wm"
)

// DefaultDistortions are the targets of the lossy wmzip rows: about 60% and
// 12% of the lossless rate on web-pgdocs through a quantizer
// (docs/results-gate.md).
var DefaultDistortions = []float64{0.005, 0.02}

// SpeedOptions configure Speed and Measure. The zero value gives the
// defaults.
type SpeedOptions struct {
	// Threads > 1 also measures encode and decode on that many goroutines
	// (at most GOMAXPROCS), for the coders that can use them.
	Threads int
	// Reads is the number of random single-state reads per coder
	// (default 200), at the same positions for every coder, drawn with Seed
	// (default 1).
	Reads int
	Seed  uint64
	// MinTime is how long each encode and decode figure repeats for, at
	// least once (default 1s); past one run the first is left out as a
	// warm-up.
	MinTime time.Duration
	// Keyframe is wmzip's keyframe interval (default
	// format.DefaultKeyframeInterval).
	Keyframe int
	// Distortions are the targets of the lossy wmzip rows (nil:
	// DefaultDistortions; empty: none). They need a Setup with a gate.
	Distortions []float64
	// SkipExternal leaves out the exec'd compressors (xz, brotli).
	SkipExternal bool
	// Log, if set, receives progress lines.
	Log func(format string, a ...any)
}

func (o SpeedOptions) withDefaults() SpeedOptions {
	if o.Reads <= 0 {
		o.Reads = 200
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.MinTime <= 0 {
		o.MinTime = time.Second
	}
	if o.Keyframe <= 0 {
		o.Keyframe = format.DefaultKeyframeInterval
	}
	if o.Distortions == nil {
		o.Distortions = DefaultDistortions
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	o.Threads = min(max(o.Threads, 1), runtime.GOMAXPROCS(0))
	return o
}

// A Row is one coder's line of the speed table. Rates are in states/s,
// latencies in milliseconds.
type Row struct {
	Coder    string `json:"coder"`
	Lossless bool   `json:"lossless"`
	Exec     bool   `json:"exec,omitempty"` // an external process: its times include starting it

	Bytes        int64   `json:"bytes"` // charged to the test states
	BitsPerState float64 `json:"bits_per_state"`
	ModelBytes   int64   `json:"model_bytes"` // shared bytes not counted: model, dictionary or compressed train

	EncodeRate float64 `json:"encode_states_per_s"` // one goroutine
	DecodeRate float64 `json:"decode_states_per_s"`
	// Threads is the goroutines of the *N figures, 0 when they were not
	// measured (Threads ≤ 1, or a coder that cannot use more than one).
	Threads     int     `json:"threads,omitempty"`
	EncodeRateN float64 `json:"encode_states_per_s_n,omitempty"`
	DecodeRateN float64 `json:"decode_states_per_s_n,omitempty"`
	BytesN      int64   `json:"bytes_n,omitempty"` // the N-goroutine file, when its size differs

	Reads   int     `json:"reads"`
	ReadP50 float64 `json:"read_p50_ms"`
	ReadP90 float64 `json:"read_p90_ms"`

	// The same on CPU time (this process and the exec'd tools), which
	// other work on the machine inflates less than wall time; CPUShare is
	// CPU ÷ wall time over the row's one-goroutine figures (0: CPU time
	// not measured on this system).
	EncodeCPURate float64 `json:"encode_states_per_cpu_s,omitempty"`
	DecodeCPURate float64 `json:"decode_states_per_cpu_s,omitempty"`
	ReadCPUP50    float64 `json:"read_cpu_p50_ms,omitempty"`
	ReadCPUP90    float64 `json:"read_cpu_p90_ms,omitempty"`
	CPUShare      float64 `json:"cpu_share,omitempty"`

	// Exact is set once every decode and read returned what was written.
	Exact bool `json:"exact"`

	// Lossy wmzip rows: λ found for the target distortion, the distortion
	// reached, the retained fraction, and the search's time and encodings.
	Lambda        float64 `json:"lambda,omitempty"`
	Target        float64 `json:"target_distortion,omitempty"`
	Distortion    float64 `json:"distortion,omitempty"`
	Retained      float64 `json:"retained_fraction,omitempty"`
	SearchSeconds float64 `json:"search_seconds,omitempty"`
	SearchRuns    int     `json:"search_encodings,omitempty"`

	Note string `json:"note,omitempty"`
}

// A SpeedReport is the speed table with what it was measured on; `wmzip
// bench speed --json` prints it.
type SpeedReport struct {
	Input       string `json:"input"`
	TrainStates int    `json:"train_states"`
	TestStates  int    `json:"test_states"`
	Episodes    int    `json:"test_episodes"`
	Coordinates int    `json:"coordinates"`
	Alphabet    int    `json:"alphabet"`
	Keyframe    int    `json:"keyframe"`

	Quantizer        string  `json:"quantizer,omitempty"`
	QuantizerSeconds float64 `json:"quantizer_train_seconds,omitempty"`
	ModelSeconds     float64 `json:"model_train_seconds"`
	GateSeconds      float64 `json:"gate_calibration_seconds,omitempty"`

	Threads    int    `json:"threads"` // goroutines of the *N figures; 1: not measured
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
	CPU        string `json:"cpu,omitempty"`
	// Load is the 1-minute load average before and after the
	// measurements (Linux): other work on the machine slows every figure.
	Load     string `json:"load_average,omitempty"`
	Date     string `json:"date"`
	Reads    int    `json:"reads"`
	ReadSeed uint64 `json:"read_seed"`
	MinTime  string `json:"min_time"`

	Rows  []Row    `json:"rows"`
	Notes []string `json:"notes"`
}

// Speed measures DefaultCoders on s.
func Speed(s *Setup, opt SpeedOptions) (*SpeedReport, error) {
	opt = opt.withDefaults()
	coders, notes, err := DefaultCoders(s, opt)
	if err != nil {
		return nil, err
	}
	rep, err := Measure(s, coders, opt)
	if err != nil {
		return nil, err
	}
	rep.Notes = append(rep.Notes, notes...)
	return rep, nil
}

// DefaultCoders returns the coders of the speed table: wmzip lossless and
// at each of opt.Distortions (with a gate), wmzip lossless at the model's
// other levels, klauspost zstd at its fastest,
// default and best levels and with a dictionary built from train, and, when
// installed, xz -9e, xz -9e given train and brotli -q 11. The notes say what
// was left out and why. The λ searches run here.
func DefaultCoders(s *Setup, opt SpeedOptions) ([]Coder, []string, error) {
	opt = opt.withDefaults()
	t := newTestSet(s.Test, s.Model.Geom.K)
	t.packed = baseline.Pack(t.codes, t.k)
	var cs []Coder
	var notes []string
	mb, err := s.Model.MarshalBinary()
	if err != nil {
		return nil, nil, err
	}
	wz := []*wmzipCoder{newWmzip(s.Model, t, opt.Keyframe, format.LambdaLossless, Row{Coder: "wmzip lossless", Lossless: true})}
	if len(opt.Distortions) > 0 && s.Gate == nil {
		notes = append(notes, "lossy wmzip rows skipped: "+s.NoGate)
	} else {
		for _, d := range opt.Distortions {
			opt.Log("wmzip: searching λ for distortion %g", d)
			c, err := lossyWmzip(s, t, opt.Keyframe, d)
			if err != nil && !errors.Is(err, ErrInput) {
				return nil, nil, err
			}
			if err != nil {
				notes = append(notes, fmt.Sprintf("wmzip D<=%g skipped: %v", d, err))
				continue
			}
			wz = append(wz, c)
		}
	}
	for _, c := range wz {
		c.row.ModelBytes = int64(len(mb))
		cs = append(cs, c)
	}
	// The model's other levels, lossless.
	for _, lv := range []int{wm.LevelFull, wm.LevelFast, wm.LevelCopy} {
		if lv == s.Model.Level() {
			continue
		}
		mf, err := s.Model.WithLevel(lv)
		if err != nil {
			return nil, nil, err
		}
		fb, err := mf.MarshalBinary()
		if err != nil {
			return nil, nil, err
		}
		name := "wmzip " + wm.LevelName(lv) + " lossless"
		cs = append(cs, newWmzip(mf, t, opt.Keyframe, format.LambdaLossless, Row{Coder: name, Lossless: true, ModelBytes: int64(len(fb))}))
	}
	cs = append(cs,
		newZstd("zstd fastest", t, zstd.SpeedFastest, nil),
		newZstd("zstd default", t, zstd.SpeedDefault, nil),
		newZstd("zstd best", t, zstd.SpeedBestCompression, nil))
	train := baseline.Pack(s.Train.Codes, t.k)
	if dict, err := baseline.BuildDict(train); err != nil {
		notes = append(notes, "zstd dict(train) skipped: "+err.Error())
	} else {
		cs = append(cs, newZstd("zstd best dict(train)", t, zstd.SpeedBestCompression, dict))
	}
	for _, tl := range baseline.Tools() {
		if tl.Bin != "xz" && tl.Bin != "brotli" {
			continue
		}
		if opt.SkipExternal {
			notes = append(notes, tl.Name+" skipped: external tools off")
			continue
		}
		if err := tl.Available(); err != nil {
			notes = append(notes, tl.Name+" skipped: "+tl.Bin+" not on PATH")
			continue
		}
		givens := [][]byte{nil}
		if tl.Bin == "xz" {
			givens = append(givens, train)
		}
		for _, g := range givens {
			c, err := newTool(tl, t, g)
			if err != nil {
				return nil, nil, err
			}
			cs = append(cs, c)
		}
	}
	return cs, notes, nil
}

// Measure times every coder on s's test states and checks every decode and
// read; a coder whose output differs from what was written fails the run
// with ErrMismatch.
func Measure(s *Setup, coders []Coder, opt SpeedOptions) (*SpeedReport, error) {
	opt = opt.withDefaults()
	t := newTestSet(s.Test, s.Model.Geom.K)
	t.packed = baseline.Pack(t.codes, t.k)
	rep := &SpeedReport{
		Input: s.Name, TrainStates: s.Train.T, TestStates: t.states(), Episodes: t.episodes(),
		Coordinates: t.n, Alphabet: t.k, Keyframe: opt.Keyframe,
		QuantizerSeconds: s.QuantizerSeconds, ModelSeconds: s.ModelSeconds, GateSeconds: s.GateSeconds,
		Threads: opt.Threads, GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH, CPU: cpuModel(), Date: time.Now().UTC().Format("2006-01-02"),
		Reads: opt.Reads, ReadSeed: opt.Seed, MinTime: opt.MinTime.String(),
	}
	if s.Quantizer != nil {
		rep.Quantizer = fmt.Sprintf("OPQ %d subspaces × %d centroids of %d-d slot vectors", s.Quantizer.M(), s.Quantizer.K(), s.Quantizer.Dim())
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x7265616473))
	reads := make([][2]int, opt.Reads)
	for i := range reads {
		e := rng.IntN(t.episodes())
		reads[i] = [2]int{e, rng.IntN(t.starts[e+1] - t.starts[e])}
	}
	load := loadAvg()
	for _, c := range coders {
		opt.Log("measuring %s", c.Info().Coder)
		row, err := measure(c, t, reads, opt)
		if cl, ok := c.(io.Closer); ok {
			cl.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Info().Coder, err)
		}
		rep.Rows = append(rep.Rows, row)
	}
	if load != "" {
		rep.Load = load + " before, " + loadAvg() + " after"
	}
	rep.Notes = append(rep.Notes,
		"bits/state = bytes × 8 ÷ test states; model bytes (the wmzip model, a zstd dictionary, xz's compressed train) are shared and not counted",
		"general-purpose compressors see the codes packed one byte per code (two when K > 256), time-major, without actions, in one stream per file; wmzip also stores the actions",
		fmt.Sprintf("random read of one state, cold: wmzip opens the file once (format.Open, chunk cache off) and decodes the chunk holding the state from its keyframe up to the state (keyframe interval %d; with the default cache a read of a state already decoded is a copy); a general-purpose compressor decompresses its stream from the start up to the end of the state (klauspost: one reused decoder; exec'd tools: one process per read)", opt.Keyframe),
		"exec'd tools (xz, brotli): every time includes starting the process and piping through it")
	if opt.Threads > 1 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("×%d columns: wmzip codes %d chunks at once (format.WithThreads; the file is the same bytes; a lossy row's reconstruction is taken from its one-goroutine encode); klauspost zstd runs its stream encoder and decoder with concurrency %d (blocks are pipelined, not independent); exec'd tools are single-threaded", opt.Threads, opt.Threads, opt.Threads))
	}
	return rep, nil
}

// measure fills in one coder's row.
func measure(c Coder, t *testSet, reads [][2]int, opt SpeedOptions) (Row, error) {
	row := c.Info()
	states := t.states()
	var enc *Encoding
	var err error
	var wall, cpu span
	encode := func(n int) func() error {
		return func() error { enc, err = c.Encode(n); return err }
	}
	sp, err := repeat(opt.MinTime, encode(1))
	if err != nil {
		return row, err
	}
	wall, cpu = wall.add(sp.wall), cpu.add(sp.cpu)
	row.EncodeRate, row.EncodeCPURate = sp.wall.rate(states), sp.cpu.rate(states)
	row.Bytes = enc.Bytes
	row.BitsPerState = float64(enc.Bytes) * 8 / float64(states)
	if row.Lossless != (enc.Want == nil) {
		return row, fmt.Errorf("%w: lossless %v but the encoder's reconstruction is %v", ErrInput, row.Lossless, enc.Want != nil)
	}
	var dec *Decoded
	decode := func(e *Encoding, n int) func() error {
		return func() error { dec, err = c.Decode(e.File, n); return err }
	}
	e1 := enc
	if sp, err = repeat(opt.MinTime, decode(e1, 1)); err != nil {
		return row, err
	}
	wall, cpu = wall.add(sp.wall), cpu.add(sp.cpu)
	row.DecodeRate, row.DecodeCPURate = sp.wall.rate(states), sp.cpu.rate(states)
	if err := t.check(dec, e1.Want); err != nil {
		return row, err
	}
	if n := c.Threads(opt.Threads); n > 1 {
		row.Threads = n
		if sp, err = repeat(opt.MinTime, encode(n)); err != nil {
			return row, err
		}
		row.EncodeRateN = sp.wall.rate(states)
		if enc.Bytes != e1.Bytes {
			row.BytesN = enc.Bytes
		}
		if sp, err = repeat(opt.MinTime, decode(enc, n)); err != nil {
			return row, err
		}
		row.DecodeRateN = sp.wall.rate(states)
		if err := t.check(dec, enc.Want); err != nil {
			return row, fmt.Errorf("%d goroutines: %w", n, err)
		}
	}
	sr, err := c.Open(e1.File)
	if err != nil {
		return row, err
	}
	want := e1.Want
	if want == nil {
		want = t.codes
	}
	lat := make([]time.Duration, len(reads))
	latCPU := make([]time.Duration, len(reads))
	var st []uint16
	runtime.GC()
	for i, p := range reads {
		c0 := cpuTime()
		t0 := time.Now()
		st, err = sr.State(p[0], p[1], st)
		lat[i] = time.Since(t0)
		latCPU[i] = cpuTime() - c0
		if err != nil {
			return row, fmt.Errorf("read of episode %d step %d: %w", p[0], p[1], err)
		}
		k := t.starts[p[0]] + p[1]
		if !slices.Equal(st, want[k*t.n:(k+1)*t.n]) {
			return row, fmt.Errorf("%w: read of episode %d step %d", ErrMismatch, p[0], p[1])
		}
		wall, cpu = wall.add(span{lat[i], 1}), cpu.add(span{latCPU[i], 1})
	}
	slices.Sort(lat)
	slices.Sort(latCPU)
	row.Reads = len(lat)
	row.ReadP50, row.ReadP90 = percentile(lat, 0.5), percentile(lat, 0.9)
	if cpu.d > 0 {
		row.ReadCPUP50, row.ReadCPUP90 = percentile(latCPU, 0.5), percentile(latCPU, 0.9)
		row.CPUShare = float64(cpu.d) / float64(wall.d)
	}
	row.Exact = true
	return row, nil
}

// A span is time spent over some runs.
type span struct {
	d    time.Duration
	runs int
}

func (s span) add(o span) span { return span{s.d + o.d, s.runs + o.runs} }

// rate is states per second of one run; 0 when no time was measured.
func (s span) rate(states int) float64 {
	if s.d <= 0 {
		return 0
	}
	return float64(s.runs*states) / s.d.Seconds()
}

// timing is wall and CPU time over the same runs.
type timing struct{ wall, cpu span }

// repeat runs f until minTime has passed, at least once, and returns the
// wall and CPU time of the runs; past one run, the first is left out as a
// warm-up.
func repeat(minTime time.Duration, f func() error) (timing, error) {
	var first, all timing
	runtime.GC()
	for all.wall.d < minTime {
		c0 := cpuTime()
		t0 := time.Now()
		if err := f(); err != nil {
			return all, err
		}
		w := span{time.Since(t0), 1}
		c := span{cpuTime() - c0, 1}
		if all.wall.runs == 0 {
			first.wall, first.cpu = w, c
		}
		all.wall, all.cpu = all.wall.add(w), all.cpu.add(c)
	}
	if all.wall.runs > 1 {
		all.wall = span{all.wall.d - first.wall.d, all.wall.runs - 1}
		all.cpu = span{all.cpu.d - first.cpu.d, all.cpu.runs - 1}
	}
	return all, nil
}

// percentile is the nearest-rank percentile of sorted latencies, in ms.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := max(int(math.Ceil(p*float64(len(sorted))))-1, 0)
	return float64(sorted[i]) / float64(time.Millisecond)
}

// check compares a decode with what was written: want, or the input when
// want is nil; actions, when decoded, at every step but episodes' first.
func (t *testSet) check(d *Decoded, want []uint16) error {
	if d.Codes == nil {
		if want != nil {
			return fmt.Errorf("%w: a lossy coder returned packed bytes", ErrInput)
		}
		if string(d.Packed) != string(t.packed) {
			return fmt.Errorf("%w: %d bytes decoded, want %d, first difference at %d", ErrMismatch, len(d.Packed), len(t.packed), firstDiff(d.Packed, t.packed))
		}
		return nil
	}
	if want == nil {
		want = t.codes
	}
	if !slices.Equal(d.Codes, want) {
		return fmt.Errorf("%w: %d codes decoded, want %d, first difference at %d", ErrMismatch, len(d.Codes), len(want), firstDiff(d.Codes, want))
	}
	if d.Actions != nil {
		if len(d.Actions) != len(t.actions) {
			return fmt.Errorf("%w: %d actions decoded, want %d", ErrMismatch, len(d.Actions), len(t.actions))
		}
		for e := range t.episodes() {
			for i := t.starts[e] + 1; i < t.starts[e+1]; i++ {
				if d.Actions[i] != t.actions[i] {
					return fmt.Errorf("%w: action of state %d", ErrMismatch, i)
				}
			}
		}
	}
	return nil
}

func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// cpuModel is the processor's name on Linux, "" elsewhere.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// loadAvg is the 1-minute load average on Linux, "" elsewhere.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// WriteText prints the report as one table with its setup and notes.
func (r *SpeedReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s: %d test states in %d episodes (train %d), %d coordinates, K=%d\n", r.Input, r.TestStates, r.Episodes, r.TrainStates, r.Coordinates, r.Alphabet)
	if r.Quantizer != "" {
		fmt.Fprintf(w, "quantizer: %s, trained in %.1fs; ", r.Quantizer, r.QuantizerSeconds)
	}
	fmt.Fprintf(w, "world model trained in %.1fs", r.ModelSeconds)
	if r.GateSeconds > 0 {
		fmt.Fprintf(w, ", gate in %.1fs", r.GateSeconds)
	}
	fmt.Fprintf(w, "\n%s, %s, GOMAXPROCS %d, %s; %s; %d random reads (seed %d), each figure repeated for %s",
		r.Go, r.Platform, r.GOMAXPROCS, r.CPU, r.Date, r.Reads, r.ReadSeed, r.MinTime)
	if r.Load != "" {
		fmt.Fprintf(w, "; load average %s", r.Load)
	}
	fmt.Fprint(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	par := r.Threads > 1
	cpu := false
	for _, x := range r.Rows {
		cpu = cpu || x.CPUShare > 0
	}
	fmt.Fprint(tw, "coder\tbits/state\tmodel bytes\tenc states/s\tdec states/s\t")
	if par {
		fmt.Fprintf(tw, "enc ×%d\tdec ×%d\t", r.Threads, r.Threads)
	}
	fmt.Fprint(tw, "read p50 ms\tread p90 ms\t")
	if cpu {
		fmt.Fprint(tw, "enc /CPU s\tdec /CPU s\tread p50 CPU ms\tCPU/wall\t")
	}
	fmt.Fprintln(tw)
	for _, x := range r.Rows {
		name := x.Coder
		if x.Exec {
			name += " *"
		}
		mb := "-"
		if x.ModelBytes > 0 {
			mb = strconv.FormatInt(x.ModelBytes, 10)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s\t%s\t", name, x.BitsPerState, mb, perSec(x.EncodeRate), perSec(x.DecodeRate))
		if par {
			if x.Threads > 1 {
				fmt.Fprintf(tw, "%s\t%s\t", perSec(x.EncodeRateN), perSec(x.DecodeRateN))
			} else {
				fmt.Fprint(tw, "1 thread\t1 thread\t")
			}
		}
		fmt.Fprintf(tw, "%.3g\t%.3g\t", x.ReadP50, x.ReadP90)
		if cpu {
			fmt.Fprintf(tw, "%s\t%s\t%.3g\t%.2f\t", perSec(x.EncodeCPURate), perSec(x.DecodeCPURate), x.ReadCPUP50, x.CPUShare)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n* exec'd: times include process start. Every decode and read was checked against what was written.")
	if cpu {
		fmt.Fprintln(w, "CPU columns: the same on CPU time (user+system, this process and the exec'd tools); CPU/wall below 1 means the row waited for a processor.")
	}
	for _, x := range r.Rows {
		if x.Note != "" {
			fmt.Fprintf(w, "%s: %s\n", x.Coder, x.Note)
		}
		if x.BytesN != 0 {
			fmt.Fprintf(w, "%s: the ×%d file is %d bytes (%.1f bits/state)\n", x.Coder, x.Threads, x.BytesN, float64(x.BytesN)*8/float64(r.TestStates))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	return nil
}

// perSec formats a rate with three significant digits at most.
func perSec(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
