//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputPermissions (issue 15, point 4): outputs get 0666 less the
// umask, like files made by os.Create, not CreateTemp's 0600.
func TestOutputPermissions(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}, {0o002, 0o664}} {
		old := syscall.Umask(c.umask)
		path := filepath.Join(dir, "out")
		err := WriteFile(path, []byte("x"))
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != c.want {
			t.Errorf("umask %#o: mode %#o, want %#o", c.umask, got, c.want)
		}
	}
}

// TestErrorNamesOutput (issue 15, point 6): an output in a missing folder
// is reported by its own name, not the temporary file's.
func TestErrorNamesOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodir", "o.wmz")
	err := WriteFile(path, []byte("x"))
	if err == nil {
		t.Fatal("no error for a missing folder")
	}
	if !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), ".tmp-") {
		t.Fatalf("error %q does not name %s alone", err, path)
	}
	if !os.IsNotExist(err) {
		t.Fatalf("error %v is not 'does not exist'", err)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "o"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	f.Abort()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("Abort left %v", left)
	}
}
