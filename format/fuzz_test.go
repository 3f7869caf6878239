package format

import (
	"bytes"
	"os"
	"testing"

	"github.com/wmzip/wmzip/wm"
)

// FuzzDecode feeds arbitrary bytes to every decoding path: it must never
// panic, and what decodes must decode the same sequentially and by random
// access.
func FuzzDecode(f *testing.F) {
	if b, err := os.ReadFile(goldenDir + "/golden.wmz"); err == nil {
		f.Add(b)
	}
	var models []*wm.Model
	if raw, err := os.ReadFile(goldenDir + "/golden.wmm"); err == nil {
		if m, err := wm.UnmarshalModel(raw); err == nil {
			models = append(models, m)
		}
	}
	models = append(models, nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := ReadHeader(bytes.NewReader(b)); err != nil && !isFileError(err) {
			t.Fatalf("ReadHeader: unexpected error type %v", err)
		}
		for _, m := range models {
			seq, err1 := readAll(b, m, WithMaxMemory(64<<20))
			ra, err2 := openAll(b, m, WithMaxMemory(64<<20))
			if err1 == nil && err2 == nil {
				if err := sameEpisodes(ra, seq); err != nil {
					t.Fatal(err)
				}
			}
			if err1 == nil && err2 != nil {
				t.Fatalf("sequential decode succeeded, random access failed: %v", err2)
			}
		}
	})
}
