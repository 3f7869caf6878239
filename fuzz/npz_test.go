package fuzz

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
)

// FuzzTrajectory loads arbitrary bytes as a trajectory .npz with a memory
// limit, as `wmzip encode` does, and follows what it accepts through the
// codec: episodes must partition the steps, and small code trajectories
// must survive a lossless round trip through a .wmz.
func FuzzTrajectory(f *testing.F) {
	for _, b := range seedFiles(f, 8<<10, "npz/traj_*.npz", "npz/*.npz") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tr *npz.Trajectory
		var err error
		if n := allocated(func() {
			tr, err = npz.DecodeTrajectory(bytes.NewReader(data), int64(len(data)), npz.WithMaxBytes(memLimit))
		}); n > uint64(memLimit+slack+8*len(data)) {
			t.Fatalf("loading %d bytes allocated %d", len(data), n)
		}
		if err != nil {
			var ne *npz.Error
			if !errors.As(err, &ne) {
				t.Fatalf("error %v is not an *npz.Error", err)
			}
			return
		}
		if err := tr.Validate(); err != nil {
			t.Fatalf("accepted trajectory fails Validate: %v", err)
		}
		next := 0
		for _, e := range tr.Episodes() {
			if e[0] != next || e[1] < e[0] || e[1] > tr.T {
				t.Fatalf("episodes %v do not partition %d steps", tr.Episodes(), tr.T)
			}
			next = e[1]
		}
		if next != tr.T {
			t.Fatalf("episodes %v do not cover %d steps", tr.Episodes(), tr.T)
		}
		n := tr.S * tr.M
		if tr.Codes == nil || tr.T == 0 || n == 0 || n > 16 || tr.T > 64 {
			return
		}
		k := int(slices.Max(tr.Codes)) + 1
		if k > 64 {
			return
		}
		g := wm.Geometry{S: tr.S, M: tr.M, K: max(k, 2)}
		if g.Validate() != nil {
			return
		}
		var train []wm.Episode
		for _, e := range tr.Episodes() {
			if e[1] > e[0] {
				train = append(train, wm.Episode{Codes: tr.Codes[e[0]*n : e[1]*n], Actions: tr.Actions[e[0]:e[1]]})
			}
		}
		m, err := wm.Train(g, train, wm.TrainOptions{Precision: 12, MaxRefStates: 64})
		if err != nil {
			t.Fatalf("Train on an accepted trajectory: %v", err)
		}
		var buf bytes.Buffer
		w, err := format.NewWriter(&buf, m, format.WithKeyframeInterval(4))
		if err != nil {
			t.Fatal(err)
		}
		var want []episode
		for _, e := range tr.Episodes() {
			want = append(want, episode{Actions: tr.Actions[e[0]:e[1]], Codes: tr.Codes[e[0]*n : e[1]*n]})
		}
		(&trip{g: g}).write(t, w, 0, want)
		got, err := readAll(buf.Bytes(), m)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if len(got[i].Actions) == 0 {
				got[i].Actions, got[i].Codes = nil, nil
			}
			if len(want[i].Actions) == 0 {
				want[i].Actions, want[i].Codes = nil, nil
			}
		}
		if !sameEpisodes(got, want) {
			t.Fatal("trajectory does not survive a round trip")
		}
	})
}
