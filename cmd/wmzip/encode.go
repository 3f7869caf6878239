package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/alloc"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/internal/format"
	lam "github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/traj"
	"github.com/wmzip/wmzip/npz"
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
	fs := newFlags("encode", "-m model.wmm [--lambda X | --distortion D | --source-distortion D | --access trace.tsv --budget B [--tau T] [--alloc-space lambda|bits] [--tail ranked|flat] [--tail-guard G]] [flags] -o out.wmz in.npz")
	addUsageNote(fs, trajectoryNote)
	modelPath := fs.String("m", "", "model file (required)")
	out := fs.String("o", "", "output .wmz (required)")
	lossless := fs.Bool("lossless", false, "code every coordinate (the default unless --lambda or --distortion is given)")
	lambdaF := fs.Float64("lambda", -1, "retention trade-off λ ≥ 0, larger keeps more (needs a model with a gate)")
	distortion := fs.Float64("distortion", -1, "smallest file whose distortion against the lossless reconstruction is at most D (0.01: 1%), what retention may lose")
	srcDistortion := fs.Float64("source-distortion", -1, "smallest file whose distortion against the input's float obs is at most D (quantizer and retention together)")
	keyframe := fs.Int("keyframe", format.DefaultKeyframeInterval, "keyframe interval G: most states per independently decodable chunk")
	access := fs.String("access", "", "access trace (TSV \"episode<TAB>step\"): give states read more often more bits, within --budget")
	budget := fs.Float64("budget", 0, "with --access: average bits/state of the file, model excluded")
	tau := fs.Float64("tau", 1, "with --access: exponent τ ≥ 0 of the rank weights w(r) = r^-τ (0: uniform)")
	space := fs.String("alloc-space", string(alloc.DefaultSpace), "with --access: what the rank weights r^-τ scale: lambda (each state's λ) or bits (each state's bits)")
	guard := fs.Float64("tail-guard", alloc.DefaultTailGuard, "with --access: the least-read half of the states may lose at most G times what one λ for all would give them; 0 is off")
	tail := fs.String("tail", string(alloc.DefaultTail), "with --access: ranked (every state weighs r^-τ) or flat (the states outside the core carrying 80% of the accesses weigh alike)")
	embed := fs.Bool("embed-model", false, "store the model in the file so that it decodes without -m")
	quiet := fs.Bool("q", false, "no progress or summary output")
	threads := threadsFlag(fs, "encoding losslessly or at --lambda")
	checkInt("keyframe", keyframe, 1, format.MaxKeyframeInterval, fmt.Sprintf("a keyframe interval of 1 to %d states", format.MaxKeyframeInterval))
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
	withLambda, withDist, withSrc := set["lambda"], set["distortion"], set["source-distortion"]
	modes := 0
	for _, on := range []bool{*lossless, withLambda, withDist, withSrc} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return errors.New("--lossless, --lambda, --distortion and --source-distortion exclude each other")
	}
	if withDist && (!(*distortion >= 0) || *distortion >= 1) {
		return fmt.Errorf("--distortion %v: want D in [0, 1), a mean squared error relative to the squared norm (0.01: 1%%)", *distortion)
	}
	if withSrc && (!(*srcDistortion >= 0) || *srcDistortion >= 1) {
		return fmt.Errorf("--source-distortion %v: want D in [0, 1), a mean squared error relative to the squared norm (0.01: 1%%)", *srcDistortion)
	}
	a, err := accessFlags(set, *access, *lossless || withLambda || withDist || withSrc, *budget, *tau, *space, *tail, *guard)
	if err != nil {
		return err
	}
	lambda := format.LambdaLossless
	if withLambda {
		if lambda, err = lam.FromFloat(*lambdaF); err != nil {
			return fmt.Errorf("--lambda %v: want λ ≥ 0, below 65536 (or inf: lossless)", *lambdaF)
		}
	}
	if err := checkFiles([]*string{&pos[0], modelPath, access}, output{flag: "-o", path: out}); err != nil {
		return err
	}
	if *access == "" && !withDist && !withSrc {
		streamingGC()
	}
	c, err := loadCodec(*modelPath)
	if err != nil {
		return err
	}
	rd := !hasGate(c) && c.Quantizer() != nil // lossy files coded by rate and distortion
	if (withLambda || withDist || withSrc || *access != "") && !hasGate(c) && !rd {
		return fmt.Errorf("%s has no retention gate (it was trained with --gate-holdout 0): --lambda, --distortion, --source-distortion and --access need one; train with the default --gate-holdout, or encode losslessly", *modelPath)
	}
	if withSrc && c.Quantizer() == nil {
		return fmt.Errorf("%s has no quantizer (it was trained on codes): --source-distortion needs float observations and a model trained on such; use --distortion", *modelPath)
	}
	if n := c.Model().Geom.N(); *keyframe > format.MaxChunkCoords/n {
		return fmt.Errorf("--keyframe %d: at most %d with this model's %d coordinates per state", *keyframe, format.MaxChunkCoords/n, n)
	}
	// The trajectory is read state by state (--access reads it whole).
	src, err := npz.OpenTrajectory(pos[0])
	if err != nil {
		return err
	}
	defer src.Close()
	if src.Header().T == 0 {
		return fmt.Errorf("%s: no states to encode", pos[0])
	}
	if *access != "" {
		return encodeByAccess(c, pos[0], a, *out, *keyframe, *embed, *quiet)
	}
	if withDist {
		return encodeDistortion(c, src, *out, wmzlib.WithDistortion(*distortion), *distortion, *keyframe, *embed, *quiet)
	}
	if withSrc {
		if !src.Header().HasObs {
			return fmt.Errorf("%s has no float `obs`: --source-distortion measures against them; use --distortion for codes", pos[0])
		}
		return encodeDistortion(c, src, *out, wmzlib.WithSourceDistortion(*srcDistortion), *srcDistortion, *keyframe, *embed, *quiet)
	}
	f, err := atomicfile.Create(*out)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<16)
	bar := progress(*quiet, "encoding")
	opts := []wmzlib.WriterOption{wmzlib.WithKeyframeInterval(*keyframe), wmzlib.WithEmbeddedModel(*embed), wmzlib.WithEncoderThreads(threads())}
	if withLambda {
		opts = append(opts, wmzlib.WithLambda(*lambdaF))
	}
	w, err := wmzlib.NewWriter(bw, c, opts...)
	if err != nil {
		return err
	}
	if err := traj.Write(w, c, src, bar); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
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
		quant, n := w.QuantizerDistortion()
		if n == 0 {
			quant = -1
		}
		acct := w.Account()
		printWrote(c.Model(), *out, src.Header().T, size, lambda, acct, acct.Report, quant)
	}
	warnAboveRaw(c, *out, src.Header().T, size, *embed)
	return nil
}
