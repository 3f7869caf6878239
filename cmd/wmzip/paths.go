package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wmzip/wmzip/internal/atomicfile"
)

// What a verb reads and writes is checked before it does any work: no
// output may name one of its inputs (the same path, a symbolic link to it,
// or another hard link of it), and every output must be writable (its
// folder exists and takes a new file, and it is not a folder). "-" names
// the standard output as an output and the standard input as an input;
// outputs reach it, a device or a symbolic link's target through
// atomicfile, whole and only once complete.

// output is an output file named by a flag.
type output struct {
	flag string  // "-o", "--plot", ...
	path *string // "" when the flag is not given
	// inPlace marks a file the verb adds to rather than replaces (an
	// access log): it is checked against the inputs only.
	inPlace bool
}

// cleanups run when the verb returns (main runs them): the standard input
// spooled to a temporary file is removed.
var cleanups []func()

// checkFiles checks a verb's inputs and outputs before it starts; empty
// names are skipped. An input "-" is the standard input, copied to a
// temporary file whose name replaces it (the formats are read by random
// access); an output "-" becomes /dev/stdout, and the verb's own messages
// then go to the standard error.
func checkFiles(ins []*string, outs ...output) error {
	toStdout := false
	for _, o := range outs {
		if *o.path == "-" {
			*o.path = "/dev/stdout"
		}
		if atomicfile.Std(*o.path) == 1 {
			if toStdout {
				return errors.New("only one output can go to the standard output (-)")
			}
			toStdout = true
		}
	}
	for i, o := range outs {
		p := *o.path
		if p == "" || atomicfile.Std(p) != 0 {
			continue
		}
		for _, in := range ins {
			if *in == "" || *in == "-" {
				continue
			}
			if how := sameFile(p, *in); how != "" {
				return fmt.Errorf("%s %s %s the input %s: wmzip never writes over its inputs; name another output file", o.flag, p, how, *in)
			}
		}
		for _, q := range outs[:i] {
			if *q.path != "" && sameFile(p, *q.path) != "" {
				return fmt.Errorf("%s %s and %s %s are the same file: name two files", q.flag, *q.path, o.flag, p)
			}
		}
	}
	for _, o := range outs {
		if *o.path == "" || o.inPlace {
			continue
		}
		if err := atomicfile.Check(*o.path); err != nil {
			return outputError(o, err)
		}
	}
	if err := s3Check(ins, outs); err != nil {
		return err
	}
	stdin := 0
	for _, in := range ins {
		if *in == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return errors.New("only one input can be the standard input (-)")
	}
	for _, in := range ins {
		if *in == "-" {
			p, err := spoolStdin()
			if err != nil {
				return err
			}
			*in = p
		}
	}
	if toStdout {
		os.Stdout = os.Stderr // the data goes to the real standard output
	}
	return nil
}

// sameFile says how the output path names the file of the input in ("is",
// "is a symbolic link to", ...), or "" if it does not. A device never
// counts: writing one does not destroy it.
func sameFile(path, in string) string {
	if filepath.Clean(path) == filepath.Clean(in) {
		return "is"
	}
	pi, err := os.Stat(path)
	if err != nil || !pi.Mode().IsRegular() {
		return ""
	}
	ii, err := os.Stat(in)
	if err != nil || !os.SameFile(pi, ii) {
		return ""
	}
	if li, err := os.Lstat(path); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		return "is a symbolic link to"
	}
	if li, err := os.Lstat(in); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		return "is the file behind"
	}
	return "is another name (a hard link) of"
}

// outputError says why an output cannot be written, and what to do.
func outputError(o output, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %s: its folder %s does not exist", o.flag, *o.path, filepath.Dir(*o.path))
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s %s: no permission to write it or its folder", o.flag, *o.path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if err.Error() == "is a directory" {
		return fmt.Errorf("%s %s is a folder: name a file (in it, for example)", o.flag, *o.path)
	}
	return fmt.Errorf("%s %s: %v", o.flag, *o.path, err)
}

// spoolStdin copies the standard input to a temporary file, removed when
// the verb returns, and returns its name.
func spoolStdin() (string, error) {
	dir, err := os.MkdirTemp("", "wmzip-")
	if err != nil {
		return "", err
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	p := filepath.Join(dir, "stdin")
	f, err := os.Create(p)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, os.Stdin); err != nil {
		f.Close()
		return "", fmt.Errorf("reading the standard input: %w", err)
	}
	return p, f.Close()
}
