package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/ctmc"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/train"
)

// TestEncodeAccessRD: encode --access with a family model (no gate: coded
// by rate and distortion) meets its budget from below within 1%, says
// which member wrote the file and what its distortion against the source
// observations is, and the file verifies and decodes, with the bundle, to
// that distortion, the states read having less of it than those never
// read.
func TestEncodeAccessRD(t *testing.T) {
	t.Parallel()
	d := t.TempDir()
	p := func(n string) string { return filepath.Join(d, n) }
	codec, err := train.Codec(context.Background(), walks.Episodes(1, 8))
	if err != nil {
		t.Fatal(err)
	}
	b, err := codec.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("m.wmm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	eps := walks.Episodes(2, 2)
	tr := &npz.Trajectory{ObsS: eps[0].Slots, HasActions: true}
	var trace strings.Builder
	trace.WriteString(ctmc.TraceHeader + "\n")
	var hot []bool
	for e, ep := range eps {
		tr.EpisodeStart = append(tr.EpisodeStart, int64(tr.T))
		tr.T += len(ep.Actions)
		tr.Actions = append(tr.Actions, ep.Actions...)
		tr.Obs = append(tr.Obs, ep.Obs...)
		for s := range ep.Actions {
			hot = append(hot, s%2 == 0) // every other state read 3 times
			if s%2 == 0 {
				fmt.Fprintf(&trace, "%d\t%d\n%d\t%d\n%d\t%d\n", e, s, e, s, e, s)
			}
		}
	}
	tr.ObsD = len(tr.Obs) / (tr.T * tr.ObsS)
	if err := npz.WriteTrajectory(p("test.npz"), tr); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("trace.tsv"), []byte(trace.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	const budget = 400
	out := mustRun(t, "encode", "-m", p("m.wmm"), "--access", p("trace.tsv"), "--budget", fmt.Sprint(budget), "-o", p("a.wmz"), p("test.npz"))
	for _, want := range []string{"coded by rate and distortion with member ", "states per level (λ):", "distortion against the source observations (quantizer and coding together)"} {
		if !strings.Contains(out, want) {
			t.Errorf("encode --access: no %q in\n%s", want, out)
		}
	}
	m := regexp.MustCompile(`distortion against the source observations ([0-9.e+-]+), access-weighted ([0-9.e+-]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("encode --access: no distortion in\n%s", out)
	}
	said, _ := strconv.ParseFloat(m[1], 64)
	saidWeighted, _ := strconv.ParseFloat(m[2], 64)
	var info struct {
		Bits float64 `json:"bits_per_state"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", "-m", p("m.wmm"), p("a.wmz"))), &info); err != nil {
		t.Fatal(err)
	}
	if info.Bits > budget || info.Bits < 0.99*budget {
		t.Errorf("file of %.2f bits/state, budget %v", info.Bits, budget)
	}
	mustRun(t, "verify", "-q", "-m", p("m.wmm"), "--against", p("test.npz"), p("a.wmz"))
	mustRun(t, "decode", "-q", "-m", p("m.wmm"), "-o", p("a.npz"), p("a.wmz"))
	dec, err := npz.ReadTrajectory(p("a.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if dec.T != tr.T || len(dec.Obs) != len(tr.Obs) {
		t.Fatalf("decoded %d states, %d floats; want %d, %d", dec.T, len(dec.Obs), tr.T, len(tr.Obs))
	}
	D := tr.ObsD
	var sum, hotSum, coldSum, nh, nc float64
	for i := range tr.T {
		var di float64
		for s := range tr.ObsS {
			o := (i*tr.ObsS + s) * D
			var e, n float64
			for j := o; j < o+D; j++ {
				x, y := float64(tr.Obs[j]), float64(dec.Obs[j])
				e += (x - y) * (x - y)
				n += x * x
			}
			di += e / n / float64(tr.ObsS)
		}
		sum += di
		if hot[i] {
			hotSum, nh = hotSum+di, nh+1
		} else {
			coldSum, nc = coldSum+di, nc+1
		}
	}
	mean, hotD, coldD := sum/float64(tr.T), hotSum/nh, coldSum/nc
	t.Logf("%.2f bits/state (budget %v); decoded distortion %.5f (encode said %.5f), read states %.5f (said %.5f), never read %.5f", info.Bits, budget, mean, said, hotD, saidWeighted, coldD)
	if math.Abs(mean-said) > 1e-5*mean || math.Abs(hotD-saidWeighted) > 1e-5*hotD {
		t.Errorf("decoded distortion %.6g, access-weighted %.6g; encode said %.6g, %.6g", mean, hotD, said, saidWeighted)
	}
	if !(hotD < 0.95*coldD) {
		t.Errorf("states read: distortion %.5f, never read %.5f", hotD, coldD)
	}
}
