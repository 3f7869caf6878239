package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/traj"
	"github.com/wmzip/wmzip/npz"
)

func init() {
	register("append", "add the episodes of trajectories (.npz) to a .wmz file, in place", runAppend)
}

func runAppend(args []string) error {
	fs := newFlags("append", "[-m model.wmm] [flags] file.wmz in.npz...")
	addUsageNote(fs, trajectoryNote+`
The file keeps its model, geometry, keyframe interval, λ and levels; the
episodes of each input follow its own, numbered on from them. If anything
fails, the file is put back as it was; if the process is killed, 'wmzip
recover' restores the old episodes and the new ones written so far.
`)
	modelPath := fs.String("m", "", "model file (default: the model embedded in the file)")
	quiet := fs.Bool("q", false, "no progress or summary output")
	threads := threadsFlag(fs, "encoding")
	keyPath := fs.String("key", "", "a signed file: re-sign it with this secret key")
	pwFile := fs.String("password-file", "", "with --key: read the key's password from the first line of this file")
	drop := fs.Bool("drop-signature", false, "a signed file: append without re-signing, leaving it unsigned")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return errors.New("want the .wmz file, then the trajectories to append to it")
	}
	target := pos[0]
	if target == "-" {
		return errors.New("append changes a file in place: name the .wmz file, not -")
	}
	ins := []*string{modelPath, keyPath, pwFile}
	for i := range pos[1:] {
		ins = append(ins, &pos[1+i])
	}
	if err := checkFiles(ins, output{flag: "the file", path: &target, inPlace: true}); err != nil {
		return err
	}
	streamingGC()
	c, err := loadCodec(*modelPath)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(target, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file: append changes a .wmz file in place", target)
	}
	// The file is checked (header, model, index) before it is changed, and
	// its index and trailer kept to put back if appending fails.
	old, err := wmzlib.NewFile(f, st.Size(), c)
	if err != nil {
		return wmzError(target, err, *modelPath)
	}
	if c == nil {
		c = old.Codec()
	}
	episodes, tailLen := len(old.Episodes()), old.Info().IndexBytes
	signOpts, err := appendSigning(target, old, *keyPath, *pwFile, *drop)
	if err != nil {
		return err
	}
	if s, ok := old.Signature(); ok {
		tailLen += s.Bytes // the signature record is put back too
	}
	tail := make([]byte, tailLen)
	if _, err := f.ReadAt(tail, st.Size()-tailLen); err != nil {
		return err
	}
	srcs := make([]*npz.TrajectoryReader, 0, len(pos)-1)
	defer func() {
		for _, s := range srcs {
			s.Close()
		}
	}()
	states := 0
	for _, p := range pos[1:] {
		src, err := npz.OpenTrajectory(p)
		if err != nil {
			return err
		}
		srcs = append(srcs, src)
		states += src.Header().T
	}
	bar := progress(*quiet, "appending")
	w, err := wmzlib.Append(f, c, append(signOpts, wmzlib.WithEncoderThreads(threads()))...)
	if err != nil {
		return wmzError(target, err, *modelPath)
	}
	err = func() error {
		for i, src := range srcs {
			if err := traj.Write(w, c, src, nil); err != nil {
				return err
			}
			bar(i+1, len(srcs))
		}
		if err := w.Close(); err != nil {
			return err
		}
		return f.Sync()
	}()
	if err != nil {
		if rerr := restore(f, st.Size()-tailLen, tail); rerr != nil {
			return fmt.Errorf("%v; putting %s back failed too (%v): 'wmzip recover -o fixed.wmz %s' keeps its episodes", err, target, rerr, target)
		}
		return fmt.Errorf("%v (%s is as it was)", err, target)
	}
	if !*quiet {
		st, _ := f.Stat()
		fmt.Printf("appended %d states to %s as episodes %d to %d: %d episodes, %d bytes\n",
			states, target, episodes, episodes+countEpisodes(srcs)-1, episodes+countEpisodes(srcs), st.Size())
	}
	return nil
}

// countEpisodes is the number of episodes the trajectories hold.
func countEpisodes(srcs []*npz.TrajectoryReader) int {
	n := 0
	for _, s := range srcs {
		h := s.Header()
		n += len(h.Episodes())
	}
	return n
}

// restore cuts f back to size bytes and writes tail, its old index and
// trailer, after them: the file as it was before appending.
func restore(f *os.File, size int64, tail []byte) error {
	if err := f.Truncate(size); err != nil {
		return err
	}
	if _, err := f.WriteAt(tail, size); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return err
	}
	return f.Sync()
}
