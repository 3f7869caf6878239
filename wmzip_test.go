package wmzip_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/opq"
)

// TestBadInput: every bad argument is an error that errors.Is finds, never
// a panic.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	train := codesOnly(walks(1, 4))
	codec, err := wmzip.Train(ctx, train)
	if err != nil {
		t.Fatal(err)
	}
	nogate, err := wmzip.Train(ctx, train, wmzip.WithGate(0, gate.CalibOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	test := codesOnly(walks(2, 1))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	var buf bytes.Buffer
	newWriter := func(opts ...wmzip.WriterOption) error {
		_, err := wmzip.NewWriter(&buf, codec, opts...)
		return err
	}
	writeState := func(fn func(w *wmzip.Writer) error, opts ...wmzip.WriterOption) error {
		w, err := wmzip.NewWriter(&buf, codec, opts...)
		if err != nil {
			return err
		}
		if err := w.WriteEpisode(nil); err != nil {
			return err
		}
		return fn(w)
	}
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"no episodes", func() error { _, err := wmzip.Train(ctx, nil); return err }(), wmzip.ErrInput},
		{"episode without codes", func() error { _, err := wmzip.Train(ctx, []wmzip.Episode{{Actions: []int64{0}}}); return err }(), wmzip.ErrInput},
		{"codes not whole states", func() error {
			_, err := wmzip.Train(ctx, []wmzip.Episode{{Actions: []int64{0, 1}, Codes: []uint16{1, 2, 3}, Slots: 2}})
			return err
		}(), wmzip.ErrInput},
		{"obs not whole states", func() error {
			_, err := wmzip.Train(ctx, []wmzip.Episode{{Actions: []int64{0, 1}, Obs: make([]float32, 5), Slots: 2}})
			return err
		}(), wmzip.ErrInput},
		{"alphabet", func() error { _, err := wmzip.Train(ctx, train, wmzip.WithAlphabet(-1)); return err }(), wmzip.ErrInput},
		{"codes above the alphabet", func() error { _, err := wmzip.Train(ctx, train, wmzip.WithAlphabet(2)); return err }(), wmzip.ErrInput},
		{"holdout", func() error { _, err := wmzip.Train(ctx, train, wmzip.WithGate(4, gate.CalibOptions{})); return err }(), wmzip.ErrInput},
		{"gate weights", func() error {
			_, err := wmzip.Train(ctx, train, wmzip.WithGate(-1, gate.CalibOptions{Weights: []float64{1}}))
			return err
		}(), wmzip.ErrInput},
		{"train cancelled", func() error { _, err := wmzip.Train(cancelled, train); return err }(), context.Canceled},
		{"nil codec", func() error { _, err := wmzip.NewWriter(&buf, nil); return err }(), wmzip.ErrInput},
		{"negative λ", newWriter(wmzip.WithLambda(-1)), wmzip.ErrInput},
		{"NaN distortion", newWriter(wmzip.WithDistortion(math.NaN())), wmzip.ErrInput},
		{"two modes", newWriter(wmzip.WithLambda(1), wmzip.WithDistortion(0.1)), wmzip.ErrInput},
		{"lossy without gate", func() error { _, err := wmzip.NewWriter(&buf, nogate, wmzip.WithLambda(1)); return err }(), wmzip.ErrNoGate},
		{"codes of the wrong length", writeState(func(w *wmzip.Writer) error { return w.WriteCodes(0, []uint16{1}) }), wmzip.ErrInput},
		{"held codes of the wrong length", writeState(func(w *wmzip.Writer) error { return w.WriteCodes(0, []uint16{1}) }, wmzip.WithDistortion(0.1)), wmzip.ErrInput},
		{"obs without quantizer", writeState(func(w *wmzip.Writer) error { return w.WriteObs(0, make([]float32, 4)) }), wmzip.ErrNoQuantizer},
		{"metadata with a distortion target", writeState(func(w *wmzip.Writer) error { return w.WriteEpisode([]byte(`{}`)) }, wmzip.WithDistortion(0.1)), wmzip.ErrInput},
		{"encode cancelled", func() error { _, err := wmzip.Encode(cancelled, &buf, codec, test); return err }(), context.Canceled},
		{"budget", func() error {
			_, err := wmzip.StoreByAccess(ctx, &buf, codec, test, make([]int64, 50), -1)
			return err
		}(), wmzip.ErrInput},
		{"counts", func() error {
			_, err := wmzip.StoreByAccess(ctx, &buf, codec, test, make([]int64, 3), 40)
			return err
		}(), wmzip.ErrInput},
		{"τ", func() error {
			_, err := wmzip.StoreByAccess(ctx, &buf, codec, test, make([]int64, 50), 40, wmzip.WithTau(math.Inf(1)))
			return err
		}(), wmzip.ErrInput},
		{"storage by access without gate", func() error {
			_, err := wmzip.StoreByAccess(ctx, &buf, nogate, test, make([]int64, 50), 40)
			return err
		}(), wmzip.ErrNoGate},
		{"budget below the lowest level", func() error {
			_, err := wmzip.StoreByAccess(ctx, &buf, codec, test, make([]int64, 50), 0.5)
			return err
		}(), wmzip.ErrBudget},
		{"cut file", func() error { _, err := wmzip.NewFile(bytes.NewReader([]byte("wmz")), 3, codec); return err }(), io.ErrUnexpectedEOF},
		{"not a codec", func() error { _, err := wmzip.UnmarshalCodec([]byte("wmm")); return err }(), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil {
				t.Fatal("no error")
			}
			if c.want != nil && !errors.Is(c.err, c.want) {
				t.Fatalf("%v, want %v", c.err, c.want)
			}
		})
	}
}

// TestRoundTripObs: observations written lossless read back as the
// quantizer's reconstruction, through the File and the Reader alike.
func TestRoundTripObs(t *testing.T) {
	ctx := context.Background()
	codec, err := wmzip.Train(ctx, walks(1, 4), wmzip.WithQuantizer(opq.Config{M: 8, K: 16, Seed: 1, OPQIters: -1}))
	if err != nil {
		t.Fatal(err)
	}
	test := walks(2, 1)
	var file bytes.Buffer
	w, err := wmzip.NewWriter(&file, codec)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEpisode(nil); err != nil {
		t.Fatal(err)
	}
	per := len(test[0].Obs) / len(test[0].Actions)
	for s, a := range test[0].Actions {
		if err := w.WriteObs(a, test[0].Obs[s*per:(s+1)*per]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := codec.Quantize(nil, test[0].Obs)
	if err != nil {
		t.Fatal(err)
	}
	wantObs, err := codec.Reconstruct(nil, want)
	if err != nil {
		t.Fatal(err)
	}
	f, err := wmzip.NewFile(bytes.NewReader(file.Bytes()), int64(file.Len()), codec)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := f.Episode(0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ep.Codes, want) || !slices.Equal(ep.Obs, wantObs) {
		t.Fatal("File.Episode differs from the quantizer's codes and reconstruction")
	}
	r, err := wmzip.NewReader(bytes.NewReader(file.Bytes()), codec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.NextEpisode(); err != nil {
		t.Fatal(err)
	}
	var got []float32
	for range test[0].Actions {
		if _, got, err = r.ReadObs(got); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, wantObs) {
		t.Fatal("Reader.ReadObs differs from the quantizer's reconstruction")
	}
}
