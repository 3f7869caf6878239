package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/alloc"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/internal/check"
	"github.com/wmzip/wmzip/internal/ctmc"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/traj"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/train"
)

func checkTailGuard(g float64) error {
	if g != 0 && !(g >= 1 && !math.IsInf(g, 0)) {
		return fmt.Errorf("--tail-guard %v: want 0 (off) or a finite factor ≥ 1", g)
	}
	return nil
}

// accessArgs are encode --access's flags.
type accessArgs struct {
	trace       string
	budget, tau float64
	space       alloc.Space
	tail        alloc.Tail
	guard       float64
}

// accessFlags checks encode's --access flags (set: the flags given;
// other: a mode --access excludes is set).
func accessFlags(set map[string]bool, trace string, other bool, budget, tau float64, space, tail string, guard float64) (accessArgs, error) {
	a := accessArgs{trace: trace, budget: budget, tau: tau, guard: guard}
	if trace != "" || set["budget"] || set["tau"] || set["alloc-space"] || set["tail"] || set["tail-guard"] {
		switch {
		case trace == "":
			return a, errors.New("--budget, --tau, --alloc-space, --tail and --tail-guard need --access trace.tsv")
		case other:
			return a, errors.New("--access excludes --lossless, --lambda and --distortion (the levels come from the trace and the budget)")
		case !set["budget"]:
			return a, errors.New("--access needs --budget B (average bits/state of the file)")
		case !(budget > 0) || math.IsInf(budget, 0):
			return a, fmt.Errorf("--budget %v: want a positive number of bits/state", budget)
		case !(tau >= 0) || math.IsInf(tau, 0):
			return a, fmt.Errorf("--tau %v: want a finite τ ≥ 0", tau)
		}
		if err := checkTailGuard(guard); err != nil {
			return a, err
		}
	}
	var err error
	if a.space, err = alloc.ParseSpace(space); err != nil {
		return a, fmt.Errorf("--alloc-space: %w", err)
	}
	if a.tail, err = alloc.ParseTail(tail); err != nil {
		return a, fmt.Errorf("--tail: %w", err)
	}
	return a, nil
}

// encodeByAccess is `wmzip encode --access`. A model with a retention
// gate gives each state a retention level; one without (a family, the
// default for float obs) codes the file by rate and distortion, each
// state at its level's λ, with one of its members, and measures the
// distortion against the trajectory's float obs when it has them.
func encodeByAccess(c *wmzlib.Codec, path string, a accessArgs, out string, keyframe int, embed, quiet bool) error {
	_, gerr := gate.FromModel(c.Model())
	rd := gerr != nil
	if rd && c.Quantizer() == nil {
		return fmt.Errorf("--access needs a model trained with a retention gate (wmzip train calibrates one) or with a quantizer of float obs: %w", gerr)
	}
	var tr *npz.Trajectory
	var err error
	if rd {
		// Coded by rate and distortion from the float obs themselves
		// (the source the distortion is measured against), or from the
		// codes when the file has none.
		if tr, err = npz.ReadTrajectory(path); err == nil && tr.Obs != nil {
			err = check.ObsShape(path, tr.ObsS, tr.ObsD, c.Slots(), c.Quantizer().Dim())
		} else if err == nil {
			tr, err = traj.ReadCodes(path, c)
		}
	} else {
		tr, err = traj.ReadCodes(path, c)
	}
	if err != nil {
		return err
	}
	logf := logger(quiet)
	f, err := os.Open(a.trace)
	if err != nil {
		return err
	}
	acc, err := ctmc.ReadTrace(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", a.trace, err)
	}
	eps := train.SplitTrajectory(tr, rd && tr.Obs != nil)
	lens := make([]int, len(eps))
	for i, e := range eps {
		lens[i] = len(e.Actions)
	}
	counts, outside := alloc.Counts(acc, lens)
	used := int64(len(acc)) - outside
	if outside > 0 {
		logf("%s: %d of %d accesses name states the trajectory does not have (ignored)", a.trace, outside, used+outside)
	}
	if used == 0 {
		logf("%s: no access to a state of the trajectory: every state ranks alike (uniform allocation)", a.trace)
	}
	var buf bytes.Buffer
	r, err := alloc.Store(context.Background(), &buf, c, eps, counts, a.budget,
		alloc.WithTau(a.tau), alloc.WithAllocation(a.space, a.tail), alloc.WithTailGuard(a.guard),
		alloc.WithKeyframeInterval(keyframe), alloc.WithEmbeddedModel(embed), alloc.WithLog(logf))
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(out, buf.Bytes()); err != nil {
		return err
	}
	if quiet {
		return nil
	}
	mean, weighted, perLevel, err := r.Distortion(c, counts)
	if err != nil {
		return err
	}
	g := "no tail guard"
	if a.guard > 0 {
		g = fmt.Sprintf("tail guard %g", a.guard)
	}
	if r.RD() {
		against := "the source observations"
		if !r.Source {
			against = "the quantizer's reconstruction of the codes given"
		}
		how := "coded by rate and distortion"
		if m := memberOf(c, buf.Bytes()); m != "" {
			how += " with " + m
		}
		fmt.Printf("wrote %s: %d states, %d bytes, %.1f bits/state (budget %g, τ %g in %s space, %s tail, %s, %d encodings), %s; distortion against %s %.6g",
			out, tr.T, buf.Len(), r.Bits, a.budget, a.tau, a.space, a.tail, g, r.Encodings, how, against, mean)
	} else {
		fmt.Printf("wrote %s: %d states, %d bytes, %.1f bits/state (budget %g, τ %g in %s space, %s tail, %s, %d encodings), distortion %.6g",
			out, tr.T, buf.Len(), r.Bits, a.budget, a.tau, a.space, a.tail, g, r.Encodings, mean)
	}
	if used > 0 {
		fmt.Printf(", access-weighted %.6g", weighted)
	}
	fmt.Println()
	fmt.Print("states per level (λ):")
	for lv, n := range perLevel {
		if n > 0 {
			fmt.Printf(" %d (%s): %d", lv, r.LevelString(lv), n)
		}
	}
	fmt.Println()
	if r.RD() {
		printReport(r.Report, -1, true)
	}
	return nil
}
