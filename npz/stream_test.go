package npz

import (
	stdzip "archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wmzip/wmzip/internal/half"
)

// randomTrajectory returns a trajectory of t steps with the arrays asked
// for: codes of dtype codes ("" for none), obs of dtype obs ("" for none).
func randomTrajectory(rng *rand.Rand, t, s, m int, codes, obs string, actions, starts bool) *Trajectory {
	tr := &Trajectory{T: t, S: s, M: m, ObsS: s, ObsD: m + 1, CodesDtype: codes, ObsDtype: obs, HasActions: actions}
	if codes != "" {
		tr.Codes = make([]uint16, t*s*m)
		k := 256
		if codes == "uint16" {
			k = 1 << 16
		}
		for i := range tr.Codes {
			tr.Codes[i] = uint16(rng.IntN(k))
		}
	}
	if obs != "" {
		tr.Obs = make([]float32, t*s*(m+1))
		for i := range tr.Obs {
			tr.Obs[i] = float32(rng.NormFloat64())
			if obs == "float16" {
				tr.Obs[i] = half.Float32(half.FromFloat32(tr.Obs[i]))
			}
		}
	}
	if actions {
		tr.Actions = make([]int64, t)
		for i := range tr.Actions {
			tr.Actions[i] = rng.Int64N(40) - 1
		}
	}
	if starts && t > 0 {
		tr.EpisodeStart = []int64{0}
		for i := 1; i < t; i++ {
			if rng.IntN(7) == 0 {
				tr.EpisodeStart = append(tr.EpisodeStart, int64(i))
			}
		}
	}
	return tr
}

// readStreaming reads the trajectory at path with OpenTrajectory in
// blocks of random sizes, into a Trajectory.
func readStreaming(rng *rand.Rand, path string) (*Trajectory, error) {
	r, err := OpenTrajectory(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readStates(rng, r)
}

func readStates(rng *rand.Rand, r *TrajectoryReader) (*Trajectory, error) {
	h := r.Header()
	tr := &Trajectory{T: h.T, S: h.S, M: h.M, CodesDtype: h.CodesDtype, ObsS: h.ObsS, ObsD: h.ObsD, ObsDtype: h.ObsDtype,
		HasActions: h.HasActions, EpisodeStart: h.EpisodeStart, Actions: []int64{}}
	if h.HasCodes {
		tr.Codes = []uint16{}
	}
	if h.HasObs {
		tr.Obs = []float32{}
	}
	for {
		n := 1 + rng.IntN(70)
		acts := make([]int64, n)
		var codes []uint16
		var obs []float32
		if h.HasCodes {
			codes = make([]uint16, n*h.S*h.M)
		}
		if h.HasObs {
			obs = make([]float32, n*h.ObsS*h.ObsD)
		}
		got, err := r.Read(acts, codes, obs)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		tr.Actions = append(tr.Actions, acts[:got]...)
		if h.HasCodes {
			tr.Codes = append(tr.Codes, codes[:got*h.S*h.M]...)
		}
		if h.HasObs {
			tr.Obs = append(tr.Obs, obs[:got*h.ObsS*h.ObsD]...)
		}
	}
	return tr, nil
}

// writeStreaming writes tr with CreateTrajectory in blocks of random sizes.
func writeStreaming(rng *rand.Rand, path string, tr *Trajectory, opts ...Option) error {
	h := &TrajectoryHeader{T: tr.T, HasCodes: tr.Codes != nil, S: tr.S, M: tr.M, CodesDtype: tr.CodesDtype,
		HasObs: tr.Obs != nil, ObsS: tr.ObsS, ObsD: tr.ObsD, ObsDtype: tr.ObsDtype, HasActions: tr.HasActions,
		EpisodeStart: tr.EpisodeStart}
	for _, a := range tr.Extra {
		h.Extra = append(h.Extra, a.Name)
	}
	w, err := CreateTrajectory(path, h, opts...)
	if err != nil {
		return err
	}
	acts := tr.Actions
	if !tr.HasActions {
		acts = make([]int64, tr.T)
	}
	for t := 0; t < tr.T; {
		n := min(1+rng.IntN(70), tr.T-t)
		var codes []uint16
		var obs []float32
		if tr.Codes != nil {
			codes = tr.Codes[t*tr.S*tr.M : (t+n)*tr.S*tr.M]
		}
		if tr.Obs != nil {
			obs = tr.Obs[t*tr.ObsS*tr.ObsD : (t+n)*tr.ObsS*tr.ObsD]
		}
		var extra [][]uint8
		for _, a := range tr.Extra {
			extra = append(extra, a.Data.([]uint8)[t:t+n])
		}
		if err := w.Write(acts[t:t+n], codes, obs, extra...); err != nil {
			w.Abort()
			return err
		}
		t += n
	}
	return w.Close()
}

// TestStreamRoundTrip writes trajectories of every kind with
// WriteTrajectory and CreateTrajectory, which must give the same bytes,
// and reads them back with ReadTrajectory and OpenTrajectory, which must
// agree.
func TestStreamRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for _, deflate := range []bool{false, true} {
		for _, codes := range []string{"", "uint8", "uint16"} {
			for _, obs := range []string{"", "float32", "float16"} {
				if codes == "" && obs == "" {
					continue
				}
				for _, shape := range [][3]int{{300, 4, 60}, {17, 1, 5}, {0, 2, 3}} {
					n++
					name := fmt.Sprintf("deflate=%v codes=%s obs=%s T=%d S=%d", deflate, codes, obs, shape[0], shape[1])
					t.Run(name, func(t *testing.T) {
						tr := randomTrajectory(rng, shape[0], shape[1], shape[2], codes, obs, n%2 == 0, n%3 != 0)
						if n%4 == 0 && tr.T > 0 {
							lv := make([]uint8, tr.T)
							for i := range lv {
								lv[i] = uint8(rng.IntN(16))
							}
							tr.Extra = []Array{{Name: "levels", Dtype: "uint8", Shape: []int{tr.T}, Data: lv}}
						}
						if n%5 == 0 && tr.HasActions && tr.T > 0 {
							tr.Actions[tr.T-1] = math.MaxInt32 + 7 // int64 on write
						}
						whole, stream := filepath.Join(dir, "whole.npz"), filepath.Join(dir, "stream.npz")
						if err := WriteTrajectory(whole, tr, WithDeflate(deflate)); err != nil {
							t.Fatal(err)
						}
						if err := writeStreaming(rng, stream, tr, WithDeflate(deflate)); err != nil {
							t.Fatal(err)
						}
						a, _ := os.ReadFile(whole)
						b, _ := os.ReadFile(stream)
						if !bytes.Equal(a, b) {
							t.Fatalf("CreateTrajectory wrote %d bytes unlike WriteTrajectory's %d", len(b), len(a))
						}
						want, err := ReadTrajectory(whole)
						if err != nil {
							t.Fatal(err)
						}
						got, err := readStreaming(rng, whole)
						if err != nil {
							t.Fatal(err)
						}
						got.Extra = want.Extra
						if want.T > 0 && !want.HasActions {
							got.HasActions = false
						}
						sameTrajectory(t, got, want)
						if ents, _ := os.ReadDir(dir); len(ents) != 2 {
							t.Errorf("%d files left in the folder, want 2", len(ents))
						}
					})
				}
			}
		}
	}
}

// TestStreamSkip reads codes only for a while, then obs too: the obs
// array is skipped over to where the reader is.
func TestStreamSkip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tr := randomTrajectory(rng, 200, 3, 50, "uint16", "float16", true, true)
	path := filepath.Join(t.TempDir(), "x.npz")
	if err := WriteTrajectory(path, tr); err != nil {
		t.Fatal(err)
	}
	r, err := OpenTrajectory(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	acts := make([]int64, 120)
	codes := make([]uint16, 120*150)
	obs := make([]float32, 120*153)
	if _, err := r.Read(acts[:2], codes, obs[:153]); err == nil {
		t.Error("a short obs buffer is accepted")
	}
	if n, err := r.Read(acts[:120], codes, nil); n != 120 || err != nil {
		t.Fatal(n, err)
	}
	if n, err := r.Read(acts[:100], nil, obs); n != 80 || err != nil {
		t.Fatal(n, err)
	}
	if !slices.Equal(obs[:80*153], tr.Obs[120*153:]) || !slices.Equal(acts[:80], tr.Actions[120:]) {
		t.Error("obs after the skip differ")
	}
	if n, err := r.Read(acts, nil, nil); n != 0 || err != io.EOF {
		t.Errorf("after the end: %d, %v", n, err)
	}
}

// rawMember is a .npz member written as given: its .npy bytes, deflated
// or stored, cut to keep bytes of compressed data when keep ≥ 0, with the
// uncompressed size and CRC declared (when non-zero) in place of the true
// ones.
type rawMember struct {
	name    string
	npy     []byte
	deflate bool
	keep    int
	size    uint64
	crc     uint32
}

func rawNPZ(t *testing.T, path string, members ...rawMember) {
	t.Helper()
	var buf bytes.Buffer
	zw := stdzip.NewWriter(&buf)
	for _, m := range members {
		data := m.npy
		method := stdzip.Store
		if m.deflate {
			method = stdzip.Deflate
			var c bytes.Buffer
			fw, _ := flate.NewWriter(&c, flate.DefaultCompression)
			fw.Write(m.npy)
			fw.Close()
			data = c.Bytes()
		}
		if m.keep >= 0 {
			data = data[:min(m.keep, len(data))]
		}
		fh := &stdzip.FileHeader{Name: m.name + ".npy", Method: method, CRC32: crc32.ChecksumIEEE(m.npy),
			UncompressedSize64: uint64(len(m.npy)), CompressedSize64: uint64(len(data))}
		if m.size != 0 {
			fh.UncompressedSize64 = m.size
		}
		if m.crc != 0 {
			fh.CRC32 = m.crc
		}
		mw, err := zw.CreateRaw(fh)
		if err != nil {
			t.Fatal(err)
		}
		mw.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func npyOf(dt string, shape []int, data any) []byte {
	var b bytes.Buffer
	d, _ := dtypeByName(dt)
	b.Write(appendHeader(nil, d, shape))
	writeData(&b, d, data)
	return b.Bytes()
}

// readAll reads every state of the trajectory at path, 16 at a time, and
// returns the first error.
func readAll(path string) error {
	r, err := OpenTrajectory(path)
	if err != nil {
		return err
	}
	defer r.Close()
	h := r.Header()
	acts := make([]int64, 16)
	var codes []uint16
	var obs []float32
	if h.HasCodes {
		codes = make([]uint16, 16*h.S*h.M)
	}
	if h.HasObs {
		obs = make([]float32, 16*h.ObsS*h.ObsD)
	}
	for {
		if _, err := r.Read(acts, codes, obs); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// TestStreamBadInput: lies, damage and contract breaches give an *Error
// of the right kind, at open or at the read that meets them, and headers
// that claim huge shapes allocate nothing for it.
func TestStreamBadInput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.npz")
	codes := make([]uint16, 10*64)
	for i := range codes {
		codes[i] = uint16(i)
	}
	good := npyOf("uint16", []int{10, 64}, codes)
	huge := npyOf("uint16", []int{1e12, 64}, codes) // the header claims 10^12 states
	for _, tc := range []struct {
		name    string
		members []rawMember
		atOpen  bool
		kind    error
		cause   error
		msg     string
	}{
		{"huge shape deflated", []rawMember{{name: "codes", npy: huge, deflate: true, keep: -1, size: uint64(len(huge)-len(codes)*2) + 128e12}},
			false, ErrFormat, io.ErrUnexpectedEOF, `array "codes" is truncated in its data`},
		{"huge shape stored", []rawMember{{name: "codes", npy: huge, keep: -1, size: uint64(len(huge)-len(codes)*2) + 128e12}},
			true, ErrFormat, nil, `array "codes"`},
		{"deflate cut", []rawMember{{name: "codes", npy: good, deflate: true, keep: 300}},
			false, ErrFormat, nil, `array "codes"`},
		{"checksum", []rawMember{{name: "codes", npy: good, keep: -1, crc: 12345}},
			false, ErrFormat, nil, `array "codes" fails its size or checksum check`},
		{"checksum deflated", []rawMember{{name: "codes", npy: good, deflate: true, keep: -1, crc: 12345}},
			false, ErrFormat, nil, `array "codes" fails its size or checksum check`},
		{"wrong dtype", []rawMember{{name: "codes", npy: npyOf("int32", []int{2, 2}, []int32{1, 2, 3, 4}), keep: -1}},
			true, ErrContract, nil, `array "codes" has dtype int32, want uint8 or uint16`},
		{"steps disagree", []rawMember{{name: "codes", npy: good, keep: -1}, {name: "actions", npy: npyOf("int64", []int{3}, []int64{1, 2, 3}), keep: -1}},
			true, ErrContract, nil, `array "actions" has 3 steps but "codes" has 10`},
		{"bad starts", []rawMember{{name: "codes", npy: good, keep: -1}, {name: "episode_start", npy: npyOf("int64", []int{2}, []int64{0, 10}), keep: -1}},
			true, ErrContract, nil, `array "episode_start" has start 10 at index 1, want < T=10`},
		{"no states", []rawMember{{name: "actions", npy: npyOf("int64", []int{1}, []int64{1}), keep: -1}},
			true, ErrContract, nil, `has no "codes" or "obs" array`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rawNPZ(t, path, tc.members...)
			r, err := OpenTrajectory(path)
			if err == nil {
				r.Close()
				if tc.atOpen {
					t.Fatal("OpenTrajectory accepted it")
				}
				err = readAll(path)
			} else if !tc.atOpen {
				t.Fatalf("OpenTrajectory: %v", err)
			}
			wantErr(t, err, tc.kind, tc.cause, tc.msg)
			var e *Error
			if !errors.As(err, &e) || e.Path != path {
				t.Errorf("error %v is not an *Error naming the file", err)
			}
		})
	}
	// A file cut short loses its zip directory.
	if err := WriteTrajectory(path, &Trajectory{T: 10, S: 1, M: 64, Codes: codes}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:len(b)/2], 0o644)
	_, err := OpenTrajectory(path)
	wantErr(t, err, ErrFormat, nil, "is not a valid .npz (zip) archive")
}

// TestStreamWriterErrors: a header or states that break the contract are
// refused, and a writer that fails or is abandoned leaves no file.
func TestStreamWriterErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.npz")
	h := &TrajectoryHeader{T: 3, HasCodes: true, S: 1, M: 2, CodesDtype: "uint8", HasActions: true}
	for _, tc := range []struct {
		name string
		edit func(*TrajectoryHeader)
		msg  string
	}{
		{"no dtype", func(h *TrajectoryHeader) { h.CodesDtype = "" }, `CodesDtype ""`},
		{"no arrays", func(h *TrajectoryHeader) { h.HasCodes = false }, `has no "codes" or "obs" array`},
		{"sizes", func(h *TrajectoryHeader) { h.M = 0 }, "want positive sizes"},
		{"huge", func(h *TrajectoryHeader) { h.T, h.M = 1<<40, 1<<30 }, "too large"},
		{"starts", func(h *TrajectoryHeader) { h.EpisodeStart = []int64{1} }, "does not start with 0"},
		{"extra", func(h *TrajectoryHeader) { h.Extra = []string{"obs"} }, "is a trajectory array"},
	} {
		bad := *h
		tc.edit(&bad)
		_, err := CreateTrajectory(path, &bad)
		wantErr(t, err, ErrContract, nil, tc.msg)
	}
	write := func(fn func(w *TrajectoryWriter) error, msg string) {
		t.Helper()
		w, err := CreateTrajectory(path, h)
		if err != nil {
			t.Fatal(err)
		}
		err = fn(w)
		if err == nil {
			err = w.Close()
		} else {
			w.Abort()
		}
		wantErr(t, err, ErrContract, nil, msg)
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%d files left behind", len(ents))
		}
	}
	write(func(w *TrajectoryWriter) error { return w.Write([]int64{1}, []uint16{1}, nil) }, "takes 2 codes for 1 states, got 1")
	write(func(w *TrajectoryWriter) error { return w.Write([]int64{1}, []uint16{1, 2}, []float32{1}) }, "takes 0 observation values")
	write(func(w *TrajectoryWriter) error { return w.Write(make([]int64, 4), make([]uint16, 8), nil) }, "T=3 states, 0 written and 4 more given")
	write(func(w *TrajectoryWriter) error { return w.Write(make([]int64, 2), []uint16{1, 2, 3, 300}, nil) }, `array "codes" has code 300 at index 3, too large for CodesDtype uint8`)
	write(func(w *TrajectoryWriter) error { return w.Write(make([]int64, 2), make([]uint16, 4), nil) }, "has T=3 states but 2 were written")
	write(func(w *TrajectoryWriter) error { return w.Write(make([]int64, 1), make([]uint16, 2), nil, []uint8{1}) }, "has 0 extra arrays, got values for 1")
}
