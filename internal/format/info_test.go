package format

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/wm"
)

// TestReadInfoWithoutModel (issue 15, point 2): ReadInfo reports what Open
// reports of a file's header and index, with no model at hand, and fails
// as Open does on a cut or damaged trailer or index.
func TestReadInfoWithoutModel(t *testing.T) {
	g := wm.Geometry{S: 2, M: 3, K: 7}
	eps := genEpisodes(rand.New(rand.NewPCG(41, 42)), g, []int{5, 0, 3})
	m := gateModel(t, g, eps)
	levels := 0
	for _, opts := range [][]Option{
		{WithKeyframeInterval(2)},
		{WithKeyframeInterval(3), WithEmbeddedModel(true)},
		{WithKeyframeInterval(2), WithLevels(1<<16, LambdaLossless)},
	} {
		b := encode(t, m, eps, opts...)
		f, err := Open(bytes.NewReader(b), int64(len(b)), m, opts...)
		if err != nil {
			t.Fatal(err)
		}
		h, info, err := ReadInfo(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("ReadInfo: %v", err)
		}
		want := f.Info()
		levels += len(info.Levels)
		if !reflect.DeepEqual(info, want) {
			t.Fatalf("ReadInfo gives %+v, Open %+v", info, want)
		}
		if fh := f.Header(); h.Geom != fh.Geom || h.ModelID != fh.ModelID || h.Lambda != fh.Lambda || h.KeyframeInterval != fh.KeyframeInterval {
			t.Fatalf("header %+v, want %+v", h, fh)
		}
		if info.States != 8 || info.Episodes != 3 || info.FileBytes != int64(len(b)) {
			t.Fatalf("info %+v", info)
		}
		if _, _, err := ReadInfo(bytes.NewReader(b[:len(b)-1]), int64(len(b)-1)); !isFileError(err) {
			t.Fatalf("cut file: %v", err)
		}
		bad := bytes.Clone(b)
		bad[len(bad)-TrailerSize-3] ^= 1 // in the index
		if _, _, err := ReadInfo(bytes.NewReader(bad), int64(len(bad))); !errors.Is(err, ErrChecksum) {
			t.Fatalf("damaged index: %v", err)
		}
	}
	if levels != 2 {
		t.Fatalf("%d levels seen, want the 2 of the last file", levels)
	}
	// A tight memory limit that Open needs for decoding does not stop it.
	b := encode(t, m, eps, WithKeyframeInterval(2))
	if _, _, err := ReadInfo(bytes.NewReader(b), int64(len(b)), WithMaxMemory(1024)); err != nil {
		t.Fatalf("ReadInfo under a small limit: %v", err)
	}
	if _, _, err := ReadInfo(bytes.NewReader(b[:10]), 10); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("10 bytes: %v", err)
	}
}

// TestWriterErrorHasNoOffset (issue 15, point 6): a Writer refusing its
// options says so without a file offset, as no file is being parsed.
func TestWriterErrorHasNoOffset(t *testing.T) {
	g := wm.Geometry{S: 1, M: 2, K: 4}
	m := trainModel(g, 10, nil)
	_, err := NewWriter(io.Discard, m, WithLambda(1<<16))
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("finite lambda without a gate: %v", err)
	}
	if strings.Contains(err.Error(), "offset") {
		t.Fatalf("writer error %q names a file offset", err)
	}
}

// TestTooLargeSaysDeclared (issue 15, point 6): a small file declaring
// large sizes is reported as declaring them.
func TestTooLargeSaysDeclared(t *testing.T) {
	b, _, _ := smallFile(t, true)
	_, err := Open(bytes.NewReader(b), int64(len(b)), nil, WithMaxMemory(100))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "declared in the file") {
		t.Fatalf("error %v", err)
	}
}
