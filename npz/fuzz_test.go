package npz

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadNPZ feeds arbitrary bytes to the .npz, trajectory (whole and
// streaming) and .npy readers. They must not panic or allocate beyond the limit, and whatever
// they accept must survive a write and a second read unchanged.
func FuzzReadNPZ(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(fixtures, "*.np[yz]"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) <= 4<<10 { // small seeds keep minimization quick
			f.Add(b)
		}
	}
	const limit = 1 << 24
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		arrays, err := DecodeNPZ(r, int64(len(data)), WithMaxBytes(limit))
		if err == nil {
			var buf bytes.Buffer
			if err := EncodeNPZ(&buf, arrays); err != nil {
				t.Fatalf("accepted arrays cannot be written: %v", err)
			}
			again, err := DecodeNPZ(bytes.NewReader(buf.Bytes()), int64(buf.Len()), WithMaxBytes(limit))
			if err != nil {
				t.Fatalf("rewritten archive unreadable: %v", err)
			}
			sameArrays(t, again, arrays)
		}
		if tr, err := DecodeTrajectory(r, int64(len(data)), WithMaxBytes(limit)); err == nil {
			if err := tr.Validate(); err != nil {
				t.Fatalf("accepted trajectory fails Validate: %v", err)
			}
			var buf bytes.Buffer
			if err := EncodeTrajectory(&buf, tr); err != nil {
				t.Fatalf("accepted trajectory cannot be written: %v", err)
			}
			again, err := DecodeTrajectory(bytes.NewReader(buf.Bytes()), int64(buf.Len()), WithMaxBytes(limit))
			if err != nil {
				t.Fatalf("rewritten trajectory unreadable: %v", err)
			}
			sameTrajectory(t, again, tr)
		}
		// The streaming reader reads what the whole-file reader accepts,
		// the same, and fails cleanly on the rest.
		if sr, err := NewTrajectoryReader(r, int64(len(data)), WithMaxBytes(limit)); err == nil {
			got, err := readStates(rand.New(rand.NewPCG(uint64(len(data)), 1)), sr)
			if tr, werr := DecodeTrajectory(r, int64(len(data)), WithMaxBytes(limit)); werr == nil {
				if err != nil {
					t.Fatalf("streaming reader fails where DecodeTrajectory does not: %v", err)
				}
				got.Extra, got.HasActions = tr.Extra, tr.HasActions
				sameTrajectory(t, got, tr)
			}
		}
		if a, err := DecodeNPY(bytes.NewReader(data), int64(len(data)), WithMaxBytes(limit)); err == nil {
			var buf bytes.Buffer
			if err := EncodeNPY(&buf, a); err != nil {
				t.Fatalf("accepted array cannot be written: %v", err)
			}
		}
	})
}
