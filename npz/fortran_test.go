package npz

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klauspost/compress/zip"
)

// TestFortranToC checks the conversion against the definition of both
// orders on a 3-d shape with a dimension of 1.
func TestFortranToC(t *testing.T) {
	shape := []int{3, 1, 4, 2}
	n := 3 * 4 * 2
	src := make([]byte, n) // element (i,j,k,l) in Fortran order holds its C index
	for i := range 3 {
		for k := range 4 {
			for l := range 2 {
				src[i+3*(k+4*l)] = byte((i*4+k)*2 + l)
			}
		}
	}
	got := fortranToC(src, shape, 1)
	for c := range n {
		if got[c] != byte(c) {
			t.Fatalf("element %d holds %d", c, got[c])
		}
	}
}

// TestFortranFloat64Trajectory (issue 24, point 2): a trajectory whose
// codes and obs numpy saved in Fortran order, obs as float64, reads as
// its C-order float32 twin, whole and state by state.
func TestFortranFloat64Trajectory(t *testing.T) {
	const T, S, M, D = 5, 3, 2, 4
	want := &Trajectory{T: T, S: S, M: M, ObsS: S, ObsD: D, HasActions: true, CodesDtype: "uint8", ObsDtype: "float64"}
	for i := range T * S * M {
		want.Codes = append(want.Codes, uint16(i%7))
	}
	for i := range T * S * D {
		want.Obs = append(want.Obs, float32(i)/8-3)
	}
	for i := range T {
		want.Actions = append(want.Actions, int64(i%3))
	}
	want.EpisodeStart = []int64{0, 2}
	le := binary.LittleEndian
	// fortran returns the elements of a C-order array of the shape in
	// Fortran order, each as size bytes from put.
	fortran := func(shape []int, size int, put func(b []byte, c int)) []byte {
		n := 1
		for _, d := range shape {
			n *= d
		}
		out := make([]byte, n*size)
		idx := make([]int, len(shape))
		for f := range n {
			c := 0
			for k := range shape {
				c = c*shape[k] + idx[k]
			}
			put(out[f*size:], c)
			for k := range shape {
				if idx[k]++; idx[k] < shape[k] {
					break
				}
				idx[k] = 0
			}
		}
		return out
	}
	members := map[string][]byte{
		"codes.npy": npyBytes("{'descr': '|u1', 'fortran_order': True, 'shape': (5, 3, 2), }",
			fortran([]int{T, S, M}, 1, func(b []byte, c int) { b[0] = byte(want.Codes[c]) })),
		"obs.npy": npyBytes("{'descr': '<f8', 'fortran_order': True, 'shape': (5, 3, 4), }",
			fortran([]int{T, S, D}, 8, func(b []byte, c int) { le.PutUint64(b, math.Float64bits(float64(want.Obs[c]))) })),
		"actions.npy": npyBytes("{'descr': '<i8', 'fortran_order': True, 'shape': (5,), }",
			fortran([]int{T}, 8, func(b []byte, c int) { le.PutUint64(b, uint64(want.Actions[c])) })),
		"episode_start.npy": npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
			[]byte{0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}),
	}
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, name := range []string{"codes.npy", "obs.npy", "actions.npy", "episode_start.npy"} {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
			if err != nil {
				t.Fatal(err)
			}
			w.Write(members[name])
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "f.npz")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := ReadTrajectory(path)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tr.Codes, want.Codes) || !slices.Equal(tr.Obs, want.Obs) || !slices.Equal(tr.Actions, want.Actions) || tr.ObsDtype != "float64" {
			t.Fatalf("method %d: ReadTrajectory differs from the C-order arrays", method)
		}
		r, err := OpenTrajectory(path)
		if err != nil {
			t.Fatal(err)
		}
		acts, codes, obs := make([]int64, 2), make([]uint16, 2*S*M), make([]float32, 2*S*D)
		for at := 0; at < T; {
			k, err := r.Read(acts, codes, obs)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(codes[:k*S*M], want.Codes[at*S*M:(at+k)*S*M]) || !slices.Equal(obs[:k*S*D], want.Obs[at*S*D:(at+k)*S*D]) || !slices.Equal(acts[:k], want.Actions[at:at+k]) {
				t.Fatalf("method %d: states %d.. differ", method, at)
			}
			at += k
		}
		r.Close()
		// Written back, float64 obs stay float64.
		back := filepath.Join(t.TempDir(), "b.npz")
		if err := WriteTrajectory(back, tr); err != nil {
			t.Fatal(err)
		}
		if h, err := ReadNPZHeaders(back); err != nil || h[1].Name != "obs" || h[1].Dtype != "float64" {
			t.Fatalf("written back: %v %v", h, err)
		}
	}
}
