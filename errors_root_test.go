package wmzip_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wmzip/wmzip"
)

// TestErrorsFromTheRoot: the errors a damaged model or file gives are
// matched with the root package's sentinels alone.
func TestErrorsFromTheRoot(t *testing.T) {
	if _, err := wmzip.UnmarshalCodec([]byte("WMZM not a model at all")); !errors.Is(err, wmzip.ErrModelFormat) && !errors.Is(err, wmzip.ErrModelVersion) {
		t.Errorf("UnmarshalCodec of junk: %v, want ErrModelFormat or ErrModelVersion", err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "conformance", "golden.wmz"))
	if err != nil {
		t.Fatal(err)
	}
	b[8] = 0xee // the container version (SPEC.md 6.2)
	if _, err := wmzip.NewFile(bytes.NewReader(b), int64(len(b)), nil); !errors.Is(err, wmzip.ErrVersion) {
		t.Errorf("NewFile of version 0xee: %v, want ErrVersion", err)
	}
}
