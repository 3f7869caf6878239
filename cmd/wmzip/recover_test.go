package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/testkit"
	"github.com/wmzip/wmzip/npz"
)

// TestRecover cuts an encoded file as a crash would and recovers it: the
// fixed file verifies and holds the complete records before the cut; a
// complete file comes back unchanged; bad input fails with one line and
// leaves no output.
func TestRecover(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "graphworld", "--nodes", "30", "--graph-seed", "4", "--episodes", "3", "--steps", "30", "--seed", "1", "-q", "-o", p("t.npz"))
	mustRun(t, "train", "-q", "-o", p("m.wmm"), p("t.npz"))
	mustRun(t, "encode", "-q", "--keyframe", "8", "-m", p("m.wmm"), "-o", p("t.wmz"), p("t.npz"))
	full, err := os.ReadFile(p("t.wmz"))
	if err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "recover", "-m", p("m.wmm"), "-o", p("same.wmz"), p("t.wmz"))
	if !strings.Contains(out, "complete file") {
		t.Fatalf("recover of a complete file: %q", out)
	}
	if same, _ := os.ReadFile(p("same.wmz")); string(same) != string(full) {
		t.Fatal("recover changed a complete file")
	}
	if err := os.WriteFile(p("cut.wmz"), full[:len(full)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	mustFail(t, "", "", "verify", "-q", "-m", p("m.wmm"), p("cut.wmz"))
	out = mustRun(t, "recover", "-m", p("m.wmm"), "-o", p("fixed.wmz"), p("cut.wmz"))
	if !strings.Contains(out, "kept") {
		t.Fatalf("recover of a cut file: %q", out)
	}
	mustRun(t, "verify", "-q", "-m", p("m.wmm"), p("fixed.wmz"))
	if err := os.WriteFile(p("head.wmz"), full[:40], 0o644); err != nil {
		t.Fatal(err)
	}
	mustFail(t, p("x.wmz"), "truncated", "recover", "-m", p("m.wmm"), "-o", p("x.wmz"), p("head.wmz"))
	mustFail(t, p("x.wmz"), "embeds no model: give the one it was written with (-m model.wmm", "recover", "-o", p("x.wmz"), p("cut.wmz"))
	mustFail(t, p("x.wmz"), "missing -o", "recover", p("cut.wmz"))
	mustRun(t, "recover", "-h")
	mustFail(t, "", "never writes over its inputs", "recover", "-o", p("cut.wmz"), p("cut.wmz"))
}

// recordEnds re-encodes the trajectory at path as `encode -m model
// --keyframe g` does and returns the file's bytes, the offset where each
// episode record ends, and where each chunk record of each episode ends
// with the states it holds (Flush at a chunk's end changes no byte).
func recordEnds(t *testing.T, path, model string, g int) (b []byte, epEnd []int64, chunks [][][2]int64) {
	t.Helper()
	m, err := loadModel(model)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := npz.ReadTrajectory(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := format.NewWriter(&buf, m, format.WithKeyframeInterval(g))
	if err != nil {
		t.Fatal(err)
	}
	n := tr.S * tr.M
	for _, e := range tr.Episodes() {
		if err := w.WriteEpisode(nil); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		epEnd = append(epEnd, int64(buf.Len()))
		var cs [][2]int64
		for s := e[0]; s < e[1]; s++ {
			if err := w.WriteState(tr.Actions[s], tr.Codes[s*n:(s+1)*n]); err != nil {
				t.Fatal(err)
			}
			if k := s - e[0] + 1; k%g == 0 || s == e[1]-1 {
				w.Flush()
				cs = append(cs, [2]int64{int64(buf.Len()), int64((k-1)%g + 1)})
			}
		}
		chunks = append(chunks, cs)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), epEnd, chunks
}

// TestRecoverThenDecode (issues 15 and 24): a 6-episode file cut at every
// 997th byte, or with a byte flipped in any one chunk (a sample of both
// unless WMZIP_LONG is set: testkit.Long), recovers to a file
// that decodes to every intact episode and every complete chunk of a cut
// one, or every state outside the damaged chunk (states as in the
// source); where no state survives, recover fails with one line and
// writes nothing.
func TestRecoverThenDecode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	gen := []string{"gen", "graphworld", "--nodes", "40", "--graph-seed", "3", "--episodes", "6", "--steps", "50", "-q"}
	mustRun(t, append(gen, "--seed", "1", "-o", p("train.npz"))...)
	mustRun(t, append(gen, "--seed", "2", "-o", p("t.npz"))...)
	mustRun(t, "train", "-q", "-o", p("m.wmm"), p("train.npz"))
	const g = 16
	mustRun(t, "encode", "-q", "--keyframe", fmt.Sprint(g), "-m", p("m.wmm"), "-o", p("t.wmz"), p("t.npz"))
	full, err := os.ReadFile(p("t.wmz"))
	if err != nil {
		t.Fatal(err)
	}
	same, epEnd, chunks := recordEnds(t, p("t.npz"), p("m.wmm"), g)
	if !bytes.Equal(same, full) {
		t.Fatal("re-encoding differs from encode's file")
	}
	src, err := npz.ReadTrajectory(p("t.npz"))
	if err != nil {
		t.Fatal(err)
	}
	n := src.S * src.M
	srcEps := src.Episodes()
	// check recovers in and decodes the result: the steps [from, to) of
	// source episode e of each segment {e, from, to} must come back as the
	// decoded episodes, in order (an empty segment is no episode).
	check := func(name string, in []byte, segs [][3]int) {
		t.Helper()
		os.Remove(p("fixed.wmz"))
		if err := os.WriteFile(p("in.wmz"), in, 0o644); err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, s := range segs {
			total += s[2] - s[1]
		}
		if total == 0 {
			mustFail(t, p("fixed.wmz"), "nothing recoverable", "recover", "-m", p("m.wmm"), "-o", p("fixed.wmz"), p("in.wmz"))
			return
		}
		mustRun(t, "recover", "-q", "-m", p("m.wmm"), "-o", p("fixed.wmz"), p("in.wmz"))
		mustRun(t, "decode", "-q", "-m", p("m.wmm"), "-o", p("back.npz"), p("fixed.wmz"))
		got, err := npz.ReadTrajectory(p("back.npz"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.T != total {
			t.Fatalf("%s: %d states decoded, want %d", name, got.T, total)
		}
		gotEps := got.Episodes()
		i := 0
		for _, s := range segs {
			e, k := s[0], s[2]-s[1]
			if k == 0 {
				continue
			}
			if i >= len(gotEps) || gotEps[i][1]-gotEps[i][0] != k {
				t.Fatalf("%s: steps %d to %d of episode %d of the source: want them back as episode %d, got %v", name, s[1], s[2]-1, e, i, gotEps)
			}
			s0, g0 := srcEps[e][0]+s[1], gotEps[i][0]
			if !slices.Equal(got.Codes[g0*n:(g0+k)*n], src.Codes[s0*n:(s0+k)*n]) ||
				!slices.Equal(got.Actions[g0+1:g0+k], src.Actions[s0+1:s0+k]) {
				t.Fatalf("%s: episode %d decodes to other states", name, e)
			}
			i++
		}
	}
	check("cut inside the first chunk", full[:epEnd[0]+5], nil)
	// Every cut and every damaged chunk in a long run, else a third of
	// each (two recover and decode runs a case).
	step, first := testkit.Stride(t.Name(), 3, 3)
	cuts := 0
	for i, cut := 0, 997; cut < len(full); i, cut = i+1, cut+997 {
		if i%step != first {
			continue
		}
		var segs [][3]int
		for e, cs := range chunks {
			k := 0
			for _, c := range cs {
				if epEnd[e] <= int64(cut) && c[0] <= int64(cut) {
					k += int(c[1])
				}
			}
			segs = append(segs, [3]int{e, 0, k})
		}
		check(fmt.Sprintf("cut at %d", cut), full[:cut], segs)
		cuts++
	}
	// A flipped byte in a chunk loses its states only (issue 24, point
	// 3): the episode keeps its steps before it, and those after it follow
	// the last episode.
	flips, nth := 0, 0
	for e, cs := range chunks {
		start, done := epEnd[e], 0
		for c, ch := range cs {
			if nth%step == first {
				bad := bytes.Clone(full)
				bad[(start+ch[0])/2] ^= 0x10
				var segs [][3]int
				for i := range chunks {
					if i != e {
						segs = append(segs, [3]int{i, 0, srcEps[i][1] - srcEps[i][0]})
					} else {
						segs = append(segs, [3]int{i, 0, done})
					}
				}
				segs = append(segs, [3]int{e, done + int(ch[1]), srcEps[e][1] - srcEps[e][0]})
				check(fmt.Sprintf("episode %d chunk %d damaged", e, c), bad, segs)
				flips++
			}
			nth++
			start, done = ch[0], done+int(ch[1])
		}
	}
	t.Logf("%d cuts, %d damaged chunks, %d bytes", cuts, flips, len(full))
}
