package format

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/wm"
)

// The golden vector is a conformance test: a small model, a trajectory, the
// .wmz this package writes for them and its SHA-256. Any change to the
// container or the world model changes the bytes; regenerate deliberately
// with
//
//	go test ./format -run TestGolden -update
var update = flag.Bool("update", false, "rewrite the conformance files (testdata/conformance)")

const goldenDir = "../../testdata/conformance"

// goldenTrajectory is the JSON form of testdata/conformance/golden.json.
type goldenTrajectory struct {
	Geometry         wm.Geometry     `json:"geometry"`
	Precision        uint            `json:"precision"`
	KeyframeInterval int             `json:"keyframe_interval"`
	Lanes            int             `json:"lanes"`
	Episodes         []goldenEpisode `json:"episodes"`
	Meta             []string        `json:"meta"` // episode metadata, "" for none
}

type goldenEpisode struct {
	Actions []int64  `json:"actions"`
	Codes   []uint16 `json:"codes"`
}

func TestGolden(t *testing.T) {
	paths := map[string]string{}
	for _, n := range []string{"golden.json", "golden.wmm", "golden.wmz", "golden.wmz.sha256"} {
		paths[n] = filepath.Join(goldenDir, n)
	}
	if *update {
		g := wm.Geometry{S: 4, M: 4, K: 16}
		eps := genEpisodes(rand.New(rand.NewPCG(2026, 1)), g, []int{5, 0, 11, 1})
		tr := goldenTrajectory{Geometry: g, Precision: 12, KeyframeInterval: 4, Lanes: 4}
		for _, e := range eps {
			tr.Episodes = append(tr.Episodes, goldenEpisode{e.Actions, e.Codes})
			tr.Meta = append(tr.Meta, string(e.Meta))
		}
		js, err := json.MarshalIndent(tr, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		m := trainModel(g, tr.Precision, eps)
		raw, _ := m.MarshalBinary()
		b := encode(t, m, eps, WithKeyframeInterval(tr.KeyframeInterval), WithLanes(tr.Lanes), WithEmbeddedModel(true))
		sum := sha256.Sum256(b)
		for n, data := range map[string][]byte{
			"golden.json":       append(js, '\n'),
			"golden.wmm":        raw,
			"golden.wmz":        b,
			"golden.wmz.sha256": []byte(hex.EncodeToString(sum[:]) + "  golden.wmz\n"),
		} {
			if err := os.WriteFile(paths[n], data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	js, err := os.ReadFile(paths["golden.json"])
	if err != nil {
		t.Fatal(err)
	}
	var tr goldenTrajectory
	if err := json.Unmarshal(js, &tr); err != nil {
		t.Fatal(err)
	}
	var eps []episode
	for i, e := range tr.Episodes {
		ep := episode{Actions: e.Actions, Codes: e.Codes}
		if m := tr.Meta[i]; m != "" {
			ep.Meta = []byte(m)
		}
		eps = append(eps, ep)
	}
	raw, err := os.ReadFile(paths["golden.wmm"])
	if err != nil {
		t.Fatal(err)
	}
	m, err := wm.UnmarshalModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(paths["golden.wmz"])
	if err != nil {
		t.Fatal(err)
	}
	sumLine, err := os.ReadFile(paths["golden.wmz.sha256"])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(want)
	if hex.EncodeToString(sum[:]) != strings.Fields(string(sumLine))[0] {
		t.Fatal("golden.wmz does not match golden.wmz.sha256")
	}
	got := encode(t, m, eps, WithKeyframeInterval(tr.KeyframeInterval), WithLanes(tr.Lanes), WithEmbeddedModel(true))
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding golden.json gives %d bytes that differ from golden.wmz (%d bytes); "+
			"if the change is intended, run: go test ./format -run TestGolden -update", len(got), len(want))
	}
	dec, err := decodeEverything(want, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameEpisodes(dec, eps); err != nil {
		t.Fatal(err)
	}
}
