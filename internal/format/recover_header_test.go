package format

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/wmzip/wmzip/internal/wm"
)

// TestRecoverHeader (issue 24, point 3): a file whose header has any one
// byte damaged, with every record intact, is recovered byte for byte: its
// header rebuilt from the trailer, index, level table and model, the
// header checksum confirming the fields nothing else records. Files with
// an embedded model or not, lossless, lossy and with levels.
func TestRecoverHeader(t *testing.T) {
	g := wm.Geometry{S: 3, M: 4, K: 16}
	rng := rand.New(rand.NewPCG(51, 52))
	eps := genEpisodes(rng, g, []int{9, 0, 6, 13})
	m := gateModel(t, g, eps)
	for _, c := range []struct {
		name string
		opts []Option
	}{
		{"embedded, lossy", []Option{WithKeyframeInterval(4), WithLanes(3), WithEmbeddedModel(true), WithLambda(5 << 16)}},
		{"given model, lossless", []Option{WithKeyframeInterval(5), WithLanes(7)}},
		{"levels", []Option{WithKeyframeInterval(8), WithLanes(2), WithLevels(1<<12, 4<<16, LambdaLossless), WithEmbeddedModel(true)}},
	} {
		b := encode(t, m, eps, c.opts...)
		given := m
		if c.name != "given model, lossless" {
			given = nil
		}
		for at := range HeaderSize {
			for _, flip := range []byte{0x10, 0xff} {
				bad := bytes.Clone(b)
				bad[at] ^= flip
				name := fmt.Sprintf("%s, byte %d ^ %#x", c.name, at, flip)
				if _, err := Open(bytes.NewReader(bad), int64(len(bad)), given); err == nil {
					t.Fatalf("%s: opens without recovery", name)
				}
				var out bytes.Buffer
				rec, _, err := Recover(&out, bytes.NewReader(bad), int64(len(bad)), given)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if rec.Header == nil || !rec.Header.Exact || rec.Complete || len(rec.Gaps) > 0 || rec.Stop != nil {
					t.Fatalf("%s: recovery %+v, header %+v", name, rec, rec.Header)
				}
				if !bytes.Equal(out.Bytes(), b) {
					t.Fatalf("%s: the recovered file differs from the original", name)
				}
			}
		}
		// A damaged embedded model is replaced by the model given.
		if given == nil {
			ms := int64(le.Uint32(b[48:]))
			for _, at := range []int64{HeaderSize, HeaderSize + 9, HeaderSize + ms/2, HeaderSize + ms - 1} {
				bad := bytes.Clone(b)
				bad[at] ^= 0x08
				name := fmt.Sprintf("%s, model byte %d", c.name, at-HeaderSize)
				if _, _, err := Recover(&bytes.Buffer{}, bytes.NewReader(bad), int64(len(bad)), nil); err == nil {
					t.Fatalf("%s: recovered without the model", name)
				}
				var out bytes.Buffer
				rec, _, err := Recover(&out, bytes.NewReader(bad), int64(len(bad)), m)
				if err != nil || rec.Header == nil || rec.Header.ModelErr == nil || !bytes.Equal(out.Bytes(), b) {
					t.Fatalf("%s: %v, recovery %+v, same bytes %v", name, err, rec, bytes.Equal(out.Bytes(), b))
				}
			}
		}
		// Without the model a file that does not embed it cannot be
		// rebuilt; with another model, neither.
		if given != nil {
			bad := bytes.Clone(b)
			bad[30] ^= 1
			if _, _, err := Recover(&bytes.Buffer{}, bytes.NewReader(bad), int64(len(bad)), nil); !errors.Is(err, ErrNoModel) {
				t.Fatalf("%s: no model: %v", c.name, err)
			}
			other := trainModel(g, 12, genEpisodes(rng, g, []int{5}))
			if _, _, err := Recover(&bytes.Buffer{}, bytes.NewReader(bad), int64(len(bad)), other); !errors.Is(err, ErrModelMismatch) {
				t.Fatalf("%s: rebuilt with another model", c.name)
			}
		}
	}
}
