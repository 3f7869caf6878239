package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zip"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/npz"
)

// TestOutputNamesInput (issue 24, point 1): every verb with an input and
// an output refuses an output that names one of its inputs, by the same
// path, a symbolic link or a hard link, with one line and before any
// work; the input stays byte-identical and nothing is left beside it.
func TestOutputNamesInput(t *testing.T) {
	t.Parallel()
	p := tinySet(t)
	os.WriteFile(p("trace.tsv"), []byte("episode\tstep\n0\t1\n1\t2\n"), 0o644)
	os.WriteFile(p("counts.txt"), []byte("5\n3\n1\n1\n"), 0o644)
	// Each row names its input as IN, where the output goes.
	rows := []struct {
		in   string
		args []string
	}{
		{"t.npz", []string{"encode", "-m", p("m.wmm"), "-o", "IN", p("t.npz")}},
		{"m.wmm", []string{"encode", "-m", p("m.wmm"), "-o", "IN", p("t.npz")}},
		{"trace.tsv", []string{"encode", "-m", p("m.wmm"), "--access", p("trace.tsv"), "--budget", "100", "-o", "IN", p("t.npz")}},
		{"t.wmz", []string{"decode", "-m", p("m.wmm"), "-o", "IN", p("t.wmz")}},
		{"m.wmm", []string{"decode", "-m", p("m.wmm"), "-o", "IN", p("t.wmz")}},
		{"t.wmz", []string{"decode", "-m", p("m.wmm"), "--access-log", "IN", "-o", p("x.npz"), p("t.wmz")}},
		{"t.npz", []string{"quantize", "-m", p("m.wmm"), "-o", "IN", p("t.npz")}},
		{"t.wmz", []string{"recover", "-m", p("m.wmm"), "-o", "IN", p("t.wmz")}},
		{"t.npz", []string{"train", "-o", "IN", p("t.npz")}},
		{"t.npz", []string{"append", "-m", p("m.wmm"), "IN", p("t.npz")}},
		{"m.wmm", []string{"append", "-m", p("m.wmm"), "IN", p("t.npz")}},
		{"counts.txt", []string{"audit", "--counts", "--plot", "IN", p("counts.txt")}},
		{"t.npz", []string{"bench", "rd", "--plot", "IN", p("t.npz")}},
		{"t.npz", []string{"bench", "capacity", "--png", "IN", p("t.npz"), p("t.npz")}},
	}
	for _, r := range rows {
		in := p(r.in)
		want, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		link, hard := p("link-"+r.in), p("hard-"+r.in)
		os.Remove(link)
		os.Remove(hard)
		if err := os.Symlink(r.in, link); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(in, hard); err != nil {
			t.Fatal(err)
		}
		for _, o := range []string{in, link, hard} {
			args := make([]string, len(r.args))
			for i, a := range r.args {
				if a == "IN" {
					a = o
				}
				args[i] = a
			}
			mustFail(t, "", "never writes over its inputs", args...)
			if got, _ := os.ReadFile(in); !bytes.Equal(got, want) {
				t.Fatalf("wmzip %s changed its input", strings.Join(args, " "))
			}
		}
	}
	if left, _ := filepath.Glob(p(".*tmp-*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	mustFail(t, "", "same file", "gen", "graphworld", "-o", p("g.npz"), "--visits", p("g.npz"))
}

// TestOutputPaths (issue 24, point 1): "-" is the standard output (the
// verb's messages then go to the standard error) and the standard input;
// a symbolic link is written through; a device is written, not replaced;
// a folder, or a file in a missing folder, is refused before any work.
func TestOutputPaths(t *testing.T) {
	t.Parallel()
	p := tinySet(t)
	want, err := os.ReadFile(p("t.wmz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"-", "/dev/stdout"} {
		stdout, msgs, ok := wmzip(t, "encode", "--keyframe", "8", "-m", p("m.wmm"), "-o", o, p("t.npz"))
		if !ok || stdout != string(want) || !strings.Contains(msgs, "wrote") {
			t.Fatalf("encode -o %s: ok %v, %d bytes on stdout (want %d), messages %q", o, ok, len(stdout), len(want), msgs)
		}
	}
	os.Symlink("real.wmz", p("link.wmz"))
	mustRun(t, "encode", "-q", "--keyframe", "8", "-m", p("m.wmm"), "-o", p("link.wmz"), p("t.npz"))
	if fi, err := os.Lstat(p("link.wmz")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the output link was replaced")
	}
	if got, _ := os.ReadFile(p("real.wmz")); !bytes.Equal(got, want) {
		t.Fatal("the link's target does not hold the file")
	}
	if _, err := os.Stat("/dev/null"); err == nil {
		mustRun(t, "decode", "-q", "-m", p("m.wmm"), "-o", "/dev/null", p("t.wmz"))
		if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode().IsRegular() {
			t.Fatal("/dev/null was replaced")
		}
	}
	// The standard input: a .wmz and an .npz.
	in, _ := os.Open(p("t.wmz"))
	cmd := command("info", "-")
	cmd.Stdin = in
	b, err := cmd.Output()
	in.Close()
	if err != nil || !strings.Contains(string(b), "60 states in 3 episodes") {
		t.Fatalf("info -: %v %q", err, b)
	}
	in, _ = os.Open(p("t.npz"))
	cmd = command("encode", "--keyframe", "8", "-m", p("m.wmm"), "-o", "-", "-")
	cmd.Stdin = in
	b, err = cmd.Output()
	in.Close()
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("encode - to -: %v, %d bytes", err, len(b))
	}
	mustFail(t, "", "is a folder", "train", "-o", t.TempDir(), p("t.npz"))
	mustFail(t, "", "does not exist", "decode", "-m", p("m.wmm"), "-o", p("nodir/x.npz"), p("t.wmz"))
}

// obsSet generates float observations (2 episodes of 20 states, 32 slots
// of 16 values) and trains a model with a small quantizer on them.
func obsSet(t *testing.T) (func(string) string, *npz.Trajectory) {
	t.Helper()
	d := t.TempDir()
	p := func(n string) string { return filepath.Join(d, n) }
	mustRun(t, "gen", "graphworld", "--obs", "--nodes", "20", "--graph-seed", "4", "--episodes", "2", "--steps", "20", "--seed", "1", "-q", "-o", p("obs.npz"))
	mustRun(t, "train", "-q", "--subspaces", "4", "--centroids", "16", "--quantizer-iters", "-1", "--gate-holdout", "1", "-o", p("q.wmm"), p("obs.npz"))
	tr, err := npz.ReadTrajectory(p("obs.npz"))
	if err != nil {
		t.Fatal(err)
	}
	tr.Codes, tr.S, tr.M, tr.CodesDtype = nil, 0, 0, ""
	if err := npz.WriteTrajectory(p("obs.npz"), tr); err != nil {
		t.Fatal(err)
	}
	return p, tr
}

// writeFortran writes the observations, actions and episode starts of tr
// as numpy saves arrays in Fortran order (np.asfortranarray), stored.
func writeFortran(t *testing.T, path string, tr *npz.Trajectory) {
	t.Helper()
	le := binary.LittleEndian
	npy := func(descr, shape string, data []byte) []byte {
		dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': True, 'shape': %s, }", descr, shape)
		b := append([]byte("\x93NUMPY\x01\x00"), byte(len(dict)), byte(len(dict)>>8))
		return append(append(b, dict...), data...)
	}
	T, S, D := tr.T, tr.ObsS, tr.ObsD
	obs := make([]byte, 4*T*S*D)
	for i := range T {
		for s := range S {
			for j := range D {
				le.PutUint32(obs[4*(i+T*(s+S*j)):], math.Float32bits(tr.Obs[(i*S+s)*D+j]))
			}
		}
	}
	acts := make([]byte, 8*T)
	for i, a := range tr.Actions {
		le.PutUint64(acts[8*i:], uint64(a))
	}
	starts := make([]byte, 8*len(tr.EpisodeStart))
	for i, s := range tr.EpisodeStart {
		le.PutUint64(starts[8*i:], uint64(s))
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range []struct {
		name string
		data []byte
	}{
		{"obs.npy", npy("<f4", fmt.Sprintf("(%d, %d, %d)", T, S, D), obs)},
		{"actions.npy", npy("<i8", fmt.Sprintf("(%d,)", T), acts)},
		{"episode_start.npy", npy("<i8", fmt.Sprintf("(%d,)", len(tr.EpisodeStart)), starts)},
	} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(m.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInputChecks (issue 24, point 2): NaN or Inf in observations is
// refused by every verb that quantizes, naming the state and slot;
// float64 and Fortran-order observations are converted and code exactly
// as their float32 C-order twin; observations of the wrong shape and codes
// of the wrong dtype get one line saying what to do; impossible flag
// values are refused before any work.
func TestInputChecks(t *testing.T) {
	t.Parallel()
	p, src := obsSet(t)
	mustRun(t, "encode", "-q", "-m", p("q.wmm"), "-o", p("ref.wmz"), p("obs.npz"))
	ref, _ := os.ReadFile(p("ref.wmz"))
	write := func(name string, edit func(tr *npz.Trajectory)) string {
		tr := *src
		tr.Obs = slices.Clone(src.Obs)
		edit(&tr)
		if err := npz.WriteTrajectory(p(name), &tr); err != nil {
			t.Fatal(err)
		}
		return p(name)
	}
	d := src.ObsD
	at := (7*src.ObsS + 3) * d // state 7 (episode 0, step 7), slot 3
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		bad := write("bad.npz", func(tr *npz.Trajectory) { tr.Obs[at+1] = v })
		want := fmt.Sprintf("state 7 (episode 0, step 7), slot 3 holds %v", v)
		mustFail(t, p("x.wmz"), want, "encode", "-m", p("q.wmm"), "-o", p("x.wmz"), bad)
		mustFail(t, p("x.wmz"), "state 7", "encode", "-m", p("q.wmm"), "--distortion", "0.05", "-o", p("x.wmz"), bad)
		mustFail(t, p("x.npz"), want, "quantize", "-m", p("q.wmm"), "-o", p("x.npz"), bad)
		mustFail(t, p("x.wmm"), want, "train", "-o", p("x.wmm"), bad)
	}
	f64 := write("f64.npz", func(tr *npz.Trajectory) { tr.ObsDtype = "float64" })
	writeFortran(t, p("fortran.npz"), src)
	for _, in := range []string{f64, p("fortran.npz")} {
		mustRun(t, "encode", "-q", "-m", p("q.wmm"), "-o", p("y.wmz"), in)
		if got, _ := os.ReadFile(p("y.wmz")); !bytes.Equal(got, ref) {
			t.Errorf("%s codes otherwise than its float32 C-order twin", in)
		}
	}
	wide := write("wide.npz", func(tr *npz.Trajectory) { tr.ObsS, tr.ObsD = tr.ObsS/2, 2*tr.ObsD })
	mustFail(t, p("x.wmz"), "obs has shape [T,16,1024], the model's quantizer takes [T,32,512]", "encode", "-m", p("q.wmm"), "-o", p("x.wmz"), wide)
	slots := write("slots.npz", func(tr *npz.Trajectory) {
		tr.T, tr.Actions, tr.EpisodeStart = tr.T/2, tr.Actions[:tr.T/2], []int64{0}
		tr.ObsS *= 2
	})
	mustFail(t, p("x.wmz"), "obs has shape [T,64,512]", "encode", "-m", p("q.wmm"), "-o", p("x.wmz"), slots)
	if err := npz.WriteNPZ(p("int64.npz"), []npz.Array{{Name: "codes", Dtype: "int64", Shape: []int{2, 8}, Data: make([]int64, 16)}}); err != nil {
		t.Fatal(err)
	}
	mustFail(t, p("x.wmz"), "astype(np.uint8)", "encode", "-m", p("q.wmm"), "-o", p("x.wmz"), p("int64.npz"))

	for _, c := range []struct {
		want string
		args []string
	}{
		{"--threads -2", []string{"encode", "--threads", "-2", "-m", p("q.wmm"), "-o", p("x.wmz"), p("obs.npz")}},
		{"--threads -1", []string{"decode", "-j", "-1", "-m", p("q.wmm"), "-o", p("x.npz"), p("ref.wmz")}},
		{"--distortion 5", []string{"encode", "--distortion", "5", "-m", p("q.wmm"), "-o", p("x.wmz"), p("obs.npz")}},
		{"--keyframe 0", []string{"encode", "--keyframe", "0", "-m", p("q.wmm"), "-o", p("x.wmz"), p("obs.npz")}},
		{"--capacity 0", []string{"train", "--capacity", "0", "-o", p("x.wmm"), p("obs.npz")}},
		{"--centroids 1", []string{"train", "--centroids", "1", "-o", p("x.wmm"), p("obs.npz")}},
		{"--gate-holdout -2", []string{"train", "--gate-holdout", "-2", "-o", p("x.wmm"), p("obs.npz")}},
		{"--steps 0", []string{"gen", "graphworld", "--steps", "0", "-o", p("x.npz")}},
	} {
		mustFail(t, "", c.want, c.args...)
	}
}

// TestInfoModel (issue 24, point 4): `info model.wmm` describes the model
// and prints the ID that `info -m model.wmm file.wmz` shows; states the
// model predicts worse than no model (random codes) make encode warn and
// info say so.
func TestInfoModel(t *testing.T) {
	t.Parallel()
	p := tinySet(t)
	text := mustRun(t, "info", p("m.wmm"))
	var file, model map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", "-m", p("m.wmm"), p("t.wmz"))), &file); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", p("m.wmm"))), &model); err != nil {
		t.Fatal(err)
	}
	id, _ := file["model_id"].(string)
	withModel := mustRun(t, "info", "-m", p("m.wmm"), p("t.wmz"))
	if id == "" || model["model_id"] != id || !strings.Contains(text, "model        "+id) || !strings.Contains(withModel, "model        "+id) {
		t.Fatalf("model ID %q; info model.wmm:\n%s\n%v", id, text, model)
	}
	for _, w := range []string{"model file v4", ", level copy", "32 slots x 32 subspaces, K=64", "reference states", "quantizer    none", "gate         version 2"} {
		if !strings.Contains(text, w) {
			t.Errorf("info m.wmm lacks %q:\n%s", w, text)
		}
	}
	if model["quantizer"] != nil || model["gate"] == nil || model["model_bytes"] == nil {
		t.Errorf("info --json m.wmm: %v", model)
	}
	mustFail(t, "", "is a model file", "info", "-m", p("m.wmm"), p("m.wmm"))

	rng := rand.New(rand.NewPCG(1, 2))
	noise := &npz.Trajectory{T: 40, S: 32, M: 32, Codes: make([]uint16, 40*1024), CodesDtype: "uint8"}
	for i := range noise.Codes {
		noise.Codes[i] = uint16(rng.IntN(64))
	}
	if err := npz.WriteTrajectory(p("noise.npz"), noise); err != nil {
		t.Fatal(err)
	}
	_, msgs, ok := wmzip(t, "encode", "-q", "-m", p("m.wmm"), "-o", p("noise.wmz"), p("noise.npz"))
	if !ok || !strings.Contains(msgs, "above the raw 6144") {
		t.Fatalf("encode of random codes: ok %v, stderr %q", ok, msgs)
	}
	if out := mustRun(t, "info", p("noise.wmz")); !strings.Contains(out, "above the raw 6144") {
		t.Errorf("info of a file above the raw rate:\n%s", out)
	}
	if _, msgs, _ := wmzip(t, "encode", "-q", "-m", p("m.wmm"), "-o", p("x.wmz"), p("t.npz")); msgs != "" {
		t.Errorf("encode of the training data warns: %q", msgs)
	}
}

// TestAppendAndSteps (issue 24, point 5): append adds the episodes of
// trajectories to a file, which then equals the file written with all of
// them at once; an append that fails leaves the file byte-identical;
// decode --steps A:B gives exactly those steps of the episode.
func TestAppendAndSteps(t *testing.T) {
	t.Parallel()
	p := tinySet(t)
	src, err := npz.ReadTrajectory(p("t.npz"))
	if err != nil {
		t.Fatal(err)
	}
	twice := *src
	twice.T *= 2
	twice.Codes = slices.Concat(src.Codes, src.Codes)
	twice.Actions = slices.Concat(src.Actions, src.Actions)
	twice.EpisodeStart = nil
	for _, s := range slices.Concat(src.EpisodeStart, src.EpisodeStart) {
		if len(twice.EpisodeStart) >= len(src.EpisodeStart) {
			s += int64(src.T)
		}
		twice.EpisodeStart = append(twice.EpisodeStart, s)
	}
	if err := npz.WriteTrajectory(p("twice.npz"), &twice); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "encode", "-q", "--keyframe", "8", "-m", p("m.wmm"), "-o", p("twice.wmz"), p("twice.npz"))
	want, _ := os.ReadFile(p("twice.wmz"))
	orig, _ := os.ReadFile(p("t.wmz"))
	os.WriteFile(p("a.wmz"), orig, 0o644)
	out := mustRun(t, "append", "-m", p("m.wmm"), p("a.wmz"), p("t.npz"))
	if got, _ := os.ReadFile(p("a.wmz")); !bytes.Equal(got, want) || !strings.Contains(out, "as episodes 3 to 5") {
		t.Fatalf("append: %q; the file differs from encoding every episode at once", out)
	}

	bad := *src
	bad.Codes = slices.Clone(src.Codes)
	bad.Codes[25*1024+7] = 64 // state 25: past the first chunks written
	if err := npz.WriteTrajectory(p("bad.npz"), &bad); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p("b.wmz"), orig, 0o644)
	mustFail(t, "", "as it was", "append", "-m", p("m.wmm"), p("b.wmz"), p("t.npz"), p("bad.npz"))
	if got, _ := os.ReadFile(p("b.wmz")); !bytes.Equal(got, orig) {
		t.Fatal("a failed append changed the file")
	}
	mustFail(t, "", "never writes over", "append", "-m", p("m.wmm"), p("t.npz"), p("t.npz"))
	mustFail(t, "", "not a .wmz", "append", "-m", p("m.wmm"), p("twice.npz"), p("t.npz"))

	mustRun(t, "decode", "-q", "-m", p("m.wmm"), "--episode", "1", "--steps", "5:15", "-o", p("r.npz"), p("t.wmz"))
	r, err := npz.ReadTrajectory(p("r.npz"))
	if err != nil {
		t.Fatal(err)
	}
	s := int(src.EpisodeStart[1]) + 5
	if r.T != 10 || !slices.Equal(r.Codes, src.Codes[s*1024:(s+10)*1024]) || !slices.Equal(r.Actions[1:], src.Actions[s+1:s+10]) {
		t.Fatalf("--steps 5:15 gave %d states, not the source's", r.T)
	}
	mustFail(t, p("x.npz"), "episode 1 has steps 0 to 19", "decode", "-m", p("m.wmm"), "--episode", "1", "--steps", "15:25", "-o", p("x.npz"), p("t.wmz"))
	mustFail(t, p("x.npz"), "want A:B", "decode", "-m", p("m.wmm"), "--episode", "1", "--steps", "7:3", "-o", p("x.npz"), p("t.wmz"))
}

// TestRecoverKeepsAll (issue 24, point 3): a file with one flipped header
// byte recovers to the original, byte for byte, with the model given or
// embedded, and one with a flipped byte in its embedded model with the
// model given; one flipped byte in a middle chunk loses that chunk's states
// only, reported by episode and steps, the rest of its episode following
// the last episode with metadata saying where it comes from; decode's
// hint names -m when the file does not embed its model.
func TestRecoverKeepsAll(t *testing.T) {
	t.Parallel()
	p := tinySet(t)
	orig, _ := os.ReadFile(p("t.wmz"))
	mustRun(t, "encode", "-q", "--keyframe", "8", "--embed-model", "-m", p("m.wmm"), "-o", p("e.wmz"), p("t.npz"))
	embedded, _ := os.ReadFile(p("e.wmz"))
	for _, at := range []int{0, 9, 13, 20, 21, 22, 26, 30, 48, 61} {
		for _, c := range []struct {
			file  []byte
			model []string
		}{{orig, []string{"-m", p("m.wmm")}}, {embedded, nil}} {
			bad := bytes.Clone(c.file)
			bad[at] ^= 0x24
			os.WriteFile(p("bad.wmz"), bad, 0o644)
			if c.model != nil && at == 20 {
				mustFail(t, p("x.npz"), "'wmzip recover -m "+p("m.wmm")+" -o fixed.wmz "+p("bad.wmz")+"'", slices.Concat([]string{"decode", "-o", p("x.npz")}, c.model, []string{p("bad.wmz")})...)
			}
			out := mustRun(t, slices.Concat([]string{"recover", "-o", p("fixed.wmz")}, c.model, []string{p("bad.wmz")})...)
			if got, _ := os.ReadFile(p("fixed.wmz")); !bytes.Equal(got, c.file) || !strings.Contains(out, "identical to the original") {
				t.Fatalf("header byte %d: recovered file differs from the original:\n%s", at, out)
			}
		}
	}

	// A damaged embedded model: the model given takes its place.
	bad := bytes.Clone(embedded)
	bad[200] ^= 0x08
	os.WriteFile(p("bad.wmz"), bad, 0o644)
	mustFail(t, p("x.npz"), "'wmzip recover -m model.wmm -o fixed.wmz", "decode", "-o", p("x.npz"), p("bad.wmz"))
	out := mustRun(t, "recover", "-m", p("m.wmm"), "-o", p("fixed.wmz"), p("bad.wmz"))
	if got, _ := os.ReadFile(p("fixed.wmz")); !bytes.Equal(got, embedded) || !strings.Contains(out, "embedded model: damaged") {
		t.Fatalf("a damaged embedded model:\n%s", out)
	}

	src, err := npz.ReadTrajectory(p("t.npz"))
	if err != nil {
		t.Fatal(err)
	}
	// A byte of a chunk that is not its episode's last, near the middle.
	out = ""
	for at := len(orig) / 2; !strings.Contains(out, "  moved:"); at += 17 {
		bad := bytes.Clone(orig)
		bad[at] ^= 0x10
		os.WriteFile(p("bad.wmz"), bad, 0o644)
		out = mustRun(t, "recover", "-m", p("m.wmm"), "-o", p("fixed.wmz"), p("bad.wmz"))
	}
	var e, from, to, moved, step int
	if _, err := fmt.Sscanf(out[strings.Index(out, "  lost:"):], "  lost: episode %d, steps %d to %d", &e, &from, &to); err != nil {
		t.Fatalf("no gap by episode and steps: %v\n%s", err, out)
	}
	if _, err := fmt.Sscanf(out[strings.Index(out, "  moved:"):], "  moved: episode %d from step %d on is episode %d", &e, &step, &moved); err != nil || step != to+1 || moved != 3 {
		t.Fatalf("no move to episode 3 from step %d: %v\n%s", to+1, err, out)
	}
	mustRun(t, "decode", "-q", "-m", p("m.wmm"), "-o", p("back.npz"), p("fixed.wmz"))
	back, err := npz.ReadTrajectory(p("back.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if lost := to - from + 1; back.T != src.T-lost || lost < 1 || lost > 8 {
		t.Fatalf("%d states back of %d, %d lost", back.T, src.T, lost)
	}
	// Episode e lost [from, to]: its start stays in place, its end is last.
	n := 1024
	eps := src.Episodes()
	var want []uint16
	for i, r := range eps {
		end := r[1]
		if i == e {
			end = r[0] + from
		}
		want = append(want, src.Codes[r[0]*n:end*n]...)
	}
	want = append(want, src.Codes[(eps[e][0]+to+1)*n:eps[e][1]*n]...)
	if !slices.Equal(back.Codes, want) {
		t.Fatal("the recovered states differ from the source's")
	}
	f, err := wmzlib.Open(p("fixed.wmz"), mustCodec(t, p("m.wmm")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ep, err := f.Episode(3)
	if err != nil {
		t.Fatal(err)
	}
	if string(ep.Meta) != fmt.Sprintf(`{"recovered":{"episode":%d,"step":%d}}`, e, to+1) {
		t.Fatalf("episode 3's metadata %q", ep.Meta)
	}
}

func mustCodec(t *testing.T, path string) *wmzlib.Codec {
	t.Helper()
	c, err := wmzlib.LoadCodec(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestWrongFileKind (issue 24, point 2): a model, .wmz or .npz given where
// another kind of file is wanted is named as what it is, and a lossy
// encoding asked of a model without a gate says how to get one.
func TestWrongFileKind(t *testing.T) {
	t.Parallel()
	p := tinySet(t)
	for _, c := range []struct {
		want string
		args []string
	}{
		{"is a model file (.wmm), not a trajectory .npz", []string{"encode", "-m", p("m.wmm"), "-o", p("x.wmz"), p("m.wmm")}},
		{"is a .wmz file, not a trajectory .npz", []string{"train", "-o", p("x.wmm"), p("t.wmz")}},
		{"is a zip archive (an .npz?), not a .wmz file", []string{"decode", "-m", p("m.wmm"), "-o", p("x.npz"), p("t.npz")}},
		{"is a model file, not a .wmz file", []string{"verify", "-m", p("m.wmm"), p("m.wmm")}},
	} {
		mustFail(t, "", c.want, c.args...)
	}
	mustRun(t, "train", "-q", "--gate-holdout", "0", "-o", p("ng.wmm"), p("t.npz"))
	mustFail(t, p("x.wmz"), "has no retention gate (it was trained with --gate-holdout 0)", "encode", "-m", p("ng.wmm"), "--lambda", "2", "-o", p("x.wmz"), p("t.npz"))
}
