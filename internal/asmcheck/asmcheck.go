// Package asmcheck checks, in a package's tests, that its committed
// assembly and stubs are what its avo generator (the _generate folder
// beside them) writes.
package asmcheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Generated runs the generator in _generate with -pkg pkg, -out asm and
// -stubs stubs into a temporary folder and checks that the committed files
// of those names match, apart from their first line, which records the
// command's arguments. It runs offline (GOPROXY=off) and skips t when the
// go command or the avo module is not available, and under -short.
func Generated(t *testing.T, pkg, asm, stubs string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short")
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	cache, err := exec.Command(gocmd, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skip("go env GOMODCACHE failed")
	}
	avo := filepath.Join(strings.TrimSpace(string(cache)), "github.com", "mmcloughlin", "avo@v0.5.0")
	if _, err := os.Stat(avo); err != nil {
		t.Skip("avo v0.5.0 not in the module cache")
	}
	dir := t.TempDir()
	cmd := exec.Command(gocmd, "run", ".", "-pkg", pkg,
		"-out", filepath.Join(dir, asm), "-stubs", filepath.Join(dir, stubs))
	cmd.Dir = "_generate"
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOWORK=off", "GOOS=", "GOARCH=", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("generator did not run offline: %v\n%s", err, out)
	}
	for _, name := range []string{asm, stubs} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(afterFirstLine(got), afterFirstLine(want)) {
			t.Errorf("%s differs from the generator's output; run go generate ./%s", name, pkg)
		}
	}
}

func afterFirstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return nil
}
