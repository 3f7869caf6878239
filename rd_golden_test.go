package wmzip_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/npz"
)

var updateRD = flag.Bool("update-rd", false, "rewrite testdata/rd: the family, its input and the digests of its files")

// rdGolden is testdata/rd/golden.json: the SHA-256 of each file the
// committed family writes of the committed input.
type rdGolden map[string]string

// TestRDGolden: coding by rate and distortion decides every value in the
// writer from floats (the quantizer's distances), and a file's bytes must
// still be the same on every machine and build: the committed family
// writes the committed input, at several targets and λ, to files of the
// recorded digests (CI runs it on arm64 and 32-bit arm too).
func TestRDGolden(t *testing.T) {
	dir := filepath.Join("testdata", "rd")
	if *updateRD {
		writeRDFixture(t, dir)
	}
	mb, err := os.ReadFile(filepath.Join(dir, "family.wmm"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := wmzip.UnmarshalCodec(mb)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := npz.ReadTrajectory(filepath.Join(dir, "input.npz"))
	if err != nil {
		t.Fatal(err)
	}
	var eps []wmzip.Episode
	per := tr.ObsS * tr.ObsD
	for _, e := range tr.Episodes() {
		eps = append(eps, wmzip.Episode{Actions: tr.Actions[e[0]:e[1]], Obs: tr.Obs[int(e[0])*per : int(e[1])*per], Slots: tr.ObsS})
	}
	got := rdGolden{}
	for name, opts := range map[string][]wmzip.WriterOption{
		"lossless":    nil,
		"source-0.06": {wmzip.WithSourceDistortion(0.06)},
		"source-0.2":  {wmzip.WithSourceDistortion(0.2)},
		"distortion":  {wmzip.WithDistortion(0.05)},
		"lambda-300":  {wmzip.WithLambda(300), wmzip.WithEncoderThreads(1)},
		"levels":      {wmzip.WithLevels(100, 3000)},
	} {
		var b bytes.Buffer
		w, err := wmzip.NewWriter(&b, c, opts...)
		if err != nil {
			t.Fatal(err)
		}
		for i := range eps {
			if name == "levels" {
				if err := w.SetLevel(i % 2); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.WriteAll(eps[i : i+1]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sum := sha256.Sum256(b.Bytes())
		got[name] = hex.EncodeToString(sum[:])
	}
	path := filepath.Join(dir, "golden.json")
	if *updateRD {
		b, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want rdGolden
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for name, sum := range want {
		if got[name] != sum {
			t.Errorf("%s: a file of digest %s, want %s (-update-rd rewrites testdata/rd after a deliberate change)", name, got[name], sum)
		}
	}
}

// writeRDFixture trains the family of testdata/rd and writes it with its
// input (trained here, on this machine: training is float arithmetic).
func writeRDFixture(t *testing.T, dir string) {
	c := familyCodec(t)
	b, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "family.wmm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	test := walks.Episodes(6, 2)
	tr := &npz.Trajectory{HasActions: true, ObsS: test[0].Slots, ObsD: len(test[0].Obs) / len(test[0].Actions) / test[0].Slots}
	for _, e := range test {
		tr.EpisodeStart = append(tr.EpisodeStart, int64(len(tr.Actions)))
		tr.Actions = append(tr.Actions, e.Actions...)
		tr.Obs = append(tr.Obs, e.Obs...)
	}
	tr.T = len(tr.Actions)
	if err := npz.WriteTrajectory(filepath.Join(dir, "input.npz"), tr); err != nil {
		t.Fatal(err)
	}
}
