package format

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/wm"
)

// Conformance vectors: a fixed trajectory, a model trained on it, and the
// .wmz files this package writes for them, lossless and lossy, with the
// SHA-256 of each file and of its decode. The model is committed, not
// retrained, because training uses floating point; everything after it is
// integer arithmetic and must give the same bytes under every build and
// architecture (.ci/run runs this test under -tags noasm, GOAMD64=v3,
// GOARCH=386 and GOARCH=arm64). Regenerate deliberately with
//
//	go test ./format -run TestConformance -update
const conformanceDir = "../testdata/conformance"

// conformanceInput is the JSON form of testdata/conformance/input.json.
type conformanceInput struct {
	Geometry  wm.Geometry       `json:"geometry"`
	Precision uint              `json:"precision"`
	Episodes  []conformanceStep `json:"episodes"`
}

type conformanceStep struct {
	Meta    string   `json:"meta,omitempty"` // "" for none
	Actions []int64  `json:"actions"`
	Codes   []uint16 `json:"codes"`
}

// vector is one conformance file: how it is written, and its digests.
type vector struct {
	File       string   `json:"file"`
	Model      string   `json:"model"` // the model file the vector is written with
	Keyframe   int      `json:"keyframe_interval"`
	Lanes      int      `json:"lanes"`
	Embed      bool     `json:"embed_model"`
	Lambda     uint32   `json:"lambda"`           // LambdaLossless or the test rule's lambda
	Rule       string   `json:"rule"`             // retention rule: "all", "gate" (the model's) or "test-modal-half"
	Levels     []uint32 `json:"levels,omitempty"` // level lambdas; state t of episode i gets level levelOf(i, t)
	Flush      bool     `json:"flush,omitempty"`  // Flush before state t of episode i when flushBefore(i, t)
	SHA256     string   `json:"sha256"`           // of the file
	DecodeSHA  string   `json:"decode_sha256"`    // of the decode, see decodeDigest
	Bytes      int      `json:"bytes"`
	States     int      `json:"states"`
	Retained   int      `json:"retained_coordinates"`
	Coordinate int      `json:"coordinates"`
}

// conformanceVectors lists the vectors and their options. λ is a
// parameter: lossless; a finite λ with the retention gate calibrated into
// model-gate.wmm (the normative lossy mode); and a finite λ with an integer
// test rule that exercises the container's lossy path independently of the
// gate.
var conformanceVectors = []vector{
	{File: "lossless.wmz", Model: "model.wmm", Keyframe: 4, Lanes: 3, Embed: true, Lambda: LambdaLossless, Rule: "all"},
	{File: "lossy.wmz", Model: "model-gate.wmm", Keyframe: 4, Lanes: 3, Embed: false, Lambda: 8 << 16, Rule: "gate"},
	{File: "lossy-rule.wmz", Model: "model.wmm", Keyframe: 4, Lanes: 3, Embed: false, Lambda: 3 << 16, Rule: "test-modal-half"},
	{File: "lossless-g1.wmz", Model: "model.wmm", Keyframe: 1, Lanes: 1, Embed: false, Lambda: LambdaLossless, Rule: "all"},
	{File: "levels.wmz", Model: "model-gate.wmm", Keyframe: 4, Lanes: 3, Embed: false, Lambda: LambdaLossless, Rule: "gate",
		Levels: []uint32{1 << 16, 8 << 16, 64 << 16, LambdaLossless}},
	{File: "flushed.wmz", Model: "model.wmm", Keyframe: 4, Lanes: 2, Embed: true, Lambda: LambdaLossless, Rule: "all", Flush: true},
}

// levelOf is the level of state t of episode i in a vector with q levels:
// runs of two states, cycling through the levels.
func levelOf(i, t, q int) int { return (3*i + t/2) % q }

// flushBefore reports whether a vector with Flush calls Flush before state
// t of episode i (ending a chunk early).
func flushBefore(i, t int) bool { return t > 0 && (i+t)%5 == 0 }

// encode writes the vector's input eps with model m.
func (v *vector) encode(t testing.TB, m *wm.Model, eps []episode) []byte {
	t.Helper()
	return encodeHook(t, m, eps, func(w *Writer, i, k int) error {
		if v.Flush && flushBefore(i, k) {
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if len(v.Levels) > 0 {
			return w.SetLevel(levelOf(i, k, len(v.Levels)))
		}
		return nil
	}, v.options(m.Precision)...)
}

func (v *vector) options(prec uint) []Option {
	opts := []Option{WithKeyframeInterval(v.Keyframe), WithLanes(v.Lanes), WithEmbeddedModel(v.Embed)}
	switch {
	case v.Rule == "gate" && len(v.Levels) > 0:
		opts = append(opts, WithLevels(v.Levels...))
	case v.Rule == "gate":
		opts = append(opts, WithLambda(v.Lambda))
	case v.Rule == "test-modal-half":
		opts = append(opts, withGate(v.Lambda, testRetain(prec)))
	}
	return opts
}

// retain returns the vector's retention rule (nil: lossless) for state t
// of episode i under model m.
func (v *vector) retain(t *testing.T, m *wm.Model) func(i, t int) retainFunc {
	switch v.Rule {
	case "gate":
		p, err := gate.FromModel(m)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Levels) == 0 {
			r := p.Rule(v.Lambda).Retain
			return func(int, int) retainFunc { return r }
		}
		return func(i, k int) retainFunc {
			l := v.Levels[levelOf(i, k, len(v.Levels))]
			if l == LambdaLossless {
				return nil
			}
			return p.Rule(l).Retain
		}
	case "test-modal-half":
		r := testRetain(m.Precision)
		return func(int, int) retainFunc { return r }
	}
	return func(int, int) retainFunc { return nil }
}

// conformanceEpisodes generates the input with integer arithmetic only:
// a few "pages" an agent revisits, each state a page with some coordinates
// changed, persistent slots, small actions and a few extreme ones.
func conformanceEpisodes() (wm.Geometry, []episode) {
	g := wm.Geometry{S: 3, M: 4, K: 24}
	n := g.N()
	rng := rand.New(rand.NewPCG(0x776d7a, 2026))
	pages := make([][]uint16, 5)
	for i := range pages {
		pages[i] = make([]uint16, n)
		for j := range pages[i] {
			pages[i][j] = uint16(rng.IntN(g.K))
		}
	}
	var eps []episode
	for i, T := range []int{9, 0, 14, 1, 7, 3} {
		e := episode{actions: make([]int64, T), codes: make([]uint16, T*n)}
		if i%2 == 0 {
			e.meta = fmt.Appendf(nil, `{"episode":%d,"agent":"conformance"}`, i)
		}
		cur := append([]uint16(nil), pages[rng.IntN(len(pages))]...)
		for t := range T {
			switch r := rng.IntN(16); {
			case t == 0:
				e.actions[t] = wm.NoAction
			case r < 9:
				e.actions[t] = int64(r % 4)
			case r < 12: // revisit a page
				e.actions[t] = 4
				copy(cur, pages[rng.IntN(len(pages))])
			case r < 15:
				e.actions[t] = e.actions[t-1]
			default:
				e.actions[t] = []int64{-1 << 63, 1<<63 - 1, 1 << 40, -300}[rng.IntN(4)]
			}
			for j := range cur {
				if rng.IntN(8) == 0 {
					cur[j] = uint16(rng.IntN(g.K))
				}
			}
			copy(e.codes[t*n:], cur)
		}
		eps = append(eps, e)
	}
	return g, eps
}

// decodeDigest is the SHA-256 of a decode: for each episode, its metadata
// length (u32) and bytes and its state count (u64), then per state its
// action (i64) and codes (u16), little-endian.
func decodeDigest(eps []episode, n int) string {
	h := sha256.New()
	for _, e := range eps {
		b := le.AppendUint32(nil, uint32(len(e.meta)))
		b = append(b, e.meta...)
		b = le.AppendUint64(b, uint64(len(e.actions)))
		for t, a := range e.actions {
			b = le.AppendUint64(b, uint64(a))
			for _, v := range e.codes[t*n : (t+1)*n] {
				b = le.AppendUint16(b, v)
			}
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// reconstruct computes the writer's reconstruction of vector v
// independently of the chunk coder, with the world model's predictor and
// the retention rule of each state.
func reconstruct(m *wm.Model, eps []episode, v *vector, rules func(i, t int) retainFunc) []episode {
	n := m.Geom.N()
	p := m.NewPredictor()
	out := make([]episode, len(eps))
	for i, e := range eps {
		out[i] = episode{meta: e.meta, actions: e.actions, codes: make([]uint16, len(e.codes))}
		inChunk := 0
		for t, a := range e.actions {
			if t == 0 || inChunk == v.Keyframe || (v.Flush && flushBefore(i, t)) {
				p.Reset()
				inChunk = 0
			}
			inChunk++
			retain := rules(i, t)
			p.Begin(a)
			for j := range n {
				v := e.codes[t*n+j]
				if p.Predict(j); retain != nil && !retain(j, p) {
					v = p.Modal()
				}
				p.Commit(j, v)
				out[i].codes[t*n+j] = v
			}
		}
	}
	return out
}

// decodeAllWays is decodeEverything with options: sequential, by episode,
// Verify, and state by state must agree.
func decodeAllWays(b []byte, m *wm.Model, opts ...Option) ([]episode, error) {
	seq, err := readAll(b, m, opts...)
	if err != nil {
		return nil, err
	}
	f, err := Open(bytes.NewReader(b), int64(len(b)), m, opts...)
	if err != nil {
		return nil, err
	}
	ra, err := fileEpisodes(f)
	if err != nil {
		return nil, err
	}
	if err := sameEpisodes(ra, seq); err != nil {
		return nil, err
	}
	if err := f.Verify(); err != nil {
		return nil, err
	}
	n := f.Model().Geom.N()
	for e := range seq {
		for s := range seq[e].actions {
			a, c, err := f.StateAction(e, s)
			if err != nil {
				return nil, err
			}
			if a != seq[e].actions[s] || !bytes.Equal(u16bytes(c), u16bytes(seq[e].codes[s*n:(s+1)*n])) {
				return nil, errors.New("StateAction differs from sequential decode")
			}
		}
	}
	return seq, nil
}

type conformanceSet struct {
	models  map[string]*wm.Model // by file name
	eps     []episode
	vectors []vector
	files   map[string][]byte
}

// conformanceModels trains the model of the vectors on their input, and
// calibrates a retention gate into a copy of it.
func conformanceModels(t *testing.T, g wm.Geometry, prec uint, eps []episode) map[string]*wm.Model {
	m := trainModel(g, prec, eps)
	train := make([]wm.Episode, 0, len(eps))
	for _, e := range eps {
		if len(e.actions) > 0 {
			train = append(train, wm.Episode{Codes: e.codes, Actions: e.actions})
		}
	}
	p, err := gate.Calibrate(m, train, gate.CalibOptions{MinSamples: 8})
	if err != nil {
		t.Fatal(err)
	}
	gm, err := gate.Apply(m, p)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*wm.Model{"model.wmm": m, "model-gate.wmm": gm}
}

// loadConformance reads the committed vectors (after writing them with
// -update).
func loadConformance(t *testing.T) *conformanceSet {
	t.Helper()
	path := func(n string) string { return filepath.Join(conformanceDir, n) }
	if *update {
		g, eps := conformanceEpisodes()
		in := conformanceInput{Geometry: g, Precision: 12}
		for _, e := range eps {
			in.Episodes = append(in.Episodes, conformanceStep{string(e.meta), e.actions, e.codes})
		}
		js, err := json.MarshalIndent(in, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(conformanceDir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{"input.json": append(js, '\n')}
		models := conformanceModels(t, g, in.Precision, eps)
		for n, m := range models {
			if files[n], err = m.MarshalBinary(); err != nil {
				t.Fatal(err)
			}
		}
		var vs []vector
		for _, v := range conformanceVectors {
			m := models[v.Model]
			b := v.encode(t, m, eps)
			dm := m
			if v.Embed {
				dm = nil // decode with the embedded model
			}
			dec, err := decodeAllWays(b, dm, v.options(m.Precision)...)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Open(bytes.NewReader(b), int64(len(b)), m, v.options(m.Precision)...)
			if err != nil {
				t.Fatal(err)
			}
			info := f.Info()
			sum := sha256.Sum256(b)
			v.SHA256, v.DecodeSHA = hex.EncodeToString(sum[:]), decodeDigest(dec, g.N())
			v.Bytes, v.States, v.Retained = len(b), int(info.States), int(info.Retained)
			v.Coordinate = v.States * g.N()
			files[v.File] = b
			vs = append(vs, v)
		}
		man, err := json.MarshalIndent(vs, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		files["vectors.json"] = append(man, '\n')
		for n, b := range files {
			if err := os.WriteFile(path(n), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := func(n string) []byte {
		b, err := os.ReadFile(path(n))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var in conformanceInput
	if err := json.Unmarshal(read("input.json"), &in); err != nil {
		t.Fatal(err)
	}
	s := &conformanceSet{models: map[string]*wm.Model{}, files: map[string][]byte{}}
	for _, e := range in.Episodes {
		ep := episode{actions: e.Actions, codes: e.Codes}
		if e.Meta != "" {
			ep.meta = []byte(e.Meta)
		}
		s.eps = append(s.eps, ep)
	}
	if err := json.Unmarshal(read("vectors.json"), &s.vectors); err != nil {
		t.Fatal(err)
	}
	for _, v := range s.vectors {
		s.files[v.File] = read(v.File)
		if s.models[v.Model] == nil {
			m, err := wm.UnmarshalModel(read(v.Model))
			if err != nil {
				t.Fatalf("%s: %v (if the model format changed on purpose, run: go test ./format -run TestConformance -update)", v.Model, err)
			}
			s.models[v.Model] = m
		}
	}
	return s
}

// modelFor returns the model a decoder is given for vector v: none when the
// file embeds it.
func (s *conformanceSet) modelFor(v *vector) *wm.Model {
	if v.Embed {
		return nil
	}
	return s.models[v.Model]
}

// TestConformance encodes the committed input with the committed model and
// compares with the committed files byte for byte, then decodes them every
// way and compares with the committed decode digests, the source
// (lossless) and an independent reconstruction (lossy).
func TestConformance(t *testing.T) {
	s := loadConformance(t)
	if len(s.vectors) != len(conformanceVectors) {
		t.Fatalf("vectors.json lists %d vectors, want %d", len(s.vectors), len(conformanceVectors))
	}
	for i := range s.vectors {
		v := &s.vectors[i]
		m := s.models[v.Model]
		n := m.Geom.N()
		t.Run(v.File, func(t *testing.T) {
			want := s.files[v.File]
			sum := sha256.Sum256(want)
			if hex.EncodeToString(sum[:]) != v.SHA256 {
				t.Fatalf("%s does not match its SHA-256 in vectors.json", v.File)
			}
			opts := v.options(m.Precision)
			got := v.encode(t, m, s.eps)
			if !bytes.Equal(got, want) {
				t.Fatalf("encoding input.json gives %d bytes that differ from %s (%d bytes) at byte %d; "+
					"if the change is intended, run: go test ./format -run TestConformance -update",
					len(got), v.File, len(want), firstDiff(got, want))
			}
			dec, err := decodeAllWays(want, s.modelFor(v), opts...)
			if err != nil {
				t.Fatal(err)
			}
			if d := decodeDigest(dec, n); d != v.DecodeSHA {
				t.Fatalf("decode digest %s, want %s", d, v.DecodeSHA)
			}
			if err := sameEpisodes(dec, reconstruct(m, s.eps, v, v.retain(t, m))); err != nil {
				t.Fatalf("decode differs from the writer's reconstruction: %v", err)
			}
			if v.Rule == "all" {
				if err := sameEpisodes(dec, s.eps); err != nil {
					t.Fatalf("lossless decode differs from the input: %v", err)
				}
			} else if v.Retained >= v.Coordinate || sameEpisodes(dec, s.eps) == nil {
				t.Fatalf("lossy vector omits nothing (%d of %d retained)", v.Retained, v.Coordinate)
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestConformanceCorruption flips every bit of the lossless and lossy
// conformance files and cuts them at every offset: decoding must fail with
// a format error or give exactly the committed decode, never other data.
// A cut file must fail without recovery, and give a prefix of the decode
// with it.
func TestConformanceCorruption(t *testing.T) {
	s := loadConformance(t)
	for i := range s.vectors {
		v := &s.vectors[i]
		switch v.File {
		case "lossless.wmz", "lossy.wmz", "levels.wmz", "flushed.wmz":
		default:
			continue // the others differ only in options
		}
		n := s.models[v.Model].Geom.N()
		t.Run(v.File, func(t *testing.T) {
			b := bytes.Clone(s.files[v.File])
			opts := v.options(s.models[v.Model].Precision)
			m := s.modelFor(v)
			step := 1
			if testing.Short() {
				step = 61 // a sample of the offsets under the race detector
			}
			for i := 0; i < 8*len(b); i += step {
				b[i/8] ^= 1 << (i % 8)
				got, err := decodeAllWays(b, m, opts...)
				switch {
				case err == nil:
					if d := decodeDigest(got, n); d != v.DecodeSHA {
						t.Fatalf("bit %d flipped: decoded different data", i)
					}
				case !isFileError(err):
					t.Fatalf("bit %d flipped: error %v is not a format error", i, err)
				}
				b[i/8] ^= 1 << (i % 8)
			}
			want, err := decodeAllWays(b, m, opts...)
			if err != nil {
				t.Fatal(err)
			}
			ropts := append(opts[:len(opts):len(opts)], WithRecovery(true))
			for cut := 0; cut < len(b); cut += step {
				if _, err := readAll(b[:cut], m, opts...); !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("cut at %d: sequential decode: %v", cut, err)
				}
				if _, err := openAll(b[:cut], m, opts...); !isFileError(err) {
					t.Fatalf("cut at %d: random access: %v", cut, err)
				}
				f, err := Open(bytes.NewReader(b[:cut]), int64(cut), m, ropts...)
				if err != nil {
					if !errors.Is(err, io.ErrUnexpectedEOF) {
						t.Fatalf("cut at %d: recovery: %v", cut, err)
					}
					continue
				}
				got, err := fileEpisodes(f)
				if err != nil {
					t.Fatalf("cut at %d: recovered file: %v", cut, err)
				}
				if err := isPrefix(got, want, n); err != nil {
					t.Fatalf("cut at %d: recovery: %v", cut, err)
				}
			}
		})
	}
}

// isPrefix checks that got is a prefix of want: the same episodes, the
// last one possibly with only its first states.
func isPrefix(got, want []episode, n int) error {
	if len(got) > len(want) {
		return fmt.Errorf("%d episodes, more than %d", len(got), len(want))
	}
	for i, e := range got {
		w := want[i]
		k := len(e.actions)
		if i < len(got)-1 {
			k = len(w.actions)
		}
		if k > len(w.actions) || !bytes.Equal(e.meta, w.meta) {
			return fmt.Errorf("episode %d differs", i)
		}
		w.actions, w.codes = w.actions[:k], w.codes[:k*n]
		if err := sameEpisodes(normalize([]episode{e}), normalize([]episode{w})); err != nil {
			return fmt.Errorf("episode %d: %v", i, err)
		}
	}
	return nil
}
