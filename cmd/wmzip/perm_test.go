//go:build unix

package main

import (
	"os"
	"strconv"
	"syscall"
	"testing"
)

// TestOutputPermissions (issue 15, point 4): every verb's output is
// created with mode 0666 less the umask, like other tools' outputs. It
// sets the process's umask, so it is the one test here that does not run
// in parallel with the others.
func TestOutputPermissions(t *testing.T) {
	for _, c := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}} {
		old := syscall.Umask(c.umask) // inherited by the verbs run
		p := small.fresh(t)           // made under the umask
		mustRun(t, "encode", "-q", "-m", p("m.wmm"), "-o", p("t.wmz"), p("test.npz"))
		mustRun(t, "decode", "-q", "-m", p("m.wmm"), "-o", p("back.npz"), p("t.wmz"))
		mustRun(t, "recover", "-q", "-m", p("m.wmm"), "-o", p("fixed.wmz"), p("t.wmz"))
		var counts []byte
		for i := 1; i <= 300; i++ {
			counts = append(counts, []byte(strconv.Itoa(1+3000/(i*i))+"\n")...)
		}
		if err := os.WriteFile(p("counts.txt"), counts, 0o644); err != nil {
			t.Fatal(err)
		}
		mustRun(t, "audit", "-q", "--counts", "--sims", "0", "--plot", p("ccdf.png"), p("counts.txt"))
		syscall.Umask(old)
		for _, f := range []string{"train.npz", "m.wmm", "t.wmz", "back.npz", "fixed.wmz", "ccdf.png"} {
			st, err := os.Stat(p(f))
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != c.want {
				t.Errorf("umask %#o: %s has mode %#o, want %#o", c.umask, f, got, c.want)
			}
		}
	}
}
