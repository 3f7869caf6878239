package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/internal/format"
)

func init() {
	register("recover", "rebuild a .wmz cut short by a crash, or damaged, from its valid records", runRecover)
}

func runRecover(args []string) error {
	fs := newFlags("recover", "[-m model.wmm] -o fixed.wmz in.wmz")
	modelPath := fs.String("m", "", "model file (default: the embedded one)")
	out := fs.String("o", "", "output .wmz (required; must differ from the input)")
	quiet := fs.Bool("q", false, "no summary output")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return errors.New("missing -o fixed.wmz")
	}
	if len(pos) != 1 {
		return errors.New("want exactly one .wmz file")
	}
	if err := checkFiles([]*string{&pos[0], modelPath}, output{flag: "-o", path: out}); err != nil {
		return err
	}
	c, err := loadCodec(*modelPath)
	if err != nil {
		return err
	}
	in, err := openInput(pos[0])
	if err != nil {
		return err
	}
	defer in.Close()
	st := in
	f, err := atomicfile.Create(*out)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<16)
	rec, info, err := wmzlib.Recover(bw, in, st.Size(), c)
	if errors.Is(err, format.ErrNoModel) || errors.Is(err, format.ErrModelMismatch) {
		return wmzError(pos[0], err, *modelPath)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	if info.States == 0 && !rec.Complete {
		why := "every chunk is damaged"
		if rec.Stop != nil {
			why = rec.Stop.Error()
		}
		return fmt.Errorf("%s: nothing recoverable, no complete chunk of states: %s", pos[0], why)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if !*quiet {
		printRecovery(pos[0], *out, st.Size(), rec, info)
	}
	return nil
}

// printRecovery says what recover kept, rebuilt and lost: the header, the
// damaged records by episode and steps, where episodes continued after a
// gap went, and where the scan stopped.
func printRecovery(in, out string, size int64, rec format.Recovery, info format.Info) {
	if rec.Complete {
		fmt.Printf("%s: complete file, copied unchanged: %d states in %d episodes\n", in, info.States, info.Episodes)
		return
	}
	fmt.Printf("wrote %s: %d states in %d episodes, %d chunks; kept %d of %d bytes\n",
		out, info.States, info.Episodes, info.Chunks, info.FileBytes-info.IndexBytes, size)
	switch h := rec.Header; {
	case h == nil:
	case h.Err != nil && h.Exact:
		fmt.Printf("  header: damaged (%v); rebuilt from the index, trailer, level table and model, identical to the original (its checksum matches)\n", h.Err)
	case h.Err != nil:
		fmt.Printf("  header: damaged (%v); rebuilt from the index, trailer, level table and model; its checksum did not confirm the %s, taken as the damaged header gives them (every chunk decodes with them)\n", h.Err, strings.Join(h.Guessed, ", "))
	}
	if h := rec.Header; h != nil && h.ModelErr != nil {
		fmt.Printf("  embedded model: damaged (%v); the model given, of the file's model ID, takes its place\n", h.ModelErr)
	}
	for _, g := range rec.Gaps {
		at := fmt.Sprintf("bytes %d to %d: %v", g.Offset, g.Offset+g.Length, g.Err)
		switch {
		case g.Episode < 0:
			fmt.Printf("  lost: a damaged record of unknown episode (%s)\n", at)
		case g.From == g.To:
			fmt.Printf("  lost: the metadata of episode %d, its record damaged (%s); a new record keeps its number and states\n", g.Episode, at)
		case g.To < 0:
			fmt.Printf("  lost: episode %d from step %d, one damaged chunk (%s)\n", g.Episode, g.From, at)
		default:
			fmt.Printf("  lost: episode %d, steps %d to %d (%s)\n", g.Episode, g.From, g.To-1, at)
		}
	}
	for _, m := range rec.Moved {
		if m.To != m.Episode {
			fmt.Printf("  moved: episode %d from step %d on is episode %d (its metadata says so: {\"recovered\":{\"episode\":%d,\"step\":%d}})\n", m.Episode, m.Step, m.To, m.Episode, m.Step)
		}
	}
	if rec.Stop != nil {
		fmt.Printf("  scan ended at byte %d: %v\n", rec.End, rec.Stop)
	}
}
