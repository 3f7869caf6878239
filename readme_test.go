package wmzip_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestREADME (issue 26, point 4): README.md stays a newcomer's page of at
// most 200 lines, and its library quick start compiles as written: the
// ```go block is a whole program, built here against this module.
func TestREADME(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > 200 {
		t.Errorf("README.md has %d lines, more than 200", n)
	}
	_, rest, ok := strings.Cut(readme, "```go\n")
	if !ok {
		t.Fatal("README.md has no ```go block")
	}
	prog, _, ok := strings.Cut(rest, "```")
	if !ok || !strings.HasPrefix(prog, "package main\n") {
		t.Fatal("README.md's ```go block is not a whole program")
	}
	if testing.Short() {
		t.Skip("short: not building the quick start")
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod := "module quickstart\n\ngo 1.26\n\nrequire github.com/wmzip/wmzip v0.0.0\n\nreplace github.com/wmzip/wmzip => " + root + "\n"
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"go.mod": mod, "go.sum": string(sum), "main.go": prog} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-mod=mod", "-o", os.DevNull, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's quick start does not build: %v\n%s", err, out)
	}
}
