package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/wm"
)

func init() {
	register("encode", "compress a trajectory (.npz) into a .wmz file", runEncode)
}

// trajectoryNote ends the help of the verbs that read trajectories.
const trajectoryNote = `
input: a trajectory .npz with codes [T,S,M] or [T,N] (uint8 or uint16), or
float obs [T,S,d] when the model has a quantizer; actions [T] (int32 or
int64), the action leading into each step: without it every action is -1
(none); episode_start [E]: without it the trajectory is one episode.
`

// addUsageNote prints note after a verb's flags in its help.
func addUsageNote(fs *flag.FlagSet, note string) {
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprint(fs.Output(), note)
	}
}

func runEncode(args []string) error {
	fs := newFlags("encode", "-m model.wmm [--lambda X | --distortion D | --access trace.tsv --budget B [--tau T] [--alloc-space lambda|bits] [--tail ranked|flat] [--tail-guard G]] [flags] -o out.wmz in.npz")
	addUsageNote(fs, trajectoryNote)
	modelPath := fs.String("m", "", "model file (required)")
	out := fs.String("o", "", "output .wmz (required)")
	lossless := fs.Bool("lossless", false, "code every coordinate (the default unless --lambda or --distortion is given)")
	lambdaF := fs.Float64("lambda", -1, "retention trade-off λ ≥ 0: keep a coordinate iff λ·ê·V ≥ H (needs a model trained with a gate)")
	distortion := fs.Float64("distortion", -1, "find the least-storage λ whose encoding of this file has mean relative distortion ≤ D")
	keyframe := fs.Int("keyframe", format.DefaultKeyframeInterval, "keyframe interval G: most states per independently decodable chunk")
	access := fs.String("access", "", "access trace (header \"episode<TAB>step\", one line per access; package ctmc): store each state at one of 16 retention levels (15 λ fitted to the file, and lossless) by its access rank r, weight r^-τ scaling its λ (or its bits, --alloc-space), the file within --budget; needs a model with a gate")
	budget := fs.Float64("budget", 0, "with --access: average bits/state of the file, model excluded")
	tau := fs.Float64("tau", 1, "with --access: exponent τ ≥ 0 of the rank weights w(r) = r^-τ (0: uniform)")
	space := fs.String("alloc-space", string(defaultAllocSpace), "with --access: what the rank weights scale: lambda (state i's retention λ_i ∝ w_i, the Lagrangian of minimising access-weighted distortion under the budget; a state takes the highest ladder λ at or below λ_i) or bits (state i's bit budget b_i ∝ w_i; it takes the highest level whose measured cost fits). lambda is the default: in bench alloc (docs/results-ctmc.md) it has the lower access-weighted distortion (τ = 1: on 3 of 5 families and on average; τ = 0: on all five), though at τ = 1 the heavier tail on 4 of 5")
	guard := fs.Float64("tail-guard", defaultTailGuard, "with --access: the tail guard G: the half of the states read least may lose at most G times the distortion one λ for every state (τ = 0, access-blind) would give them at the same budget (predicted from the measured ladder; every state is floored at the lowest level that keeps it); 0 turns the guard off")
	tail := fs.String("tail", string(defaultTail), "with --access: ranked (every state weighs r^-τ) or flat (a ranked core, the smallest set of top-ranked states carrying 80% of the accesses, and a flat tail: w = min(r, k)^-τ, k the core's rank cut; ranks among rarely read states are noise). ranked is the default: flat did not meet bench alloc's bar either (docs/results-ctmc.md)")
	embed := fs.Bool("embed-model", false, "store the model in the file so that it decodes without -m")
	quiet := fs.Bool("q", false, "no progress or summary output")
	threads := threadsFlag(fs, "encoding losslessly or at --lambda")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *modelPath == "" {
		return errors.New("missing -m model.wmm")
	}
	if *out == "" {
		return errors.New("missing -o out.wmz")
	}
	if len(pos) != 1 {
		return errors.New("want exactly one input trajectory")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	withLambda, withDist := set["lambda"], set["distortion"]
	if *lossless && (withLambda || withDist) || withLambda && withDist {
		return errors.New("--lossless, --lambda and --distortion exclude each other")
	}
	if withDist && (!(*distortion >= 0) || math.IsInf(*distortion, 0)) {
		return fmt.Errorf("--distortion %v: want a finite D ≥ 0", *distortion)
	}
	if *access != "" || set["budget"] || set["tau"] || set["alloc-space"] || set["tail"] || set["tail-guard"] {
		if *access == "" {
			return errors.New("--budget, --tau, --alloc-space, --tail and --tail-guard need --access trace.tsv")
		}
		if *lossless || withLambda || withDist {
			return errors.New("--access excludes --lossless, --lambda and --distortion (the levels come from the trace and the budget)")
		}
		if !set["budget"] {
			return errors.New("--access needs --budget B (average bits/state of the file)")
		}
		if !(*budget > 0) || math.IsInf(*budget, 0) {
			return fmt.Errorf("--budget %v: want a positive number of bits/state", *budget)
		}
		if !(*tau >= 0) || math.IsInf(*tau, 0) {
			return fmt.Errorf("--tau %v: want a finite τ ≥ 0", *tau)
		}
		if err := checkTailGuard(*guard); err != nil {
			return err
		}
	}
	aspace, err := parseAllocSpace(*space)
	if err != nil {
		return err
	}
	tmode, err := parseTailMode(*tail)
	if err != nil {
		return err
	}
	lambda := uint32(format.LambdaLossless)
	if withLambda {
		if lambda, err = gate.LambdaFixed(*lambdaF); err != nil {
			return fmt.Errorf("--lambda %v: want λ ≥ 0, below 65536 (or inf: lossless)", *lambdaF)
		}
	}
	m, err := loadModel(*modelPath)
	if err != nil {
		return err
	}
	tr, err := loadStates(pos[0], m)
	if err != nil {
		return err
	}
	if tr.T == 0 {
		return fmt.Errorf("%s: no states to encode", pos[0])
	}
	if *access != "" {
		return encodeByAccess(m, tr, *access, *out, *budget, *tau, aspace, tmode, *guard, *keyframe, *embed, *quiet)
	}
	if withDist {
		return encodeDistortion(m, tr, *out, *distortion, *keyframe, *embed, *quiet)
	}
	f, err := atomicfile.Create(*out)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<16)
	acct, err := encodeTo(bw, m, tr, progress(*quiet, "encoding"), format.WithKeyframeInterval(*keyframe), format.WithEmbeddedModel(*embed), format.WithLambda(lambda), threads())
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	size, _ := f.Seek(0, 1)
	if err := f.Commit(); err != nil {
		return err
	}
	if !*quiet {
		printWrote(m, *out, tr.T, size, lambda, acct)
	}
	return nil
}

// printWrote prints the summary of a written file.
func printWrote(m *wm.Model, out string, states int, size int64, lambda uint32, acct format.Account) {
	fmt.Printf("wrote %s: %d states, %d bytes, %.1f bits/state", out, states, size, float64(size)*8/float64(max(states, 1)))
	if lambda != format.LambdaLossless {
		fmt.Printf(", retained %.4f", float64(acct.Retained)/float64(max(acct.States, 1)*int64(m.Geom.N())))
		if p, err := gate.FromModel(m); err == nil {
			fmt.Printf(", distortion %.6g", p.RelDistortion(acct.DistSum, acct.States))
		}
	}
	fmt.Println()
}

// encodeTo writes every episode of tr to w and returns the writer's account.
func encodeTo(w io.Writer, m *wm.Model, tr *npz.Trajectory, prog func(int, int), opts ...format.Option) (format.Account, error) {
	a, _, err := encodeWith(w, m, tr, prog, nil, nil, opts...)
	return a, err
}

// countWriter counts and discards.
type countWriter struct{ n int64 }

func (c *countWriter) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

// encodeDistortion writes tr at the least-storage λ whose encoding meets
// the distortion target (format.SearchLambda).
func encodeDistortion(m *wm.Model, tr *npz.Trajectory, out string, target float64, keyframe int, embed, quiet bool) error {
	report := func(p format.Probe) {
		if quiet {
			return
		}
		note := ""
		switch {
		case p.Sample:
			note = fmt.Sprintf("  (sample of %d states)", p.States)
		case p.Stopped:
			note = fmt.Sprintf("  (stopped after %d states)", p.States)
		case p.States < int64(tr.T):
			note = fmt.Sprintf("  (continued for %d states)", p.States)
		}
		fmt.Fprintf(os.Stderr, "  lambda %-10.4g distortion %.6g%s\n", float64(p.Lambda)/65536, p.Distortion, note)
	}
	r, err := format.SearchLambda(context.Background(), m, episodes(tr), target, report,
		format.WithKeyframeInterval(keyframe), format.WithEmbeddedModel(embed))
	if errors.Is(err, format.ErrNoLambda) {
		return fmt.Errorf("%v: use --lossless", err)
	}
	if err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(os.Stderr, "  search: %.2f encodes of the file\n", r.Encodes)
		fmt.Printf("lambda %.6g: distortion %.6g (target %g)\n", float64(r.Lambda)/65536, r.Distortion, target)
	}
	f, err := atomicfile.Create(out)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(r.File); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if !quiet {
		printWrote(m, out, tr.T, int64(len(r.File)), r.Lambda, r.Account)
	}
	return nil
}
