package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/atomicfile"
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
	in, err := os.Open(pos[0])
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	f, err := atomicfile.Create(*out)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<16)
	rec, info, err := wmzlib.Recover(bw, in, st.Size(), c)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	if info.States == 0 && !rec.Complete {
		return fmt.Errorf("%s: nothing recoverable, no complete chunk of states: %v", pos[0], rec.Stop)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if !*quiet {
		switch {
		case rec.Complete:
			fmt.Printf("%s: complete file, copied unchanged: %d states in %d episodes\n", pos[0], info.States, info.Episodes)
		default:
			fmt.Printf("wrote %s: %d states in %d episodes, %d chunks; kept %d of %d bytes\n",
				*out, info.States, info.Episodes, info.Chunks, info.FileBytes-info.IndexBytes, st.Size())
			for _, g := range rec.Gaps {
				fmt.Printf("  skipped bytes %d to %d, a damaged record and the rest of its episode: %v\n", g.Offset, g.Offset+g.Length, g.Err)
			}
			fmt.Printf("  scan ended at byte %d: %v\n", rec.End, rec.Stop)
		}
	}
	return nil
}
