package format

import (
	"bytes"
	"errors"
	"testing"
)

// TestMemoryLimitSweep decodes a file under memory limits from tiny to
// ample: every decoder either succeeds with the full decode or fails with
// ErrTooLarge, never another error, and a tiny limit always fails.
func TestMemoryLimitSweep(t *testing.T) {
	b, _, eps := smallFile(t, true)
	for limit := int64(1); limit <= 1<<24; limit *= 2 {
		opt := WithMaxMemory(limit)
		check := func(what string, got []episode, err error) {
			t.Helper()
			switch {
			case err == nil:
				if d := sameEpisodes(normalize(got), normalize(eps)); d != nil {
					t.Fatalf("limit %d: %s decoded other data: %v", limit, what, d)
				}
			case !errors.Is(err, ErrTooLarge):
				t.Fatalf("limit %d: %s: %v, want ErrTooLarge or success", limit, what, err)
			case limit >= 1<<20:
				t.Fatalf("limit %d: %s: %v with an ample limit", limit, what, err)
			}
			if limit < 64 && err == nil {
				t.Fatalf("limit %d: %s succeeded", limit, what)
			}
		}
		got, err := readAll(b, nil, opt)
		check("Reader", got, err)
		got, err = openAll(b, nil, opt)
		check("Open", got, err)
		f, err := Open(bytes.NewReader(b), int64(len(b)), nil, opt, WithRecovery(true))
		if err == nil {
			got, err = fileEpisodes(f)
		}
		check("recovery", got, err)
		var out bytes.Buffer
		_, _, err = Recover(&out, bytes.NewReader(b), int64(len(b)), nil, opt)
		if err == nil {
			got, err = readAll(out.Bytes(), nil)
		}
		check("Recover", got, err)
	}
}

// TestEmbeddedModelMemory: a version-3 model codes its reference store,
// so it may declare far more memory than its bytes; a limit that the
// header's sizes meet but the model's declared store does not fails with
// ErrTooLarge, naming the embedded model, before the store is decoded.
func TestEmbeddedModelMemory(t *testing.T) {
	b, _, eps := smallFile(t, true)
	h, err := ReadHeader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if h.ModelSize == 0 || b[HeaderSize+4] != 3 {
		t.Fatalf("want an embedded version-3 model, have %d bytes of version %d", h.ModelSize, b[HeaderSize+4])
	}
	tight := WithMaxMemory(h.memory() + 1)
	if _, err := readAll(b, nil, tight); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Reader under the header's own need: %v, want ErrTooLarge", err)
	}
	if _, err := Open(bytes.NewReader(b), int64(len(b)), nil, tight); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Open under the header's own need: %v, want ErrTooLarge", err)
	}
	got, err := readAll(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := sameEpisodes(normalize(got), normalize(eps)); d != nil {
		t.Fatal(d)
	}
}
