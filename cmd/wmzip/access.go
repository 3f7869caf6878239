package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"

	"github.com/wmzip/wmzip/alloc"
	"github.com/wmzip/wmzip/ctmc"
	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/wm"
)

func parseTailMode(v string) (alloc.Tail, error) {
	switch m := alloc.Tail(v); m {
	case alloc.TailRanked, alloc.TailFlat:
		return m, nil
	}
	return "", fmt.Errorf("--tail %q: want ranked or flat", v)
}

func parseAllocSpace(v string) (alloc.Space, error) {
	switch s := alloc.Space(v); s {
	case alloc.SpaceBits, alloc.SpaceLambda:
		return s, nil
	}
	return "", fmt.Errorf("--alloc-space %q: want bits or lambda", v)
}

func checkTailGuard(g float64) error {
	if g != 0 && !(g >= 1 && !math.IsInf(g, 0)) {
		return fmt.Errorf("--tail-guard %v: want 0 (off) or a finite factor ≥ 1", g)
	}
	return nil
}

// traceCounts reads an access trace and returns the access count of every
// state of tr in file order, the accesses counted, and the accesses to
// states tr does not have (ignored).
func traceCounts(path string, tr *npz.Trajectory) (counts []int64, used, outside int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, 0, err
	}
	defer f.Close()
	acc, err := ctmc.ReadTrace(f)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	eps := tr.Episodes()
	counts = make([]int64, tr.T)
	for _, a := range acc {
		if a.Episode >= int64(len(eps)) || a.Step >= int64(eps[a.Episode][1]-eps[a.Episode][0]) {
			outside++
			continue
		}
		counts[eps[a.Episode][0]+int(a.Step)]++
		used++
	}
	return counts, used, outside, nil
}

// encodeByAccess is `wmzip encode --access`.
func encodeByAccess(m *wm.Model, tr *npz.Trajectory, tracePath, out string, budget, tau float64, space alloc.Space, tail alloc.Tail, guard float64, keyframe int, embed, quiet bool) error {
	logf := func(format string, a ...any) {
		if !quiet {
			fmt.Fprintf(os.Stderr, format+"\n", a...)
		}
	}
	p, err := gate.FromModel(m)
	if err != nil {
		return fmt.Errorf("--access needs a model trained with a retention gate (wmzip train calibrates one): %w", err)
	}
	counts, used, outside, err := traceCounts(tracePath, tr)
	if err != nil {
		return err
	}
	if tr.T == 0 {
		return errors.New("the trajectory has no states")
	}
	if outside > 0 {
		logf("%s: %d of %d accesses name states the trajectory does not have (ignored)", tracePath, outside, used+outside)
	}
	if used == 0 {
		logf("%s: no access to a state of the trajectory: every state ranks alike (uniform allocation)", tracePath)
	}
	core, err := alloc.TailCore(tail, counts)
	if err != nil {
		return err
	}
	if core > 0 {
		logf("flat tail: the core is the states of access rank ≤ %d (%.0f%% of the accesses); the rest weigh as rank %d", core, 100*alloc.CoreMass, core)
	}
	eps := episodes(tr)
	l, err := alloc.FitLadder(m, eps, keyframe, min(2, runtime.GOMAXPROCS(0)), budget, logf)
	if err != nil {
		return err
	}
	var opts []format.Option
	if embed {
		opts = append(opts, format.WithEmbeddedModel(true))
	}
	r, err := alloc.Allocate(m, eps, l, ctmc.Ranks(counts), alloc.Config{Keyframe: keyframe, Budget: budget, Tau: tau, Space: space, Core: core, Guard: guard, Logf: logf, Options: opts})
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(out, r.File); err != nil {
		return err
	}
	if !quiet {
		var dist, wdist float64
		var sumDist uint64
		for i, a := range r.Accounts {
			sumDist += a.DistSum
			wdist += float64(counts[i]) * p.RelDistortion(a.DistSum, 1)
		}
		dist = p.RelDistortion(sumDist, int64(tr.T))
		g := "no tail guard"
		if guard > 0 {
			g = fmt.Sprintf("tail guard %g", guard)
		}
		fmt.Printf("wrote %s: %d states, %d bytes, %.1f bits/state (budget %g, τ %g in %s space, %s tail, %s, %d encodings), distortion %.6g",
			out, tr.T, len(r.File), r.Bits/float64(tr.T), budget, tau, space, tail, g, r.Attempts, dist)
		if used > 0 {
			fmt.Printf(", access-weighted %.6g", wdist/float64(used))
		}
		fmt.Println()
		fmt.Print("states per level (λ):")
		for lv, c := range r.Counts {
			if c > 0 {
				fmt.Printf(" %d (%s): %d", lv, alloc.LambdaString(l.Lambdas[lv]), c)
			}
		}
		fmt.Println()
	}
	return nil
}
