package format

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/testkit"
	"github.com/wmzip/wmzip/internal/wm"
)

// Conformance vectors (SPEC.md, "Conformance vectors"): inputs, models
// and the .wmz files this package writes for them, with the SHA-256 of each
// file and of its decode. Two models are trained on input.json and
// committed, not retrained, because training uses floating point; the
// other models are built by integer arithmetic (conformance_build_test.go)
// to reach every decode path. Everything after a model is integer
// arithmetic and must give the same bytes under every build and
// architecture (.ci/run runs this test under -tags noasm, GOAMD64=v3,
// GOARCH=386 and GOARCH=arm64). Regenerate deliberately with
//
//	go test ./format -run TestConformance -update
//
// which keeps the committed trained models (delete them to retrain).
const conformanceDir = "../../testdata/conformance"

// conformanceInput is the JSON form of an input file of the vectors.
type conformanceInput struct {
	Geometry  wm.Geometry       `json:"geometry"`
	Precision uint              `json:"precision"`
	Episodes  []conformanceStep `json:"episodes"`
}

type conformanceStep struct {
	Meta    string   `json:"meta,omitempty"` // "" for none
	Actions []int64  `json:"actions"`
	Codes   []uint16 `json:"codes"`
	// Levels, if present, is the retention level of every state, used by
	// the vectors with levels; FlushBefore lists the states before which
	// the vectors with flushes end the chunk.
	Levels      []int `json:"levels,omitempty"`
	FlushBefore []int `json:"flush_before,omitempty"`
}

// vector is one conformance file: how it is written, and its digests.
type vector struct {
	File  string `json:"file"`
	Input string `json:"input"`
	Model string `json:"model"` // the model file (or bundle) the vector is written with
	// Member, when Model is a bundle (SPEC.md 3.6), is the member the file
	// was written with, 0 the first (informative: a decoder picks it by
	// the model ID the file's header names).
	Member   int             `json:"member,omitempty"`
	Keyframe int             `json:"keyframe_interval"`
	Lanes    int             `json:"lanes"`
	Embed    bool            `json:"embed_model"`
	Lambda   lambda.Lambda   `json:"lambda"`           // the header's λ (LambdaLossless: lossless)
	Levels   []lambda.Lambda `json:"levels,omitempty"` // level λs; state levels from the input
	Flush    bool            `json:"flush,omitempty"`  // flush before the input's flush_before states
	Version  int             `json:"version"`          // the container version
	// Modes, if present, is the mode and level of every chunk of the file
	// in order (6.5), chosen by the writer instead of its own choice.
	Modes  [][2]uint8 `json:"chunk_modes,omitempty"`
	Covers string     `json:"covers"` // what the vector exercises (informative)

	SHA256     string `json:"sha256"`        // of the file
	DecodeSHA  string `json:"decode_sha256"` // of the decode, see decodeDigest
	Bytes      int    `json:"bytes"`
	States     int    `json:"states"`
	Retained   int    `json:"retained_coordinates"`
	Coordinate int    `json:"coordinates"`
}

// lossy reports whether v's file has a finite λ (one level at least).
func (v *vector) lossy() bool { return v.Lambda != LambdaLossless || len(v.Levels) > 0 }

// conformanceVectors lists the vectors and their options.
var conformanceVectors = []vector{
	{File: "lossless.wmz", Input: "input.json", Model: "model.wmm", Keyframe: 4, Lanes: 3, Embed: true, Lambda: LambdaLossless,
		Covers: "a trained model (offset law, class context statistics, C = K+1, no second table), embedded; chunks of 4 states, 3 lanes; empty episodes, metadata, extreme actions"},
	{File: "lossy.wmz", Input: "input.json", Model: "model-gate.wmm", Keyframe: 4, Lanes: 3, Lambda: 8 << 16,
		Covers: "the retention gate calibrated on the trained model (modal bins, uniform distances)"},
	{File: "lossless-g1.wmz", Input: "input.json", Model: "model.wmm", Keyframe: 1, Lanes: 1, Lambda: LambdaLossless,
		Covers: "every state a keyframe (G = 1), one lane"},
	{File: "levels.wmz", Input: "input.json", Model: "model-gate.wmm", Keyframe: 4, Lanes: 3, Lambda: LambdaLossless,
		Levels: []lambda.Lambda{1 << 16, 8 << 16, 64 << 16, LambdaLossless},
		Covers: "four retention levels, the last lossless"},
	{File: "flushed.wmz", Input: "input.json", Model: "model.wmm", Keyframe: 4, Lanes: 2, Embed: true, Lambda: LambdaLossless, Flush: true,
		Covers: "chunks ended early by flushes"},
	{File: "lossy-axis0.wmz", Input: "input.json", Model: "model-gate-axis0.wmm", Keyframe: 4, Lanes: 2, Lambda: 100 << 16,
		Covers: "the gate with entropy bins (axis 0, section version 1), per-subspace distance tables, per-coordinate weights, bins and coordinates with ê = 0, bins without estimate"},
	{File: "lossy-distn.wmz", Input: "input.json", Model: "model-gate-distn.wmm", Keyframe: 4, Lanes: 2, Lambda: 8 << 16,
		Covers: "the gate with modal bins at BinShift 0 (keys beyond the last bin), per-coordinate distance tables, no weights"},
	{File: "mix.wmz", Input: "input-mix.json", Model: "model-mix.wmm", Keyframe: 8, Lanes: 2, Lambda: LambdaLossless,
		Covers: "a second fallback table (C2 = K+1) and the combined row, W(d) = 0 in its powers, no offset law (succany by ST), no class context statistics, A = 200, three continuations per slot"},
	{File: "mix64.wmz", Input: "input-mix64.json", Model: "model-mix64.wmm", Keyframe: 8, Lanes: 2, Lambda: LambdaLossless,
		Covers: "a second fallback table at K = 64 and P = 16: combined rows coded as they are, with and without a remainder to move"},
	{File: "lossy64.wmz", Input: "input-mix64.json", Model: "model-gate64.wmm", Keyframe: 8, Lanes: 2, Lambda: 4 << 16,
		Covers: "the fill at K = 64 (version 4): weak predictions filled with the row fill or the modal value, by their expected distances"},
	{File: "lossy64-search.wmz", Input: "input-mix64.json", Model: "model-gate64-search.wmm", Keyframe: 8, Lanes: 2, Lambda: 4 << 16,
		Covers: "GATE flag bit 2, the search fill, at K = 64 with distance tables (version 4): every prediction gated by ê·V, omitted one-step predictions taking their spread fill"},
	{File: "mix3.wmz", Input: "input-mix.json", Model: "model-mix3.wmm", Keyframe: 8, Lanes: 2, Lambda: LambdaLossless,
		Covers: "a version-3 model with a second table: both fallback tables derived from the reference store"},
	{File: "k257.wmz", Input: "input-k257.json", Model: "model-k257.wmm", Keyframe: 16, Lanes: 1, Lambda: LambdaLossless,
		Covers: "K = 257 (two-byte reference codes), M = 1, P = 16 (fallback rows used as they are), C = 1, a combined row whose weights reach 2^32 (Quantize's scaling), an offset law with as many spikes as slots"},
	{File: "k2.wmz", Input: "input-k2.json", Model: "model-k2.wmm", Keyframe: 4096, Lanes: 1, Lambda: LambdaLossless,
		Levels: []lambda.Lambda{1 << 16, LambdaLossless},
		Covers: "K = 2, S = M = 1, P = 10, a chunk of 2,100 states (the action and level models halve their counts), two levels, an empty episode"},
	{File: "v1.wmz", Input: "input-v1.json", Model: "model-v1.wmm", Keyframe: 8, Lanes: 2, Embed: true, Lambda: LambdaLossless,
		Covers: "a model file of version 1 (defaults, caps of 16, no predecessors), embedded"},
	{File: "caps.wmz", Input: "input-caps.json", Model: "model-caps.wmm", Keyframe: 64, Lanes: 4, Lambda: LambdaLossless,
		Covers: "every cap: 32 occurrences, 32 and 64 successor states, 1,024 dictionary tiles, 256 episode tiles, 8 continuations; K = 64"},
	{File: "p16.wmz", Input: "input-p16.json", Model: "model-p16.wmm", Keyframe: 2, Lanes: 2, Lambda: 2 << 16,
		Covers: "P = 16 with a second fallback table and an empty reference store: combined rows as tables, their modal values read by the gate"},
	{File: "weak.wmz", Input: "input-weak.json", Model: "model-weak.wmm", Keyframe: 128, Lanes: 2, Lambda: LambdaLossless,
		Covers: "the episode-tile and dictionary classes without hits (least prior), a chunk of 400 distinct tiles: their groups fall below the pruning line as they form"},
	{File: "apart.wmz", Input: "input-apart.json", Model: "model-apart.wmm", Keyframe: 8, Lanes: 1, Lambda: LambdaLossless,
		Covers: "two fallback tables whose powers peak apart (exponents 1024): every product of the combined row is below 2^8, which is then the uniform table"},
	{File: "tiny.wmz", Input: "input-tiny.json", Model: "model-tiny.wmm", Keyframe: 2, Lanes: 2, Lambda: LambdaLossless,
		Covers: "a small file, the base of the rejection vectors (reject.json)"},
	{File: "tiny-lossy.wmz", Input: "input-tiny.json", Model: "model-tiny.wmm", Keyframe: 2, Lanes: 2, Lambda: LambdaLossless,
		Levels: []lambda.Lambda{3 << 16, LambdaLossless},
		Covers: "a small file with two levels and a gate with distance tables and weights, the base of the rejection vectors of levels and gates"},
	{File: "modes.wmz", Input: "input.json", Model: "model-gate-axis0.wmm", Keyframe: 4, Lanes: 2, Lambda: LambdaLossless,
		Levels: []lambda.Lambda{1 << 16, 8 << 16, 64 << 16, LambdaLossless},
		Modes:  [][2]uint8{{0, 0}, {1, 0}, {2, 1}, {2, 0}, {0, 0}, {2, 2}, {1, 0}, {2, 3}, {0, 0}, {2, 1}, {1, 0}, {2, 0}},
		Covers: "chunk modes chosen by the writer (version 4): a lossless chunk in a lossy file, chunks at one level of the table without level symbols, chunks whose states name their levels"},
	{File: "v3-lossless.wmz", Input: "input.json", Model: "model.wmm", Keyframe: 4, Lanes: 3, Embed: true, Lambda: LambdaLossless, Version: 3,
		Covers: "container version 3: its index and chunk records"},
	{File: "v3-lossy.wmz", Input: "input.json", Model: "model-gate.wmm", Keyframe: 4, Lanes: 3, Lambda: 8 << 16, Version: 3,
		Covers: "container version 3 at a finite λ: omitted coordinates take the modal value and are committed"},
	{File: "v3-lossy-axis0.wmz", Input: "input.json", Model: "model-gate-axis0.wmm", Keyframe: 4, Lanes: 2, Lambda: 100 << 16, Version: 3,
		Covers: "container version 3 with distance tables: no fill but the modal value"},
	{File: "v3-levels.wmz", Input: "input.json", Model: "model-gate.wmm", Keyframe: 4, Lanes: 3, Lambda: LambdaLossless, Version: 3,
		Levels: []lambda.Lambda{1 << 16, 8 << 16, 64 << 16, LambdaLossless},
		Covers: "container version 3 with four levels"},
	{File: "fast.wmz", Input: "input.json", Model: "model-fast.wmm", Keyframe: 4, Lanes: 3, Embed: true, Lambda: LambdaLossless,
		Covers: "a model of the fast level (version 4, level flag, version-2 layout), embedded: slot events (copies by rank, escapes, slots without candidates), the match's binary event, lookups in the chunk and the dictionary, fallback rows requantized to P = 12"},
	{File: "fast-lossy.wmz", Input: "input.json", Model: "model-gate-fast.wmm", Keyframe: 4, Lanes: 3, Lambda: 8 << 16,
		Covers: "the fast level at a finite λ: the gate decides the coordinates of escaped slots only, omitted coordinates committed without evidence"},
	{File: "fast-levels.wmz", Input: "input.json", Model: "model-gate-fast.wmm", Keyframe: 4, Lanes: 2, Lambda: LambdaLossless,
		Levels: []lambda.Lambda{1 << 16, 8 << 16, 64 << 16, LambdaLossless}, Flush: true,
		Covers: "the fast level with four retention levels and flushed chunks"},
	{File: "fast-k257.wmz", Input: "input-k257.json", Model: "model-k257-fast.wmm", Keyframe: 16, Lanes: 1, Lambda: LambdaLossless,
		Covers: "the fast level at K = 257 (lookups by a map of code pairs), M = 1 (no lookup), P = 16"},
	{File: "fast-caps.wmz", Input: "input-caps.json", Model: "model-caps-fast.wmm", Keyframe: 64, Lanes: 4, Lambda: LambdaLossless,
		Covers: "the fast level with every cap of the default one: 1,024 dictionary tiles, long chunk lookups"},
	{File: "fast-tiny.wmz", Input: "input-tiny.json", Model: "model-tiny-fast.wmm", Keyframe: 2, Lanes: 2, Lambda: LambdaLossless,
		Covers: "a small file of the fast level at P = 10, the base of its rejection vectors"},
	{File: "fast-wide.wmz", Input: "input-wide.json", Model: "model-wide-fast.wmm", Keyframe: 32, Lanes: 2, Lambda: LambdaLossless,
		Covers: "the fast level at K = 300 (chunk lookups by a map of code pairs), M = 12 (long runs of the match), P = 14; slots that repeat an earlier slot of their state"},
	{File: "fast-p16.wmz", Input: "input-p16.json", Model: "model-p16-fast.wmm", Keyframe: 2, Lanes: 2, Lambda: 2 << 16,
		Covers: "the fast level without a reference store (no dictionary lookup), P = 16, under a gate"},
	{File: "fast-k2.wmz", Input: "input-k2.json", Model: "model-k2-fast.wmm", Keyframe: 4096, Lanes: 1, Lambda: LambdaLossless,
		Covers: "the fast level at K = 2, S = M = 1: a chunk of 2,100 slot events (their counts halve)"},
	{File: "fast-steady.wmz", Input: "input-steady.json", Model: "model-steady-fast.wmm", Keyframe: 1024, Lanes: 2, Lambda: LambdaLossless,
		Covers: "the fast level over one chunk of 800 states that seldom change: 3,200 slot events, the counts of a context halve"},
	{File: "copy.wmz", Input: "input.json", Model: "model-copy.wmm", Keyframe: 16, Lanes: 3, Embed: true, Lambda: LambdaLossless,
		Covers: "a model of the copy level (version 4, flags 0x6: the fields of version 3), embedded: slot events coded (copies of either candidate, escapes) and pending (counted at the slot's end), slots without a group"},
	{File: "copy-lossy.wmz", Input: "input.json", Model: "model-gate-copy.wmm", Keyframe: 16, Lanes: 2, Lambda: 8 << 16,
		Covers: "the copy level at a finite λ: the gate decides the coordinates of slots not copied, a pending event counted on the reconstruction"},
	{File: "copy-steady.wmz", Input: "input-steady-copy.json", Model: "model-steady-copy.wmm", Keyframe: 4096, Lanes: 2, Lambda: LambdaLossless,
		Covers: "the copy level over one chunk of 3,000 states that seldom change: the events of a context come to be coded, their counts halve, margins reach the last bucket"},
	{File: "copy-tiny.wmz", Input: "input-tiny.json", Model: "model-tiny-copy.wmm", Keyframe: 2, Lanes: 2, Lambda: LambdaLossless,
		Covers: "a small file of the copy level at P = 10, the base of its rejection vectors"},
	{File: "fast-lossy64.wmz", Input: "input-mix64.json", Model: "model-gate64-fast.wmm", Keyframe: 8, Lanes: 2, Lambda: 4 << 16,
		Covers: "the fast level under a gate with distance tables at K = 64: weak one-step predictions filled by the fallback row's fill (Row)"},
	{File: "meta.wmz", Input: "input-meta.json", Model: "model-tiny.wmm", Keyframe: 2, Lanes: 2, Lambda: LambdaLossless,
		Covers: "metadata that is a JSON text by the grammar alone: duplicate names, escaped lone surrogates, 1e999 and -0, arrays nested 10,000 deep, whitespace around the value, UTF-8 and DEL in strings"},
	{File: "bundle-copy.wmz", Input: "input-tiny.json", Model: "bundle.wmm", Member: 1, Keyframe: 3, Lanes: 1, Lambda: LambdaLossless,
		Covers: "a bundle given as the model: the file names its second member (model-tiny-copy.wmm, the copy level), of the geometry and content of the first (model-tiny.wmm, the default level) but another ID; chunks of 3 states, one lane"},
	{File: "bundle-fast.wmz", Input: "input-k2.json", Model: "bundle.wmm", Member: 2, Keyframe: 512, Lanes: 2, Lambda: LambdaLossless,
		Covers: "a bundle given as the model: the file names its last member (model-k2-fast.wmm, the fast level), of another geometry than the others; chunks of 512 states, two lanes"},
	{File: "fast-reach.wmz", Input: "input-reach.json", Model: "model-reach-fast.wmm", Keyframe: 64, Lanes: 2, Lambda: LambdaLossless,
		Covers: "the fast level's chunk lookup limit: slots whose earlier equal tile lies past the 64th slot of SL(h0, h1), the 65th among them, not found, and within it, the 64th among them, found; and the dictionary lookup's: the 64th tile of a run found, the 65th not"},
	{File: "round.wmz", Input: "input-round.json", Model: "model-round.wmm", Keyframe: 512, Lanes: 2, Lambda: LambdaLossless,
		Covers: "the roundings of the virtual weights: ep's and dict's shares at m = 0 and dict's at m = 1 formed with 16 more bits and multiplied by a count, ep's at m = 1 formed at the scale and added once per tile, over long lists of tiles with one first code, at P = 16"},
	{File: "scaled.wmz", Input: "input-scaled.json", Model: "model-scaled.wmm", Keyframe: 32, Lanes: 2, Lambda: LambdaLossless,
		Covers: "Quantize's index of the largest weight taken before the scaling: a combined row of total 2^32 or more whose two largest weights are equal once shifted, the larger after the other"},
}

// conformanceBundles are the bundles of the vectors (SPEC.md 3.6): each
// file and its members, models of the vectors by file name, in order.
var conformanceBundles = []struct {
	name    string
	members []string
}{
	{"bundle.wmm", []string{"model-tiny.wmm", "model-tiny-copy.wmm", "model-k2-fast.wmm"}},
}

// bundleMember returns the member of a bundle a decoder decodes file b
// with: the one whose model ID the header names (bytes 32..47, SPEC.md
// 3.6, 6.2), else the last, so that decoding fails on the model ID as
// package wmzip's does (Codec.forHeader).
func bundleMember(ms []*wm.Model, b []byte) *wm.Model {
	if len(b) >= 48 {
		for _, m := range ms {
			if id := m.ID(); bytes.Equal(id[:], b[32:48]) {
				return m
			}
		}
	}
	return ms[len(ms)-1]
}

// builtInputs and builtModels name the inputs and models built by
// conformance_build_test.go.
var builtVectors = []builtVector{
	{input: "input-mix.json", model: "model-mix.wmm", build: buildMix},
	{input: "input-mix.json", model: "model-mix3.wmm", build: buildMix3},
	{input: "input-mix64.json", model: "model-mix64.wmm", build: buildMix64},
	{input: "input-mix64.json", model: "model-gate64.wmm", build: buildGate64},
	{input: "input-mix64.json", model: "model-gate64-search.wmm", build: buildGate64Search},
	{input: "input-k257.json", model: "model-k257.wmm", build: buildK257},
	{input: "input-k2.json", model: "model-k2.wmm", build: buildK2},
	{input: "input-v1.json", model: "model-v1.wmm", build: buildV1},
	{input: "input-caps.json", model: "model-caps.wmm", build: buildCaps},
	{input: "input-p16.json", model: "model-p16.wmm", build: buildP16},
	{input: "input-tiny.json", model: "model-tiny.wmm", build: buildTiny},
	{input: "input-meta.json", model: "model-tiny.wmm", build: buildMeta},
	{input: "input-weak.json", model: "model-weak.wmm", build: buildWeak},
	{input: "input-apart.json", model: "model-apart.wmm", build: buildApart},
	{input: "input-wide.json", model: "model-wide-fast.wmm", build: buildWide},
	{input: "input-steady.json", model: "model-steady-fast.wmm", build: buildSteady},
	{input: "input-steady-copy.json", model: "model-steady-copy.wmm", build: buildSteadyCopy},
	{input: "input-reach.json", model: "model-reach-fast.wmm", build: buildReach},
	{input: "input-round.json", model: "model-round.wmm", build: buildRound},
	{input: "input-scaled.json", model: "model-scaled.wmm", build: buildScaled},
}

// fastModels are the models of the fast and copy levels (wm.Model.WithLevel,
// an integer copy) of other models of the vectors, by file name.
var fastModels = []struct {
	name, of string
	level    int
}{
	{"model-fast.wmm", "model.wmm", wm.LevelFast},
	{"model-gate-fast.wmm", "model-gate.wmm", wm.LevelFast},
	{"model-k257-fast.wmm", "model-k257.wmm", wm.LevelFast},
	{"model-caps-fast.wmm", "model-caps.wmm", wm.LevelFast},
	{"model-tiny-fast.wmm", "model-tiny.wmm", wm.LevelFast},
	{"model-p16-fast.wmm", "model-p16.wmm", wm.LevelFast},
	{"model-k2-fast.wmm", "model-k2.wmm", wm.LevelFast},
	{"model-gate64-fast.wmm", "model-gate64.wmm", wm.LevelFast},
	{"model-copy.wmm", "model.wmm", wm.LevelCopy},
	{"model-gate-copy.wmm", "model-gate.wmm", wm.LevelCopy},
	{"model-tiny-copy.wmm", "model-tiny.wmm", wm.LevelCopy},
}

// Schedules of input.json: the level of state t of episode i among four,
// and whether a flush comes before it.
func levelOf(i, t, q int) int   { return (3*i + t/2) % q }
func flushBefore(i, t int) bool { return t > 0 && (i+t)%5 == 0 }

// encode writes the vector's input with model m.
func (v *vector) encode(t testing.TB, m *wm.Model, in *conformanceInput) []byte {
	t.Helper()
	eps := in.episodes()
	return encodeHook(t, m, eps, func(w *Writer, i, k int) error {
		if v.Flush && slices.Contains(in.Episodes[i].FlushBefore, k) {
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if len(v.Levels) > 0 {
			return w.SetLevel(in.Episodes[i].Levels[k])
		}
		return nil
	}, v.writeOptions()...)
}

func (v *vector) options() []Option {
	opts := []Option{WithKeyframeInterval(v.Keyframe), WithLanes(v.Lanes), WithEmbeddedModel(v.Embed)}
	switch {
	case len(v.Levels) > 0:
		opts = append(opts, WithLevels(v.Levels...))
	case v.Lambda != LambdaLossless:
		opts = append(opts, WithLambda(v.Lambda))
	}
	return opts
}

// writeOptions are the options that write the vector: options and the
// writer's choices of version and chunk modes, and exact copies (so that
// the reconstruction follows from the input: see reconstruct).
func (v *vector) writeOptions() []Option {
	opts := append(v.options(), withVersion(v.version()), withExactCopies())
	if v.Modes != nil {
		opts = append(opts, withChunkModes(func(k int) chunkMode {
			return chunkMode{v.Modes[k][0], v.Modes[k][1]}
		}))
	}
	return opts
}

// version is the vector's container version.
func (v *vector) version() int { return cmp.Or(v.Version, Version) }

// rules returns the retention rule of state t of episode i under model m
// (nil: every coordinate coded), given the level of every state as a
// Reader reports it (−1: a chunk coded losslessly).
func (v *vector) rules(t *testing.T, m *wm.Model, levels [][]int) func(i, t int) func(int, *wm.Predictor) (bool, uint16) {
	if !v.lossy() {
		return func(int, int) func(int, *wm.Predictor) (bool, uint16) { return nil }
	}
	p, err := gate.FromModel(m)
	if err != nil {
		t.Fatal(err)
	}
	deciders := map[lambda.Lambda]func(int, *wm.Predictor) (bool, uint16){}
	return func(i, k int) func(int, *wm.Predictor) (bool, uint16) {
		l := v.Lambda
		switch lv := levels[i][k]; {
		case lv < 0:
			return nil
		case len(v.Levels) > 0:
			l = v.Levels[lv]
		}
		if l == LambdaLossless {
			return nil
		}
		if deciders[l] == nil {
			if v.version() >= 4 {
				deciders[l] = p.Rule(l).NewDecider().Decide
			} else {
				deciders[l] = gate.ModalFill(p.Rule(l).Retain)
			}
		}
		return deciders[l]
	}
}

// stateLevels decodes file b and returns the level of every state as the
// Reader reports it.
func stateLevels(t *testing.T, b []byte, m *wm.Model, opts ...Option) [][]int {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b), m, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]int
	for {
		if _, err := r.NextEpisode(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var ls []int
		for {
			if _, _, err := r.ReadState(nil); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			ls = append(ls, r.Level())
		}
		out = append(out, ls)
	}
	return out
}

// episodes returns the input's episodes.
func (in *conformanceInput) episodes() []episode {
	var eps []episode
	for _, e := range in.Episodes {
		ep := episode{Actions: e.Actions, Codes: e.Codes}
		if e.Meta != "" {
			ep.Meta = []byte(e.Meta)
		}
		eps = append(eps, ep)
	}
	return eps
}

// conformanceEpisodes generates input.json with integer arithmetic only:
// a few "pages" an agent revisits, each state a page with some coordinates
// changed, persistent slots, small actions and a few extreme ones, and
// the schedules of levels and flushes.
func conformanceEpisodes() conformanceInput {
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
	in := conformanceInput{Geometry: g, Precision: 12}
	for i, T := range []int{9, 0, 14, 1, 7, 3} {
		e := conformanceStep{Actions: make([]int64, T), Codes: make([]uint16, T*n), Levels: make([]int, T)}
		if i%2 == 0 {
			e.Meta = fmt.Sprintf(`{"episode":%d,"agent":"conformance"}`, i)
		}
		cur := append([]uint16(nil), pages[rng.IntN(len(pages))]...)
		for t := range T {
			switch r := rng.IntN(16); {
			case t == 0:
				e.Actions[t] = wm.NoAction
			case r < 9:
				e.Actions[t] = int64(r % 4)
			case r < 12: // revisit a page
				e.Actions[t] = 4
				copy(cur, pages[rng.IntN(len(pages))])
			case r < 15:
				e.Actions[t] = e.Actions[t-1]
			default:
				e.Actions[t] = []int64{-1 << 63, 1<<63 - 1, 1 << 40, -300}[rng.IntN(4)]
			}
			for j := range cur {
				if rng.IntN(8) == 0 {
					cur[j] = uint16(rng.IntN(g.K))
				}
			}
			copy(e.Codes[t*n:], cur)
			e.Levels[t] = levelOf(i, t, 4)
			if flushBefore(i, t) {
				e.FlushBefore = append(e.FlushBefore, t)
			}
		}
		in.Episodes = append(in.Episodes, e)
	}
	return in
}

// decodeDigest is the SHA-256 of a decode: for each episode, its metadata
// length (u32) and bytes and its state count (u64), then per state its
// action (i64) and codes (u16), little-endian.
func decodeDigest(eps []episode, n int) string {
	h := sha256.New()
	for _, e := range eps {
		b := le.AppendUint32(nil, uint32(len(e.Meta)))
		b = append(b, e.Meta...)
		b = le.AppendUint64(b, uint64(len(e.Actions)))
		for t, a := range e.Actions {
			b = le.AppendUint64(b, uint64(a))
			for _, v := range e.Codes[t*n : (t+1)*n] {
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
func reconstruct(m *wm.Model, in *conformanceInput, v *vector, rules func(i, t int) func(int, *wm.Predictor) (bool, uint16)) []episode {
	restart := func(i, t, inChunk int) bool {
		return t == 0 || inChunk == v.Keyframe || (v.Flush && slices.Contains(in.Episodes[i].FlushBefore, t))
	}
	return testkit.Reconstruct(m, in.episodes(), restart, rules, v.version() >= 4)
}

// decodeAllWays is decodeEverything with options: sequential, by episode,
// Verify, and state by state must agree.
func decodeAllWays(b []byte, m *wm.Model, opts ...Option) ([]episode, error) {
	// The sequential reader on one goroutine and decoding ahead on three
	// give the same states and the same error.
	seq, err := readAll(b, m, append(slices.Clone(opts), WithThreads(1))...)
	ahead, aerr := readAll(b, m, append(slices.Clone(opts), WithThreads(3))...)
	if (err == nil) != (aerr == nil) || err != nil && err.Error() != aerr.Error() {
		return nil, fmt.Errorf("one goroutine: %v; decoding ahead: %v", err, aerr)
	}
	if err != nil {
		return nil, err
	}
	if err := sameEpisodes(ahead, seq); err != nil {
		return nil, fmt.Errorf("decoding ahead: %w", err)
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
		for s := range seq[e].Actions {
			a, c, err := f.StateAction(e, s)
			if err != nil {
				return nil, err
			}
			if a != seq[e].Actions[s] || !bytes.Equal(u16bytes(c), u16bytes(seq[e].Codes[s*n:(s+1)*n])) {
				return nil, errors.New("StateAction differs from sequential decode")
			}
		}
	}
	return seq, nil
}

type conformanceSet struct {
	models  map[string]*wm.Model   // by file name
	bundles map[string][]*wm.Model // the members of each bundle, by file name
	inputs  map[string]*conformanceInput
	vectors []vector
	files   map[string][]byte
}

// conformanceModels trains a model on eps and calibrates a retention
// gate into a copy of it ("model.wmm" and "model-gate.wmm").
func conformanceModels(t *testing.T, g wm.Geometry, prec uint, eps []episode) map[string]*wm.Model {
	m := trainModel(g, prec, eps)
	return map[string]*wm.Model{"model.wmm": m, "model-gate.wmm": calibrated(t, m, eps)}
}

// calibrated returns m with a retention gate calibrated on eps.
func calibrated(t *testing.T, m *wm.Model, eps []episode) *wm.Model {
	train := make([]wm.Episode, 0, len(eps))
	for _, e := range eps {
		if len(e.Actions) > 0 {
			train = append(train, wm.Episode{Codes: e.Codes, Actions: e.Actions})
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
	return gm
}

// conformanceModelSet returns the models of the vectors: the model trained
// on input.json and its copy with a calibrated gate (the committed ones if
// present), copies with the gates of conformanceGates, and the built
// models.
func conformanceModelSet(t *testing.T, in *conformanceInput) map[string]*wm.Model {
	eps := in.episodes()
	ms := map[string]*wm.Model{}
	for _, n := range []string{"model.wmm", "model-gate.wmm"} {
		if b, err := os.ReadFile(filepath.Join(conformanceDir, n)); err == nil {
			if ms[n], err = wm.UnmarshalModel(b); err != nil {
				t.Fatalf("%s: %v (delete it to retrain)", n, err)
			}
		}
	}
	if ms["model.wmm"] == nil {
		ms["model.wmm"] = trainModel(in.Geometry, in.Precision, eps)
		delete(ms, "model-gate.wmm")
	}
	m := ms["model.wmm"]
	if ms["model-gate.wmm"] == nil {
		ms["model-gate.wmm"] = calibrated(t, m, eps)
	}
	for n, p := range conformanceGates(m) {
		gm, err := gate.Apply(m, p)
		if err != nil {
			t.Fatal(err)
		}
		ms[n] = gm
	}
	return ms
}

// writeInput writes an input file: one line per field, arrays on one line.
func writeInput(in *conformanceInput) []byte {
	line := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "{\n \"geometry\": %s,\n \"precision\": %d,\n \"episodes\": [", line(in.Geometry), in.Precision)
	for i, e := range in.Episodes {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString("\n  {")
		sep := "\n"
		if e.Meta != "" {
			fmt.Fprintf(&sb, "%s   \"meta\": %s", sep, line(e.Meta))
			sep = ",\n"
		}
		fmt.Fprintf(&sb, "%s   \"actions\": %s,\n   \"codes\": %s", sep, line(e.Actions), line(e.Codes))
		if e.Levels != nil {
			fmt.Fprintf(&sb, ",\n   \"levels\": %s", line(e.Levels))
		}
		if e.FlushBefore != nil {
			fmt.Fprintf(&sb, ",\n   \"flush_before\": %s", line(e.FlushBefore))
		}
		sb.WriteString("\n  }")
	}
	sb.WriteString("\n ]\n}\n")
	return []byte(sb.String())
}

// updateConformance rewrites the inputs, models, files and vectors.json.
func updateConformance(t *testing.T) {
	in := conformanceEpisodes()
	inputs := map[string]*conformanceInput{"input.json": &in}
	models := conformanceModelSet(t, &in)
	for _, b := range builtVectors {
		bi, bm := b.build()
		inputs[b.input], models[b.model] = &bi, bm
	}
	for _, f := range fastModels {
		var err error
		if models[f.name], err = models[f.of].WithLevel(f.level); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string][]byte{}
	for n, in := range inputs {
		files[n] = writeInput(in)
	}
	for n, m := range models {
		var err error
		if files[n], err = m.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	}
	bundles := map[string][]*wm.Model{}
	for _, bd := range conformanceBundles {
		var ms []*wm.Model
		for _, n := range bd.members {
			if models[n] == nil {
				t.Fatalf("%s: no model %s", bd.name, n)
			}
			ms = append(ms, models[n])
		}
		var err error
		if files[bd.name], err = wm.MarshalBundle(ms); err != nil {
			t.Fatal(err)
		}
		bundles[bd.name] = ms
	}
	var vs []vector
	for _, v := range conformanceVectors {
		m, in := models[v.Model], inputs[v.Input]
		if ms := bundles[v.Model]; ms != nil && v.Member >= 0 && v.Member < len(ms) {
			m = ms[v.Member]
		}
		if m == nil || in == nil {
			t.Fatalf("%s: no model %s (member %d) or input %s", v.File, v.Model, v.Member, v.Input)
		}
		b := v.encode(t, m, in)
		dm := m
		switch {
		case v.Embed:
			dm = nil // decode with the embedded model
		case bundles[v.Model] != nil:
			dm = bundleMember(bundles[v.Model], b) // as a decoder given the bundle
		}
		dec, err := decodeAllWays(b, dm, v.options()...)
		if err != nil {
			t.Fatalf("%s: %v", v.File, err)
		}
		f, err := Open(bytes.NewReader(b), int64(len(b)), m, v.options()...)
		if err != nil {
			t.Fatal(err)
		}
		info := f.Info()
		sum := sha256.Sum256(b)
		v.SHA256, v.DecodeSHA = hex.EncodeToString(sum[:]), decodeDigest(dec, m.Geom.N())
		v.Bytes, v.States, v.Retained = len(b), int(info.States), int(info.Retained)
		v.Version = v.version()
		v.Coordinate = v.States * m.Geom.N()
		files[v.File] = b
		vs = append(vs, v)
	}
	man, err := json.MarshalIndent(vs, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	files["vectors.json"] = append(man, '\n')
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(conformanceDir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// loadConformance reads the committed vectors (after writing them with
// -update).
func loadConformance(t *testing.T) *conformanceSet {
	t.Helper()
	if *update {
		updateConformance(t)
	}
	read := func(n string) []byte {
		b, err := os.ReadFile(filepath.Join(conformanceDir, n))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	s := &conformanceSet{models: map[string]*wm.Model{}, bundles: map[string][]*wm.Model{}, inputs: map[string]*conformanceInput{}, files: map[string][]byte{}}
	if err := json.Unmarshal(read("vectors.json"), &s.vectors); err != nil {
		t.Fatal(err)
	}
	for _, v := range s.vectors {
		s.files[v.File] = read(v.File)
		if s.models[v.Model] == nil && s.bundles[v.Model] == nil {
			const regen = "if the model format changed on purpose, run: go test ./format -run TestConformance -update"
			raw := read(v.Model)
			if wm.IsBundle(raw) {
				ms, err := wm.UnmarshalBundle(raw, 0)
				if err != nil {
					t.Fatalf("%s: %v (%s)", v.Model, err, regen)
				}
				s.bundles[v.Model] = ms
			} else {
				m, err := wm.UnmarshalModel(raw)
				if err != nil {
					t.Fatalf("%s: %v (%s)", v.Model, err, regen)
				}
				s.models[v.Model] = m
			}
		}
		if ms := s.bundles[v.Model]; ms != nil && (v.Member < 0 || v.Member >= len(ms)) {
			t.Fatalf("%s: member %d of a bundle of %d", v.File, v.Member, len(ms))
		}
		if s.inputs[v.Input] == nil {
			var in conformanceInput
			if err := json.Unmarshal(read(v.Input), &in); err != nil {
				t.Fatalf("%s: %v", v.Input, err)
			}
			s.inputs[v.Input] = &in
		}
	}
	return s
}

// writer returns the model vector v was written with: its model, or the
// member of its bundle that vectors.json names.
func (s *conformanceSet) writer(v *vector) *wm.Model {
	if ms := s.bundles[v.Model]; ms != nil {
		return ms[v.Member]
	}
	return s.models[v.Model]
}

// modelFor returns the model a decoder is given for vector v: none when the
// file embeds it; for a bundle, the member its header names (bundleMember).
func (s *conformanceSet) modelFor(v *vector) *wm.Model {
	switch {
	case v.Embed:
		return nil
	case s.bundles[v.Model] != nil:
		return bundleMember(s.bundles[v.Model], s.files[v.File])
	}
	return s.models[v.Model]
}

// TestConformance encodes the committed inputs with the committed models
// and compares with the committed files byte for byte, then decodes them
// every way and compares with the committed decode digests, the source
// (lossless) and an independent reconstruction (lossy).
func TestConformance(t *testing.T) {
	s := loadConformance(t)
	if len(s.vectors) != len(conformanceVectors) {
		t.Fatalf("vectors.json lists %d vectors, want %d", len(s.vectors), len(conformanceVectors))
	}
	for i := range s.vectors {
		v := &s.vectors[i]
		m, in := s.writer(v), s.inputs[v.Input]
		n := m.Geom.N()
		t.Run(v.File, func(t *testing.T) {
			want := s.files[v.File]
			sum := sha256.Sum256(want)
			if hex.EncodeToString(sum[:]) != v.SHA256 {
				t.Fatalf("%s does not match its SHA-256 in vectors.json", v.File)
			}
			if ms := s.bundles[v.Model]; ms != nil {
				// A vector of a bundle checks the choice of the member
				// only if the first is not the one.
				if v.Member == 0 || bundleMember(ms, want) != m {
					t.Fatalf("the header names member %d of %s, not %d (which must not be the first)", slices.Index(ms, bundleMember(ms, want)), v.Model, v.Member)
				}
			}
			opts := v.options()
			got := v.encode(t, m, in)
			if !bytes.Equal(got, want) {
				t.Fatalf("encoding %s gives %d bytes that differ from %s (%d bytes) at byte %d; "+
					"if the change is intended, run: go test ./format -run TestConformance -update",
					v.Input, len(got), v.File, len(want), firstDiff(got, want))
			}
			dec, err := decodeAllWays(want, s.modelFor(v), opts...)
			if err != nil {
				t.Fatal(err)
			}
			if d := decodeDigest(dec, n); d != v.DecodeSHA {
				t.Fatalf("decode digest %s, want %s", d, v.DecodeSHA)
			}
			levels := stateLevels(t, want, s.modelFor(v), opts...)
			if err := sameEpisodes(dec, reconstruct(m, in, v, v.rules(t, m, levels))); err != nil {
				t.Fatalf("decode differs from the writer's reconstruction: %v", err)
			}
			if !v.lossy() {
				if err := sameEpisodes(dec, in.episodes()); err != nil {
					t.Fatalf("lossless decode differs from the input: %v", err)
				}
			} else if v.Retained >= v.Coordinate || sameEpisodes(dec, in.episodes()) == nil {
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
// with it. The sweep is in full with WMZIP_LONG=1 (testkit.Long), a
// sample of it by default.
func TestConformanceCorruption(t *testing.T) {
	s := loadConformance(t)
	for i := range s.vectors {
		v := &s.vectors[i]
		switch v.File {
		case "lossless.wmz", "lossy.wmz", "levels.wmz", "flushed.wmz", "fast.wmz", "fast-lossy.wmz", "copy.wmz", "copy-lossy.wmz":
		default:
			continue // the others differ only in options
		}
		n := s.writer(v).Geom.N()
		t.Run(v.File, func(t *testing.T) {
			t.Parallel()
			b := bytes.Clone(s.files[v.File])
			opts := v.options()
			m := s.modelFor(v)
			// Every bit and every cut in a long run; else every 13th (all
			// eight bits of a byte in turn), or every 61st with -short.
			step, first := testkit.Stride(t.Name(), 13, 61)
			for i := first; i < 8*len(b); i += step {
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
			for cut := first; cut < len(b); cut += step {
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
		k := len(e.Actions)
		if i < len(got)-1 {
			k = len(w.Actions)
		}
		if k > len(w.Actions) || !bytes.Equal(e.Meta, w.Meta) {
			return fmt.Errorf("episode %d differs", i)
		}
		w.Actions, w.Codes = w.Actions[:k], w.Codes[:k*n]
		if err := sameEpisodes(normalize([]episode{e}), normalize([]episode{w})); err != nil {
			return fmt.Errorf("episode %d: %v", i, err)
		}
	}
	return nil
}

// TestConformanceModelBytes checks that the models built by
// conformance_build_test.go, written by SPEC.md's table, are what package
// wm's own serializer writes for them: re-serialized with one more
// (empty, last) section, the bytes differ only in the section count and
// the section appended.
func TestConformanceModelBytes(t *testing.T) {
	s := loadConformance(t)
	for name, m := range s.models {
		raw, _ := m.MarshalBinary()
		if le.Uint16(raw[4:]) == 1 {
			continue // wm writes versions 2 and 3 only
		}
		c, err := m.WithSection("~~~~", nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := c.MarshalBinary()
		if len(got) != len(raw)+8 || string(got[len(raw):]) != "~~~~\x00\x00\x00\x00" {
			t.Fatalf("%s: re-serialized to %d bytes, want %d", name, len(got), len(raw)+8)
		}
		var diff []int
		for i := range raw {
			if got[i] != raw[i] {
				diff = append(diff, i)
			}
		}
		if len(diff) == 0 || diff[len(diff)-1]-diff[0] > 3 {
			t.Fatalf("%s: re-serialized bytes differ at %v", name, diff)
		}
		// The section count, a u32 that grew by one, starts at the first
		// byte that differs.
		if at := diff[0]; le.Uint32(got[at:])-le.Uint32(raw[at:]) != 1 {
			t.Fatalf("%s: re-serialized bytes differ at %v", name, diff)
		}
	}
}

// TestConformanceBundles checks that each bundle of the vectors holds the
// committed model files conformanceBundles names, in order (SPEC.md 3.6),
// and loads as their models.
func TestConformanceBundles(t *testing.T) {
	s := loadConformance(t)
	read := func(n string) []byte {
		b, err := os.ReadFile(filepath.Join(conformanceDir, n))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, bd := range conformanceBundles {
		raw := read(bd.name)
		var ms []*wm.Model
		for _, n := range bd.members {
			m, err := wm.UnmarshalModel(read(n))
			if err != nil {
				t.Fatalf("%s: %v", n, err)
			}
			ms = append(ms, m)
		}
		want, err := wm.MarshalBundle(ms)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(raw, want) {
			t.Fatalf("%s is not the bundle of %v: run go test ./format -run TestConformance -update", bd.name, bd.members)
		}
		got := s.bundles[bd.name]
		if got == nil {
			t.Fatalf("no vector is written with %s", bd.name)
		}
		for i, m := range got {
			if m.ID() != ms[i].ID() {
				t.Fatalf("%s: member %d has ID %s, %s has %s", bd.name, i, m.ID(), bd.members[i], ms[i].ID())
			}
		}
	}
}
