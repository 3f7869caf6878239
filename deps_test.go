package wmzip_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// rootDeps are the packages from outside the standard library and this
// module that importing the codec may pull in: the SIMD kernels of the
// quantizer's distances (vek), CPU feature detection, and the hashes of
// signed files' keys and signatures (BLAKE2b, scrypt: package sign). Training (package
// train), plots, progress bars and the command line's needs stay out.
var rootDeps = []string{
	"github.com/chewxy/math32",
	"github.com/viterin/partial",
	"github.com/viterin/vek",
	"github.com/viterin/vek/internal/functions",
	"github.com/viterin/vek/vek32",
	"golang.org/x/crypto/blake2b",
	"golang.org/x/crypto/pbkdf2",
	"golang.org/x/crypto/scrypt",
	"golang.org/x/exp/constraints",
	"golang.org/x/exp/rand",
	"golang.org/x/exp/slices",
	"golang.org/x/sys/cpu",
}

// TestRootDependencies (issue 26): the codec's import graph holds what
// coding needs and nothing more.
func TestRootDependencies(t *testing.T) {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	var got []string
	for _, p := range strings.Fields(string(out)) {
		if !strings.HasPrefix(p, "github.com/wmzip/wmzip") {
			got = append(got, p)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, rootDeps) {
		t.Errorf("the root package imports\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(rootDeps, "\n\t"))
	}
	all, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(all)) {
		for _, banned := range []string{"gonum.org/v1/plot", "progressbar", "golang.org/x/term", "net/http", "/npz", "/alloc", "/ctmc", "/train"} {
			if strings.Contains(p, banned) {
				t.Errorf("the root package imports %s", p)
			}
		}
	}
}

// TestModuleRequirements: a program importing the library inherits the
// library module's requirements in its go.sum, so the list stays short
// (the CLI and the object-store face are modules of their own).
func TestModuleRequirements(t *testing.T) {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var mods []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "require" && len(f) > 1 && f[1] == "(":
			in = true
		case f[0] == "require" && len(f) >= 3:
			mods = append(mods, f[1])
		case in && f[0] == ")":
			in = false
		case in:
			mods = append(mods, f[0])
		}
	}
	if len(mods) == 0 || len(mods) > 12 {
		t.Errorf("go.mod requires %d modules, want 1..12: %v", len(mods), mods)
	}
}
