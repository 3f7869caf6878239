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

// TestThroughSymlink (issue 24, point 1): a symbolic link is written
// through, also one to a file that does not exist yet; the link stays.
func TestThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(sub, "target")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink("sub/target", link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(sub, "new"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ link, target string }{{link, target}, {dangling, filepath.Join(sub, "new")}} {
		if err := WriteFile(c.link, []byte("new")); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(c.link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s is no longer a link", c.link)
		}
		if b, err := os.ReadFile(c.target); err != nil || string(b) != "new" {
			t.Fatalf("%s holds %q, %v", c.target, b, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*", ".*tmp-*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestDeviceWritten (issue 24, point 1): a device is written, not
// replaced; a folder is refused before anything is written.
func TestDeviceWritten(t *testing.T) {
	if _, err := os.Stat("/dev/null"); err != nil {
		t.Skip("no /dev/null")
	}
	if err := Check("/dev/null"); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile("/dev/null", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode().IsRegular() {
		t.Fatal("/dev/null was replaced")
	}
	dir := t.TempDir()
	for _, err := range []error{Check(dir), WriteFile(dir, []byte("x"))} {
		if err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Fatalf("a folder as the output: %v", err)
		}
	}
	if err := Check(filepath.Join(dir, "nodir", "x")); !os.IsNotExist(err) {
		t.Fatalf("a missing folder: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("Check left %v", left)
	}
	if Std("/dev/stdout") != 1 || Std("/proc/self/fd/2") != 2 || Std("out") != 0 {
		t.Fatal("Std")
	}
}
