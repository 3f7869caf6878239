package baseline

import (
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// tool is a command-line compressor that reads stdin and writes stdout.
type tool struct {
	name string // the Result name: the command as a person would type it
	bin  string
	args []string
	// unpack decompresses stdin to stdout; tests use it to check round trips.
	unpack []string
}

// tools are the external compressors, each at its strongest setting. xz is
// pinned to one thread so its output does not depend on the machine.
var tools = []tool{
	{"xz -9e", "xz", []string{"-9e", "-T1", "-c"}, []string{"-d", "-c"}},
	{"brotli -q 11 --large_window=30", "brotli", []string{"-q", "11", "--large_window=30", "-c"}, []string{"-d", "--large_window=30", "-c"}},
	{"zstd --ultra -22 --long=31", "zstd", []string{"--ultra", "-22", "--long=31", "-c", "-q"}, []string{"-d", "--long=31", "-c", "-q"}},
}

// run feeds src to the tool and returns what it writes. zstd is told the
// input size, as it knows it for a file: otherwise --long=31 sizes its window
// and level 22's tables for 2 GiB of input (800 MB of memory) and writes no
// content size into the frame.
func (tl tool) run(args []string, src []byte) ([]byte, error) {
	if tl.bin == "zstd" && args[0] != "-d" {
		args = append(args[:len(args):len(args)], "--stream-size="+strconv.Itoa(len(src)))
	}
	cmd := exec.Command(tl.bin, args...)
	cmd.Stdin = bytes.NewReader(src)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", tl.bin, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// runExternal measures each tool alone and, given training bytes, over
// train+test minus train alone. A missing or failing tool is reported as
// unavailable, with the reason in the note, rather than failing the run.
func runExternal(t int, test, train []byte, skip bool, keep func(string, []byte)) []Result {
	var out []Result
	for _, tl := range tools {
		given := tl.name + " given train"
		why := ""
		if skip {
			why = "external tools skipped"
		} else if _, err := exec.LookPath(tl.bin); err != nil {
			why = tl.bin + " not on PATH"
		}
		if why != "" {
			out = append(out, unavailable(tl.name, why), unavailable(given, why))
			continue
		}

		alone, err := tl.run(tl.args, test)
		if err != nil {
			out = append(out, unavailable(tl.name, err.Error()), unavailable(given, err.Error()))
			continue
		}
		keep(tl.name, alone)
		out = append(out, sized(tl.name, int64(len(alone)), t, ""))

		if train == nil {
			out = append(out, unavailable(given, noTrain))
			continue
		}
		zt, err := tl.run(tl.args, train)
		if err != nil {
			out = append(out, unavailable(given, err.Error()))
			continue
		}
		zb, err := tl.run(tl.args, append(append(make([]byte, 0, len(train)+len(test)), train...), test...))
		if err != nil {
			out = append(out, unavailable(given, err.Error()))
			continue
		}
		keep(given, zb)
		out = append(out, difference(given, int64(len(zb)), int64(len(zt)), t))
	}
	return out
}
