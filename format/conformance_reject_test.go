package format

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/wmzip/wmzip/gate"
	"github.com/wmzip/wmzip/rans"
	"github.com/wmzip/wmzip/wm"
)

// Rejection vectors (SPEC.md, "Conformance vectors"): model files, GATE
// sections and .wmz files that a decoder MUST reject, each derived from a
// conformance vector by a change that passes every check before the one it
// targets (checksums recomputed, lengths and offsets kept consistent).
// testdata/conformance/reject.json lists them as patches of their base
// file, with the error the reference decoder reports.

// tinyBuild is the small model the rejection vectors start from: a
// second table, an offset law, class context statistics and a GATE
// section with distance tables and weights, so that every field is there
// to be damaged.
func tinyBuild() *wmmBuild {
	g := wm.Geometry{S: 2, M: 2, K: 4}
	rng := rand.New(rand.NewPCG(14, 8))
	b := &wmmBuild{version: 2, g: g, prec: 10}
	b.classStats(rng, [8]uint32{30, 6, 8, 10, 8, 8, 8, 12}, true)
	b.ctx = g.K + 1
	b.fall = randRows(rng, g.M*b.ctx, g.K, rowSkewed, rowTwoPeaks)
	b.ctx2 = g.K + 1
	b.e1, b.e2 = 200, 100
	b.fall2 = randRows(rng, g.M*b.ctx2, g.K, rowSkewed)
	b.subMix = 128
	b.cont = contLists(g.S, 2)
	b.off = offsetLaw(rng, g.S)
	pages := randPages(rng, g, 3)
	b.refFrom(walk(rng, g, pages, []int{3, 2}, 5))
	p := &gate.Params{Geom: g, Precision: b.prec, Axis: gate.AxisModal, BinShift: 7,
		BinErr: []uint32{30000, gate.NoEstimate, 20000, 10000, 5000}, CoordErr: []uint32{9000, 8000, 7000, 6000},
		Weights: []uint16{256, 300, 200, 256}, Dist: make([][]uint16, g.M)}
	for t := range p.Dist {
		p.Dist[t] = make([]uint16, g.K*g.K)
		for a := range g.K {
			for c := range g.K {
				if a != c {
					p.Dist[t][a*g.K+c] = uint16(1000 * (1 + a + c))
				}
			}
		}
	}
	data, err := p.MarshalBinary()
	if err != nil {
		panic(err)
	}
	b.secs = []wm.Section{{Tag: [4]byte{'G', 'A', 'T', 'E'}, Data: data}}
	return b
}

// buildTiny: the base of the rejection vectors.
func buildTiny() (conformanceInput, *wm.Model) {
	b := tinyBuild()
	rng := rand.New(rand.NewPCG(14, 9))
	eps := walk(rng, b.g, randPages(rng, b.g, 3), []int{5, 0, 3, 0}, 5)
	in := inputOf(b.g, b.prec, eps)
	for i := range in.Episodes {
		e := &in.Episodes[i]
		e.Levels = make([]int, len(e.Actions))
		for t := range e.Levels {
			e.Levels[t] = min(t%3, 1)
		}
	}
	return in, b.model()
}

// fileParts are the structures of a .wmz file, for rewriting.
type fileParts struct {
	hdr, model, levels []byte
	recs               [][]byte // episode and chunk records, in order
	x                  index    // the index's totals (its entries are rebuilt)
	index, trailer     []byte   // nil: rebuilt from the records
	after              []byte   // bytes after the trailer
}

// splitFile cuts a valid file into its parts.
func splitFile(b []byte) *fileParts {
	h, err := parseHeader(b[:HeaderSize])
	if err != nil {
		panic(err)
	}
	p := &fileParts{hdr: bytes.Clone(b[:HeaderSize])}
	p.model = bytes.Clone(b[HeaderSize : HeaderSize+h.ModelSize])
	start := h.BodyStart()
	if len(h.Levels) > 0 {
		p.levels = bytes.Clone(b[HeaderSize+h.ModelSize : start])
	}
	tr, err := parseTrailer(b[len(b)-TrailerSize:], int64(len(b)-TrailerSize))
	if err != nil {
		panic(err)
	}
	x, err := parseIndex(b[tr.indexOffset:len(b)-TrailerSize], tr.indexOffset, start, int64(h.KeyframeInterval))
	if err != nil {
		panic(err)
	}
	p.x = *x
	for _, e := range x.episodes {
		p.recs = append(p.recs, bytes.Clone(b[e.offset:e.offset+episodeHdrSize+e.metaLen+crcSize]))
		for _, c := range e.chunks {
			p.recs = append(p.recs, bytes.Clone(b[c.offset:c.offset+c.length]))
		}
	}
	return p
}

// join assembles the parts, recomputing what depends on them: the
// header's model size and checksum, the level table's and the records'
// checksums, a chunk record's stream length, the index and the trailer.
// fix = false keeps every checksum as it is.
func (p *fileParts) join(fix bool) []byte {
	hdr := bytes.Clone(p.hdr)
	if fix {
		le.PutUint32(hdr[48:], uint32(len(p.model)))
		le.PutUint32(hdr[60:], crc(hdr[:60]))
	}
	out := append(append(hdr, p.model...), p.levels...)
	if fix && len(p.levels) >= 4 {
		n := len(out) - 4
		le.PutUint32(out[n:], crc(out[HeaderSize+len(p.model):n]))
	}
	x := p.x
	x.episodes, x.chunks, x.states = nil, 0, 0
	for _, r := range p.recs {
		r = bytes.Clone(r)
		if fix && len(r) >= 8 {
			if r[0] == tagChunk && len(r) >= chunkHdrSize+crcSize {
				le.PutUint32(r[8:], uint32(len(r)-chunkHdrSize-crcSize))
			}
			le.PutUint32(r[len(r)-4:], crc(r[:len(r)-4]))
		}
		off := int64(len(out))
		switch r[0] {
		case tagEpisode:
			x.episodes = append(x.episodes, episodeRef{offset: off, metaLen: int64(le.Uint32(r[4:]))})
		case tagChunk:
			e := &x.episodes[len(x.episodes)-1]
			n := int64(le.Uint32(r[4:]))
			e.chunks = append(e.chunks, chunkRef{offset: off, length: int64(len(r)), states: n})
			e.states += n
			x.states += n
			x.chunks++
		}
		out = append(out, r...)
	}
	at := int64(len(out))
	idx := p.index
	if idx == nil {
		idx = x.marshal()
	}
	out = append(out, idx...)
	tr := p.trailer
	if tr == nil {
		t := trailer{indexOffset: at, indexLength: int64(len(idx)), indexCRC: crc(idx)}
		tr = t.marshal()
	}
	return append(append(out, tr...), p.after...)
}

// reindex sets the index bytes to those of the records with edit applied
// to the rebuilt index's bytes, its checksum and the trailer kept valid.
func (p *fileParts) reindex(edit func(idx []byte) []byte) {
	p.index = nil
	b := p.join(true)
	tr, _ := parseTrailer(b[len(b)-TrailerSize:], int64(len(b)-TrailerSize))
	p.index = edit(bytes.Clone(b[tr.indexOffset : len(b)-TrailerSize]))
}

// rejectVector is one entry of reject.json.
type rejectVector struct {
	Name  string `json:"name"`
	Check string `json:"check"` // "model", "gate" or "file"
	Base  string `json:"base"`  // the file the bytes derive from
	// Patches turn Base into the rejected bytes: each replaces Del bytes at
	// At (an offset in Base) by Hex; Prefixes instead says that every
	// proper prefix of Base is rejected.
	Patches  []rejectPatch `json:"patches,omitempty"`
	Prefixes bool          `json:"every_prefix,omitempty"`
	Model    string        `json:"model,omitempty"` // "file": the model given to the decoder ("" = embedded)
	Error    string        `json:"error"`           // the reference decoder's error class
}

type rejectPatch struct {
	At  int    `json:"at"`
	Del int    `json:"del"`
	Hex string `json:"hex"`
}

// patchesOf returns the patches that turn base into b: byte runs when the
// lengths agree, else one replacement between the common prefix and suffix.
func patchesOf(base, b []byte) []rejectPatch {
	p := 0
	for p < len(base) && p < len(b) && base[p] == b[p] {
		p++
	}
	s := 0
	for s < len(base)-p && s < len(b)-p && base[len(base)-1-s] == b[len(b)-1-s] {
		s++
	}
	if len(base) != len(b) {
		return []rejectPatch{{At: p, Del: len(base) - p - s, Hex: hex.EncodeToString(b[p : len(b)-s])}}
	}
	var out []rejectPatch
	for i := p; i < len(b)-s; {
		if base[i] == b[i] {
			i++
			continue
		}
		j := i
		for j < len(b)-s && (base[j] != b[j] || j+1 < len(b)-s && base[j+1] != b[j+1]) {
			j++
		}
		out = append(out, rejectPatch{At: i, Del: j - i, Hex: hex.EncodeToString(b[i:j])})
		i = j
	}
	return out
}

// apply returns base with the patches applied.
func applyPatches(base []byte, ps []rejectPatch) ([]byte, error) {
	out := bytes.Clone(base)
	for i := len(ps) - 1; i >= 0; i-- {
		p := ps[i]
		x, err := hex.DecodeString(p.Hex)
		if err != nil || p.At < 0 || p.Del < 0 || p.At+p.Del > len(out) || i > 0 && ps[i-1].At+ps[i-1].Del > p.At {
			return nil, errors.New("bad patch")
		}
		out = append(out[:p.At:p.At], append(x, out[p.At+p.Del:]...)...)
	}
	return out, nil
}

// errorClass names the class of a decoding error of the reference
// implementation.
func errorClass(err error) string {
	var ue *UnsupportedError
	switch {
	case err == nil:
		return "none"
	case errors.As(err, &ue), errors.Is(err, wm.ErrModelVersion):
		return "unsupported"
	case errors.Is(err, ErrChecksum):
		return "checksum"
	case errors.Is(err, ErrModelMismatch):
		return "model-mismatch"
	case errors.Is(err, ErrNoModel):
		return "no-model"
	case errors.Is(err, ErrTooLarge):
		return "too-large"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated"
	case errors.Is(err, ErrCorrupt), errors.Is(err, wm.ErrModelFormat), errors.Is(err, gate.ErrSection):
		return "invalid"
	}
	return "other: " + err.Error()
}

// rejectCase is a rejection vector as made: its bytes from a mutation.
type rejectCase struct {
	v    rejectVector
	make func() []byte // nil with Prefixes
}

// rejectCases builds the rejection vectors from the committed files.
func rejectCases(t *testing.T, s *conformanceSet) []rejectCase {
	read := func(n string) []byte {
		b, err := os.ReadFile(filepath.Join(conformanceDir, n))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var cs []rejectCase
	tb := tinyBuild()
	tinyModel := tb.bytes()
	if !bytes.Equal(tinyModel, read("model-tiny.wmm")) {
		t.Fatal("model-tiny.wmm is not tinyBuild's: run go test ./format -run TestConformance -update")
	}
	at := tb.at
	// Model files.
	model := func(name, errc string, edit func(b []byte) []byte) {
		cs = append(cs, rejectCase{rejectVector{Name: name, Check: "model", Base: "model-tiny.wmm", Error: errc},
			func() []byte { return edit(bytes.Clone(tinyModel)) }})
	}
	put16 := func(off int, v uint16) func([]byte) []byte {
		return func(b []byte) []byte { le.PutUint16(b[off:], v); return b }
	}
	put32 := func(off int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { le.PutUint32(b[off:], v); return b }
	}
	rebuilt := func(edit func(b *wmmBuild)) func([]byte) []byte {
		return func([]byte) []byte { c := tinyBuild(); edit(c); return c.bytes() }
	}
	for _, n := range []string{"model-tiny.wmm", "model-v1.wmm"} {
		cs = append(cs, rejectCase{v: rejectVector{Name: "every proper prefix of " + n, Check: "model", Base: n, Prefixes: true, Error: "invalid"}})
	}
	model("magic", "invalid", func(b []byte) []byte { b[0] = 'X'; return b })
	model("shorter than 24 bytes", "invalid", func(b []byte) []byte { return b[:20] })
	model("version 4", "unsupported", put16(at["version"], 4))
	model("version 0", "unsupported", put16(at["version"], 0))
	model("flags not zero", "invalid", put16(at["flags"], 1))
	model("reserved byte after P not zero", "invalid", func(b []byte) []byte { b[at["P"]+2] = 1; return b })
	model("S = 0", "invalid", put32(at["S"], 0))
	model("S = 4097", "invalid", put32(at["S"], 4097))
	model("M = 0", "invalid", put32(at["M"], 0))
	model("M = 4097", "invalid", put32(at["M"], 4097))
	model("S·M = 4096·32 > 65536", "invalid", func(b []byte) []byte { le.PutUint32(b[at["S"]:], 4096); le.PutUint32(b[at["M"]:], 32); return b })
	model("K = 1", "invalid", put32(at["K"], 1))
	model("K = 65537", "invalid", put32(at["K"], 65537))
	model("P = 9", "invalid", func(b []byte) []byte { b[at["P"]] = 9; return b })
	model("P = 17", "invalid", func(b []byte) []byte { b[at["P"]] = 17; return b })
	model("K = 2000 > 2^P at P = 10", "invalid", put32(at["K"], 2000))
	model("C = 2", "invalid", put32(at["C"], 2))
	model("a fallback row sums to 65537", "invalid", func(b []byte) []byte { b[at["fall"]]++; return b })
	model("C2 = 1", "invalid", put32(at["C2"], 1))
	model("e1 = 1025", "invalid", put16(at["e1"], 1025))
	model("e2 = 1025", "invalid", put16(at["e2"], 1025))
	model("a second-table row sums to 65535", "invalid", func(b []byte) []byte { b[at["fall2"]+4]--; return b })
	model("A = 257", "invalid", put16(at["A"], 257))
	model("a continuation list of 0 entries", "invalid", rebuilt(func(c *wmmBuild) { c.cont[1] = nil }))
	model("a continuation list of 9 entries", "invalid", rebuilt(func(c *wmmBuild) {
		for range 7 {
			c.cont[0] = append(c.cont[0], [2]uint16{0, 1})
		}
	}))
	model("a continuation to slot S", "invalid", put16(at["cont"]+1, 2))
	model("a continuation of probability 0", "invalid", put16(at["cont"]+3, 0))
	model("a continuation of probability 32769", "invalid", put16(at["cont"]+3, 32769))
	model("a continuation listed twice", "invalid", func(b []byte) []byte { copy(b[at["cont"]+5:], b[at["cont"]+1:at["cont"]+3]); return b })
	model("R = 16", "invalid", put32(at["R"], 16))
	model("an offset frequency of 65536", "invalid", put16(at["off"], 0xFFFF))
	model("an offset row sums to 65537", "invalid", func(b []byte) []byte { b[at["off"]]++; return b })
	model("class contexts 8", "invalid", put32(at["Pctx"], 8))
	model("T = 2^20 + 1", "invalid", put32(at["T"], 1<<20+1))
	model("a reference code of K", "invalid", func(b []byte) []byte { b[at["codes"]+1] = 4; return b })
	model("an action bucket of 16", "invalid", func(b []byte) []byte { b[at["buckets"]+1] = 16; return b })
	model("65 sections", "invalid", put32(at["sections"], 65))
	model("sections not in ascending tag order", "invalid", rebuilt(func(c *wmmBuild) {
		c.secs = append(c.secs, wm.Section{Tag: [4]byte{'A', 'A', 'A', 'A'}})
	}))
	model("two sections with one tag", "invalid", rebuilt(func(c *wmmBuild) { c.secs = append(c.secs, c.secs[0]) }))
	model("a byte after the last section", "invalid", func(b []byte) []byte { return append(b, 0) })
	model("reference states without episodes (E = 0)", "invalid", rebuilt(func(c *wmmBuild) { c.starts = nil }))
	model("the first reference episode starts at 1", "invalid", put32(at["starts"], 1))
	model("reference episode starts not ascending", "invalid", put32(at["starts"]+4, 0))
	model("a reference episode start at T", "invalid", func(b []byte) []byte { le.PutUint32(b[at["starts"]+4:], le.Uint32(b[at["T"]:])); return b })
	model("a class count of 2^30 + 1", "invalid", put32(24, 1<<30+1))
	model("a slot class count of 2^32 − 1", "invalid", rebuilt(func(c *wmmBuild) { c.hitsS[3] = 1<<32 - 1 }))
	model("a stored fallback frequency of 0xFFFF", "invalid", put16(at["fall"], 0xFFFF))
	model("reference episodes without reference states (T = 0)", "invalid", rebuilt(func(c *wmmBuild) {
		c.codes, c.buckets, c.starts = nil, nil, []uint32{0}
	}))
	model("an offset law with one slot (S = 1)", "invalid", rebuilt(func(c *wmmBuild) {
		c.g.S = 1
		c.hitsS = c.hitsS[:8]
		c.cont = [][][2]uint16{{{0, 1}}}
		c.off = make([]uint16, 256)
	}))

	// Version 3 (model.wmm, trained): the fallback fields and the coded
	// reference store.
	v3 := read("model.wmm")
	if le.Uint16(v3[4:]) != 3 {
		t.Fatal("model.wmm is not a version-3 model file: run go test ./format -run TestConformance -update")
	}
	cs = append(cs, rejectCase{v: rejectVector{Name: "every proper prefix of model.wmm", Check: "model", Base: "model.wmm", Prefixes: true, Error: "invalid"}})
	model3 := func(name string, edit func(b []byte) []byte) {
		cs = append(cs, rejectCase{rejectVector{Name: "version 3: " + name, Check: "model", Base: "model.wmm", Error: "invalid"},
			func() []byte { return edit(bytes.Clone(v3)) }})
	}
	f3 := 600 + 32*int(le.Uint32(v3[8:])) // C1
	p3 := func(off int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { le.PutUint32(b[off:], v); return b }
	}
	model3("C1 = 2", p3(f3, 2))
	model3("C2 = 1", p3(f3+4, 1))
	model3("e1 = 1025", func(b []byte) []byte { le.PutUint16(b[f3+8:], 1025); return b })
	model3("β1 = 2^24 + 1", p3(f3+12, 1<<24+1))
	model3("β2 > 0 without a second table", p3(f3+16, 1))
	model3("C1·K·M above 2^26", func(b []byte) []byte {
		// K = 40,000 at P = 16 with C1 = K+1.
		b[20] = 16
		le.PutUint32(b[16:], 40000)
		le.PutUint32(b[f3:], 40001)
		return b
	})
	// The store's offset and length: model.wmm has no section, so the
	// store ends 4 bytes before the file (at its section count).
	storeAt := func(b []byte) (int, int) {
		end := len(b) - 4
		for o := f3 + 20; o+4 <= end; o++ {
			if l := int(le.Uint32(b[o:])); o+4+l == end && l > 8 {
				return o, l
			}
		}
		t.Fatal("model.wmm: no store found")
		return 0, 0
	}
	model3("a store of 0 bytes", func(b []byte) []byte {
		at, l := storeAt(b)
		le.PutUint32(b[at:], 0)
		return append(b[:at+4], b[at+4+l:]...)
	})
	model3("a store of 3 bytes, too short for its lane state, with no reference states", func(b []byte) []byte {
		at, l := storeAt(b)
		le.PutUint32(b[at:], 3)
		le.PutUint32(b[at-4:], 0)
		return append(b[:at+4+3], b[at+4+l:]...)
	})
	model3("a store one byte longer", func(b []byte) []byte {
		at, l := storeAt(b)
		le.PutUint32(b[at:], uint32(l+1))
		return append(b[:at+4+l], append([]byte{0}, b[at+4+l:]...)...)
	})
	model3("a store's lane state below 2^24", func(b []byte) []byte { at, _ := storeAt(b); b[at+7] = 0; return b })
	model3("a store's first byte changed", func(b []byte) []byte { at, _ := storeAt(b); b[at+8] ^= 0x80; return b })
	model3("a store without its last 16 bytes", func(b []byte) []byte {
		at, l := storeAt(b)
		le.PutUint32(b[at:], uint32(l-16))
		return append(b[:at+4+l-16], b[at+4+l:]...)
	})
	// An empty store whose stream codes only the tables (3.4), written
	// here from the text: the offset law and the class context counts of
	// model.wmm, then mutations of them.
	tables := func(edit func(off, ctx []uint32), zf func(tab, i int, z uint64) uint64) func([]byte) []byte {
		return func(b []byte) []byte {
			at, l := storeAt(b)
			S := int(le.Uint32(b[8:]))
			e := 1
			for le.Uint32(b[at-8-4*e:]) != uint32(e) {
				e++
			}
			m, err := wm.UnmarshalModel(v3)
			if err != nil {
				t.Fatal(err)
			}
			canon, _ := m.CanonicalBinary()
			// In the canonical file the two tables lie just before the
			// reference episodes: OffRows·S u16, CtxRows, S·72 u32.
			cs := len(canon) - 4 - (len(b) - 4 - (at + 4 + l))              // section count offset
			cs -= int(le.Uint32(b[at-4:])) * (1 + S*int(le.Uint32(b[12:]))) // REF and BKT (K ≤ 256)
			cs -= 8 + 4*e                                                   // RefEpisodes, starts, RefStates
			ctx := make([]uint32, S*72)
			for i := range ctx {
				ctx[i] = le.Uint32(canon[cs-4*len(ctx)+4*i:])
			}
			off := make([]uint32, 256*S)
			o := cs - 4*len(ctx) - 4 - 2*len(off)
			for i := range off {
				off[i] = uint32(le.Uint16(canon[o+2*i:]))
			}
			edit(off, ctx)
			st := tableStream(t, off, S, ctx, 8, zf)
			out := append([]byte(nil), b[:at-8-4*e]...)
			out = le.AppendUint32(out, 0) // RefEpisodes
			out = le.AppendUint32(out, 0) // RefStates
			out = le.AppendUint32(out, uint32(len(st)))
			out = append(out, st...)
			return append(out, b[at+4+l:]...)
		}
	}
	same := func(off, ctx []uint32) {}
	asIs := func(tab, i int, z uint64) uint64 { return z }
	if _, err := wm.UnmarshalModel(tables(same, asIs)(bytes.Clone(v3))); err != nil {
		t.Fatalf("model.wmm with an empty store and its tables does not load: %v", err)
	}
	var off0 uint64
	model3("a table value of 34 bits", tables(same, func(tab, i int, z uint64) uint64 {
		if tab == 0 && i == 0 {
			return 1 << 33
		}
		return z
	}))
	model3("a table value below 0", tables(func(off, ctx []uint32) { off0 = uint64(off[0]) }, func(tab, i int, z uint64) uint64 {
		if tab == 0 && i == 1 {
			return 2*(off0+1) - 1 // a difference of −(off[0] + 1)
		}
		return z
	}))
	model3("an offset frequency of 65536", tables(func(off, ctx []uint32) { off[0] = 65535 }, asIs))
	model3("an offset row summing to 65537", tables(func(off, ctx []uint32) { off[0]++ }, asIs))
	model3("a store cut to its first 32 bytes (ending among the tiles)", func(b []byte) []byte {
		at, l := storeAt(b)
		le.PutUint32(b[at:], 32)
		return append(b[:at+4+32], b[at+4+l:]...)
	})
	model3("more reference states than the store codes", func(b []byte) []byte {
		at, _ := storeAt(b)
		le.PutUint32(b[at-4:], le.Uint32(b[at-4:])+1)
		return b
	})
	model3("2^20 reference states in a short store", func(b []byte) []byte { at, _ := storeAt(b); le.PutUint32(b[at-4:], 1<<20); return b })

	// GATE sections: the model loads, a lossy file cannot use it.
	gateSec := tb.secs[0].Data
	gateCase := func(name string, edit func(d []byte) []byte) {
		cs = append(cs, rejectCase{rejectVector{Name: name, Check: "gate", Base: "model-tiny.wmm", Error: "invalid"},
			func() []byte { c := tinyBuild(); c.secs[0].Data = edit(bytes.Clone(gateSec)); return c.bytes() }})
	}
	g16 := func(off int, v uint16) func([]byte) []byte {
		return func(d []byte) []byte { le.PutUint16(d[off:], v); return d }
	}
	g32 := func(off int, v uint32) func([]byte) []byte {
		return func(d []byte) []byte { le.PutUint32(d[off:], v); return d }
	}
	nb := int(le.Uint32(gateSec[20:]))
	n := tb.g.N()
	wOff := 44 + 4*nb + 4*n // weights
	tOff := wOff + 2*n      // number of distance tables
	gateCase("GATE: 43 bytes", func(d []byte) []byte { return d[:43] })
	gateCase("GATE: version 3", g16(0, 3))
	gateCase("GATE: version 0", g16(0, 0))
	gateCase("GATE: reserved flag bit 2", g16(2, 7))
	gateCase("GATE: reserved byte 19", func(d []byte) []byte { d[19] = 1; return d })
	gateCase("GATE: version 1 with axis 1", func(d []byte) []byte { d[0] = 1; return d })
	gateCase("GATE: version 2 with axis 0", func(d []byte) []byte { d[18] = 0; return d })
	gateCase("GATE: version 2 with axis 2", func(d []byte) []byte { d[18] = 2; return d })
	gateCase("GATE: N is not the model's S·M", g32(4, uint32(n+1)))
	gateCase("GATE: M is not the model's", g32(8, 1))
	gateCase("GATE: K is not the model's", g32(12, 5))
	gateCase("GATE: P is not the model's", func(d []byte) []byte { d[17] = 11; return d })
	gateCase("GATE: BinShift 17", func(d []byte) []byte { d[16] = 17; return d })
	gateCase("GATE: B = 0", g32(20, 0))
	gateCase("GATE: B = 4097", g32(20, 4097))
	gateCase("GATE: cut inside CoordErr", func(d []byte) []byte { return d[:44+4*nb+2] })
	gateCase("GATE: cut before the weights", func(d []byte) []byte { return d[:wOff] })
	gateCase("GATE: cut before the number of distance tables", func(d []byte) []byte { return d[:tOff] })
	gateCase("GATE: 3 distance tables (not M or N)", g32(tOff, 3))
	gateCase("GATE: distance tables one entry short", func(d []byte) []byte { return d[:len(d)-2] })
	gateCase("GATE: a byte after the distance tables", func(d []byte) []byte { return append(d, 0) })
	gateCase("GATE: a byte after CoordErr (no tables, no weights)", func(d []byte) []byte {
		d[2] = 0
		return append(d[:wOff:wOff], 0)
	})
	gateCase("GATE: a bin error rate of 2^24 + 1", g32(44, 1<<24+1))
	gateCase("GATE: a coordinate error rate of 2^24 + 1", g32(44+4*nb, 1<<24+1))
	gateCase("GATE: a coordinate error rate of 0xFFFFFFFF", g32(44+4*nb+4, gate.NoEstimate))
	gateCase("GATE: a non-zero distance of a code to itself", g16(tOff+4+2*5, 1))

	// Streams damaged at every chunk of two files, checksums recomputed:
	// the last byte dropped, or a byte in the middle changed. The
	// reference's error (a stream check or the reconstruction checksum)
	// is recorded.
	for _, base := range []string{"tiny.wmz", "caps.wmz"} {
		b := read(base)
		p := splitFile(b)
		for i, r := range p.recs {
			if r[0] != tagChunk {
				continue
			}
			for _, kind := range []string{"its last byte dropped", "a byte in the middle changed"} {
				q := splitFile(b)
				r := q.recs[i]
				B := len(r) - chunkHdrSize - crcSize
				if kind == "its last byte dropped" {
					q.recs[i] = append(r[:len(r)-5:len(r)-5], 0, 0, 0, 0)
				} else {
					r[chunkHdrSize+B/2] ^= 0x10
				}
				bad := q.join(true)
				mname := map[string]string{"tiny.wmz": "model-tiny.wmm", "caps.wmz": "model-caps.wmm"}[base]
				_, err := readAll(bad, s.models[mname])
				cs = append(cs, rejectCase{rejectVector{Name: base + ": record " + strconv.Itoa(i) + ", the stream with " + kind, Check: "file", Base: base,
					Model: mname, Error: errorClass(err)},
					func() []byte { return bad }})
			}
		}
	}

	// Files.
	tiny, lossy := read("tiny.wmz"), read("tiny-lossy.wmz")
	file := func(name, base, model, errc string, _ bool, edit func(p *fileParts) []byte) {
		b := map[string][]byte{"tiny.wmz": tiny, "tiny-lossy.wmz": lossy}[base]
		cs = append(cs, rejectCase{rejectVector{Name: name, Check: "file", Base: base, Model: model, Error: errc},
			func() []byte { return edit(splitFile(b)) }})
	}
	// hdr edits the header of the joined file and fixes its checksum.
	hdr := func(edit func(h []byte)) func(p *fileParts) []byte {
		return func(p *fileParts) []byte {
			b := p.join(true)
			edit(b)
			le.PutUint32(b[60:], crc(b[:60]))
			return b
		}
	}
	// idx edits the index (entries rebuilt first) and keeps its checksum.
	idx := func(edit func(x []byte)) func(p *fileParts) []byte {
		return func(p *fileParts) []byte {
			p.reindex(func(x []byte) []byte { edit(x); return x })
			return p.join(true)
		}
	}
	// rec edits record i (its checksum and stream length fixed).
	rec := func(i int, edit func(r []byte) []byte) func(p *fileParts) []byte {
		return func(p *fileParts) []byte {
			p.recs[i] = edit(p.recs[i])
			return p.join(true)
		}
	}
	const tm = "model-tiny.wmm"
	embed := func(p *fileParts, model []byte) {
		p.model = model
		le.PutUint16(p.hdr[10:], 1)
		sum := sha256.Sum256(model)
		copy(p.hdr[32:48], sum[:16])
	}
	cs = append(cs, rejectCase{v: rejectVector{Name: "every proper prefix of tiny.wmz", Check: "file", Base: "tiny.wmz", Model: tm, Prefixes: true, Error: "truncated"}})
	file("magic", "tiny.wmz", tm, "invalid", false, func(p *fileParts) []byte { b := p.join(true); b[1] = 'X'; return b })
	file("version 2", "tiny.wmz", tm, "unsupported", false, hdr(func(h []byte) { le.PutUint16(h[8:], 2) }))
	file("version 4, header checksum not updated", "tiny.wmz", tm, "unsupported", false, func(p *fileParts) []byte {
		b := p.join(true)
		le.PutUint16(b[8:], 4)
		return b
	})
	file("header checksum", "tiny.wmz", tm, "checksum", false, func(p *fileParts) []byte { b := p.join(true); b[60] ^= 1; return b })
	file("reserved flag bit 1", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { h[10] |= 2 }))
	file("reserved byte 23", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { h[23] = 1 }))
	file("reserved bytes 52..59", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { h[59] = 1 }))
	file("S = M = 4096 (N > 65536)", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { le.PutUint16(h[12:], 4095); le.PutUint16(h[14:], 4095) }))
	file("P = 9", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { h[20] = 9 }))
	file("P = 17", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { h[20] = 17 }))
	file("K = 1", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { le.PutUint32(h[16:], 1) }))
	file("K = 65537", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { le.PutUint32(h[16:], 65537) }))
	file("K = 2000 > 2^P", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { le.PutUint32(h[16:], 2000) }))
	file("L = 0", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { h[21] = 0 }))
	file("L = 33", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { h[21] = 33 }))
	file("Q = 1", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { h[22] = 1 }))
	file("Q = 17", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { h[22] = 17 }))
	file("G = 0", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { le.PutUint32(h[24:], 0) }))
	file("G = 65537", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { le.PutUint32(h[24:], 65537) }))
	file("G·N > 2^24", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { le.PutUint32(h[24:], 1<<24/4+1) }))
	file("model flag without a model (ModelSize 0)", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { h[10] = 1 }))
	file("ModelSize 2^30 + 1", "tiny.wmz", tm, "invalid", false, hdr(func(h []byte) { h[10] = 1; le.PutUint32(h[48:], 1<<30+1) }))
	file("a model without the flag", "tiny.wmz", tm, "invalid", false, func(p *fileParts) []byte {
		embed(p, tinyModel)
		le.PutUint16(p.hdr[10:], 0)
		return p.join(true)
	})
	file("given another model", "tiny.wmz", "model-mix.wmm", "model-mismatch", false, func(p *fileParts) []byte { return p.join(true) })
	file("no model given, none embedded", "tiny.wmz", "", "no-model", false, func(p *fileParts) []byte { return p.join(true) })
	file("model ID of another model", "tiny.wmz", tm, "model-mismatch", false, hdr(func(h []byte) { h[32] ^= 1 }))
	file("embedded model does not hash to the model ID", "tiny.wmz", "", "checksum", false, func(p *fileParts) []byte {
		embed(p, tinyModel)
		p.model = bytes.Clone(p.model)
		p.model[len(p.model)-1] ^= 1
		return p.join(true)
	})
	file("embedded model invalid (reserved flags), with its ID", "tiny.wmz", "", "invalid", false, func(p *fileParts) []byte {
		m := bytes.Clone(tinyModel)
		m[6] = 1
		embed(p, m)
		return p.join(true)
	})
	file("header S differs from the model's", "tiny.wmz", tm, "model-mismatch", false, hdr(func(h []byte) { le.PutUint16(h[12:], 2) }))
	file("header K differs from the model's", "tiny.wmz", tm, "model-mismatch", false, hdr(func(h []byte) { le.PutUint32(h[16:], 5) }))
	file("header P differs from the model's", "tiny.wmz", tm, "model-mismatch", false, hdr(func(h []byte) { h[20] = 11 }))
	file("finite λ, model without GATE", "tiny-lossy.wmz", "", "unsupported", false, func(p *fileParts) []byte {
		c := tinyBuild()
		c.secs = nil
		embed(p, c.bytes())
		return p.join(true)
	})
	file("finite λ, model with a malformed GATE (version 3)", "tiny-lossy.wmz", "", "model-mismatch", false, func(p *fileParts) []byte {
		c := tinyBuild()
		le.PutUint16(c.secs[0].Data, 3)
		embed(p, c.bytes())
		return p.join(true)
	})
	file("level table checksum", "tiny-lossy.wmz", tm, "checksum", false, func(p *fileParts) []byte {
		b := p.join(true)
		b[HeaderSize+4] ^= 1
		return b
	})
	file("level λs not increasing", "tiny-lossy.wmz", tm, "invalid", false, func(p *fileParts) []byte {
		le.PutUint32(p.levels[0:], le.Uint32(p.levels[4:]))
		return p.join(true)
	})
	file("last level λ differs from the header's", "tiny-lossy.wmz", tm, "invalid", false, func(p *fileParts) []byte {
		le.PutUint32(p.levels[4:], le.Uint32(p.levels[4:])-1)
		return p.join(true)
	})
	file("first record a chunk", "tiny.wmz", tm, "invalid", false, func(p *fileParts) []byte {
		b := p.join(true)
		// The index still lists the episode; sequential decoding meets the
		// chunk first.
		i := HeaderSize
		b[i] = tagChunk
		return b
	})
	file("unknown record tag", "tiny.wmz", tm, "invalid", false, rec(1, func(r []byte) []byte { r[0] = 'Z'; return r }))
	file("episode record reserved byte", "tiny.wmz", tm, "invalid", false, rec(0, func(r []byte) []byte { r[2] = 1; return r }))
	file("episode MetaLen 2^20 + 1", "tiny.wmz", tm, "invalid", false, func(p *fileParts) []byte {
		b := p.join(true)
		le.PutUint32(b[HeaderSize+4:], 1<<20+1)
		return b
	})
	file("metadata not JSON", "tiny.wmz", tm, "invalid", false, rec(0, func(r []byte) []byte { r[8] = '!'; return r }))
	file("episode record checksum", "tiny.wmz", tm, "checksum", false, func(p *fileParts) []byte {
		b := p.join(true)
		b[HeaderSize+8] ^= 1
		return b
	})
	file("chunk record reserved byte", "tiny.wmz", tm, "invalid", false, rec(1, func(r []byte) []byte { r[3] = 1; return r }))
	file("chunk of 0 states", "tiny.wmz", tm, "invalid", false, rec(1, func(r []byte) []byte { le.PutUint32(r[4:], 0); return r }))
	file("chunk of G + 1 states", "tiny.wmz", tm, "invalid", false, rec(1, func(r []byte) []byte { le.PutUint32(r[4:], 3); return r }))
	file("chunk of one state more than its stream holds", "tiny.wmz", tm, "invalid", false, rec(3, func(r []byte) []byte { le.PutUint32(r[4:], 2); return r }))
	file("chunk stream of 2^28 + 1 bytes declared", "tiny.wmz", tm, "invalid", false, func(p *fileParts) []byte {
		b := p.join(true)
		o := HeaderSize + len(p.recs[0])
		le.PutUint32(b[o+8:], 1<<28+1)
		return b
	})
	file("chunk record checksum", "tiny.wmz", tm, "checksum", false, func(p *fileParts) []byte {
		b := p.join(true)
		b[HeaderSize+len(p.recs[0])+16] ^= 1
		return b
	})
	file("reconstruction checksum", "tiny.wmz", tm, "checksum", false, rec(1, func(r []byte) []byte { r[12] ^= 1; return r }))
	file("stream shorter than 4L bytes", "tiny.wmz", tm, "invalid", false, rec(1, func(r []byte) []byte {
		return append(r[:chunkHdrSize+7:chunkHdrSize+7], 0, 0, 0, 0)
	}))
	file("stream lane state below 2^24", "tiny.wmz", tm, "invalid", false, rec(1, func(r []byte) []byte { r[chunkHdrSize+3] = 0; return r }))
	file("stream with a byte left over", "tiny.wmz", tm, "invalid", false, rec(1, func(r []byte) []byte {
		return append(r[:len(r)-4:len(r)-4], 0x55, 0, 0, 0, 0)
	}))
	file("stream one byte short", "tiny.wmz", tm, "invalid", false, rec(1, func(r []byte) []byte {
		return append(r[:len(r)-5:len(r)-5], 0, 0, 0, 0)
	}))
	file("stream lane state changed", "tiny.wmz", tm, "invalid", false, rec(1, func(r []byte) []byte { r[chunkHdrSize+4] ^= 1; return r }))
	file("trailer magic", "tiny.wmz", tm, "invalid", false, func(p *fileParts) []byte { b := p.join(true); b[len(b)-1] = 0; return b })
	file("trailer checksum", "tiny.wmz", tm, "checksum", false, func(p *fileParts) []byte { b := p.join(true); b[len(b)-8] ^= 1; return b })
	trailerEdit := func(edit func(t []byte)) func(p *fileParts) []byte {
		return func(p *fileParts) []byte {
			b := p.join(true)
			t := b[len(b)-TrailerSize:]
			edit(t)
			le.PutUint32(t[20:], crc(t[:20]))
			return b
		}
	}
	file("IndexOffset + IndexLength ≠ size − 28", "tiny.wmz", tm, "invalid", false, trailerEdit(func(t []byte) { le.PutUint64(t[8:], le.Uint64(t[8:])-1) }))
	file("IndexLength 47", "tiny.wmz", tm, "invalid", false, trailerEdit(func(t []byte) {
		o := le.Uint64(t[0:]) + le.Uint64(t[8:]) - 47
		le.PutUint64(t[0:], o)
		le.PutUint64(t[8:], 47)
	}))
	file("IndexOffset below BodyStart", "tiny.wmz", tm, "invalid", false, trailerEdit(func(t []byte) {
		end := le.Uint64(t[0:]) + le.Uint64(t[8:])
		le.PutUint64(t[0:], 10)
		le.PutUint64(t[8:], end-10)
	}))
	file("index checksum", "tiny.wmz", tm, "checksum", false, trailerEdit(func(t []byte) { t[16] ^= 1 }))
	file("index tag", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) { x[0] = 'Y' }))
	file("index reserved byte", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) { x[1] = 1 }))
	file("index E = 2^24 + 1", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) { le.PutUint32(x[4:], 1<<24+1) }))
	file("index T = 2^48 + 1", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) { le.PutUint64(x[8:], 1<<48+1) }))
	file("index T ≠ Σ T_e", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) { le.PutUint64(x[8:], le.Uint64(x[8:])+1) }))
	file("index C ≠ Σ C_e (length ≠ 48 + 24E + 16C)", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) { le.PutUint64(x[16:], le.Uint64(x[16:])+1) }))
	file("index ideal code bits", "tiny.wmz", tm, "invalid", true, idx(func(x []byte) { x[24] ^= 1 }))
	file("index ideal action bits", "tiny.wmz", tm, "invalid", true, idx(func(x []byte) { x[32] ^= 1 }))
	file("index retained coordinates", "tiny.wmz", tm, "invalid", true, idx(func(x []byte) { x[40] ^= 1 }))
	file("index episode offset", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) { x[48] ^= 1 }))
	file("index episode T_e one more than its chunks hold", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) {
		le.PutUint64(x[56:], 6)
		le.PutUint64(x[8:], le.Uint64(x[8:])+1)
	}))
	file("index: an empty last episode's metadata runs into the index", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) {
		le.PutUint32(x[len(x)-4:], 1000)
	}))
	file("index episode C_e > T_e", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) {
		// episode 1 has no states: one chunk entry taken from episode 0
		le.PutUint32(x[48+24+3*16+16:], 1)
		le.PutUint32(x[48+16:], 2)
	}))
	file("index episode C_e < ⌈T_e/G⌉", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) {
		le.PutUint32(x[48+16:], 2)
		le.PutUint32(x[48+24+2*16+16:], 1)
	}))
	file("index episode MetaLen", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) { le.PutUint32(x[48+20:], 1<<20+1) }))
	file("index chunk offset", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) { x[48+24] ^= 1 }))
	file("index chunk length 19", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) { le.PutUint32(x[48+24+8:], 19) }))
	file("index chunk length beyond the index", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) { le.PutUint32(x[48+24+8:], 1<<20) }))
	file("index chunk of 0 states", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) { le.PutUint32(x[48+24+12:], 0) }))
	file("index chunk of G + 1 states", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) { le.PutUint32(x[48+24+12:], 3) }))
	file("index chunks of an episode sum to T_e − 1", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) {
		le.PutUint32(x[48+24+2*16+12:], 0)
		le.PutUint32(x[48+24+1*16+12:], 1)
	}))
	file("index records end before the index", "tiny.wmz", tm, "invalid", false, idx(func(x []byte) {
		// the last chunk entry one byte shorter
		o := len(x) - 16
		le.PutUint32(x[o+8:], le.Uint32(x[o+8:])-1)
	}))
	file("a byte after the trailer", "tiny.wmz", tm, "invalid", false, func(p *fileParts) []byte { p.after = []byte{0}; return p.join(true) })
	return cs
}

// TestConformanceReject decodes every rejection vector of reject.json:
// each must be rejected with its error (and by random access too, unless
// only sequential decoding can see the damage).
func TestConformanceReject(t *testing.T) {
	s := loadConformance(t)
	path := filepath.Join(conformanceDir, "reject.json")
	files := map[string][]byte{}
	base := func(n string) []byte {
		if files[n] == nil {
			b, err := os.ReadFile(filepath.Join(conformanceDir, n))
			if err != nil {
				t.Fatal(err)
			}
			files[n] = b
		}
		return files[n]
	}
	if *update {
		var vs []rejectVector
		for _, c := range rejectCases(t, s) {
			v := c.v
			if c.make != nil {
				v.Patches = patchesOf(base(v.Base), c.make())
			}
			vs = append(vs, v)
		}
		b, err := json.MarshalIndent(vs, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	js, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var vs []rejectVector
	if err := json.Unmarshal(js, &vs); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			b := base(v.Base)
			inputs := [][]byte{}
			if v.Prefixes {
				for i := range len(b) {
					inputs = append(inputs, b[:i])
				}
			} else {
				p, err := applyPatches(b, v.Patches)
				if err != nil {
					t.Fatal(err)
				}
				inputs = append(inputs, p)
			}
			for _, in := range inputs {
				if err := rejects(t, v, in); err != nil {
					t.Fatalf("%d bytes: %v", len(in), err)
				}
			}
		})
	}
}

// rejects checks that b is rejected as v says.
func rejects(t *testing.T, v rejectVector, b []byte) error {
	switch v.Check {
	case "model", "gate":
		m, err := wm.UnmarshalModel(b)
		if v.Check == "gate" {
			if err != nil {
				return err
			}
			_, err = gate.FromModel(m)
		}
		if c := errorClass(err); c != v.Error {
			return errors.New("error " + c + ", want " + v.Error)
		}
		return nil
	}
	var m *wm.Model
	if v.Model != "" {
		raw, err := os.ReadFile(filepath.Join(conformanceDir, v.Model))
		if err != nil {
			t.Fatal(err)
		}
		if m, err = wm.UnmarshalModel(raw); err != nil {
			t.Fatal(err)
		}
	}
	for _, threads := range []int{1, 3} {
		_, err := readAll(b, m, WithThreads(threads))
		if c := errorClass(err); c != v.Error {
			return fmt.Errorf("sequential decoding on %d goroutines: error %s, want %s", threads, c, v.Error)
		}
	}
	// Skipping every episode checks them all the same.
	r, err := NewReader(bytes.NewReader(b), m)
	for err == nil {
		_, err = r.NextEpisode()
	}
	if err == io.EOF || !isFileError(err) {
		return errors.New("sequential decoding skipping episodes: " + errorClass(err))
	}
	f, err := Open(bytes.NewReader(b), int64(len(b)), m)
	if err == nil {
		if err = f.Verify(); err == nil {
			_, err = fileEpisodes(f)
		}
	}
	if err == nil {
		return errors.New("random access accepts it")
	}
	if !isFileError(err) {
		return errors.New("random access: " + err.Error())
	}
	return nil
}

// errAfter is a reader of b that fails with errBoom after k bytes.
type errAfter struct {
	b []byte
	k int
}

var errBoom = errors.New("boom")

func (r *errAfter) Read(p []byte) (int, error) {
	if r.k <= 0 {
		return 0, errBoom
	}
	n := copy(p[:min(len(p), r.k)], r.b)
	r.b, r.k = r.b[n:], r.k-n
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// TestConformanceReader decodes every vector with a Reader the ways a
// caller may drive it: the header alone, each state's level, whole
// episodes skipped, the summary at the end, a memory limit, a source that
// fails, and recovery from every cut of the small files.
func TestConformanceReader(t *testing.T) {
	s := loadConformance(t)
	for i := range s.vectors {
		v := &s.vectors[i]
		b, in, m := s.files[v.File], s.inputs[v.Input], s.modelFor(v)
		t.Run(v.File, func(t *testing.T) {
			h, err := ReadHeader(bytes.NewReader(b))
			if err != nil || h.Lanes != v.Lanes || h.KeyframeInterval != v.Keyframe || h.Lambda != v.Lambda && len(v.Levels) == 0 {
				t.Fatalf("ReadHeader: %+v, %v", h, err)
			}
			if _, err := ReadHeader(bytes.NewReader(b[:HeaderSize-1])); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("ReadHeader of 63 bytes: %v", err)
			}
			if _, err := ReadHeader(&errAfter{b, 10}); !errors.Is(err, errBoom) {
				t.Fatalf("ReadHeader of a failing source: %v", err)
			}
			r, err := NewReader(bytes.NewReader(b), m)
			if err != nil {
				t.Fatal(err)
			}
			if r.Header().ModelID != s.models[v.Model].ID() || r.Model().ID() != s.models[v.Model].ID() || r.Level() != 0 {
				t.Fatal("Reader's header, model or first level")
			}
			for e := 0; ; e++ {
				if _, err := r.NextEpisode(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				for st := 0; ; st++ {
					if _, _, err := r.ReadState(nil); err == io.EOF {
						break
					} else if err != nil {
						t.Fatal(err)
					}
					if len(v.Levels) > 0 && r.Level() != in.Episodes[e].Levels[st] {
						t.Fatalf("episode %d state %d: level %d, want %d", e, st, r.Level(), in.Episodes[e].Levels[st])
					}
				}
			}
			if _, err := r.NextEpisode(); err != io.EOF {
				t.Fatalf("NextEpisode after the end: %v", err)
			}
			if _, _, err := r.ReadState(nil); err != io.EOF {
				t.Fatalf("ReadState after the end: %v", err)
			}
			if info, ok := r.Info(); !ok || info.States != int64(v.States) || info.Retained != uint64(v.Retained) || info.FileBytes != int64(len(b)) {
				t.Fatalf("Info %+v, %v", info, ok)
			}
			// Episodes skipped whole, or after their first state, are still
			// checked to the end.
			for _, first := range []bool{false, true} {
				r, err := NewReader(bytes.NewReader(b), m)
				if err != nil {
					t.Fatal(err)
				}
				for {
					if _, err := r.NextEpisode(); err == io.EOF {
						break
					} else if err != nil {
						t.Fatal(err)
					}
					if first {
						if _, _, err := r.ReadState(nil); err != nil && err != io.EOF {
							t.Fatal(err)
						}
					}
				}
				if _, ok := r.Info(); !ok {
					t.Fatal("skipping episodes: no Info at the end")
				}
			}
		})
	}
	for _, name := range []string{"tiny.wmz", "tiny-lossy.wmz", "k2.wmz"} {
		v := s.vector(name)
		b, m := s.files[name], s.modelFor(v)
		want, err := readAll(b, m)
		if err != nil {
			t.Fatal(err)
		}
		n := s.models[v.Model].Geom.N()
		t.Run(name+"/limits", func(t *testing.T) {
			// Every memory limit below what the file needs fails as too large.
			if _, err := NewReader(bytes.NewReader(b), m, WithMaxMemory(0)); err == nil {
				t.Fatal("a memory limit of 0 accepted")
			}
			step := int64(8)
			if name == "k2.wmz" {
				step = 64 // a long chunk: its stream is what the limit meets
			}
			for lim := int64(1); ; lim += step {
				_, err := readAll(b, m, WithMaxMemory(lim))
				if err == nil {
					break
				}
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("limit %d: %v", lim, err)
				}
			}
			if name == "k2.wmz" {
				return
			}
			// A source that fails: its error, whatever the byte.
			for k := range len(b) + 1 {
				r, err := NewReader(&errAfter{b, k}, m)
				for err == nil {
					if _, err = r.NextEpisode(); err == nil {
						for err == nil {
							_, _, err = r.ReadState(nil)
						}
						if err == io.EOF {
							err = nil
						}
					}
				}
				if !errors.Is(err, errBoom) {
					t.Fatalf("source failing after %d bytes: %v", k, err)
				}
				if r != nil {
					if _, err := r.NextEpisode(); !errors.Is(err, errBoom) {
						t.Fatalf("error not sticky: %v", err)
					}
					if _, _, err := r.ReadState(nil); !errors.Is(err, errBoom) {
						t.Fatalf("error not sticky: %v", err)
					}
				}
			}

			// Recovery from every cut: a prefix of the decode, also when
			// episodes are skipped.
			for cut := range len(b) {
				r, err := NewReader(bytes.NewReader(b[:cut]), m, WithRecovery(true))
				for err == nil {
					_, err = r.NextEpisode()
				}
				if err != io.EOF && (int64(cut) >= bodyStartOf(b) || !errors.Is(err, io.ErrUnexpectedEOF)) {
					t.Fatalf("cut at %d, skipping episodes: %v", cut, err)
				}
				got, err := readAll(b[:cut], m, WithRecovery(true))
				if err != nil {
					if errors.Is(err, io.ErrUnexpectedEOF) && int64(cut) < bodyStartOf(b) {
						continue // header, model or level table incomplete
					}
					t.Fatalf("cut at %d: %v", cut, err)
				}
				if err := isPrefix(got, want, n); err != nil {
					t.Fatalf("cut at %d: %v", cut, err)
				}
			}

			// Recovery past damage: a flipped byte in any record leaves
			// the episodes before it, the damaged episode's chunks before
			// it and every episode after it, each a prefix of its own.
			f, err := Open(bytes.NewReader(b), int64(len(b)), m)
			if err != nil {
				t.Fatal(err)
			}
			// Bytes of every record: its tag, a reserved byte, the top byte
			// of its length, its body and its checksum; and, past each,
			// cuts at the later records' starts and headers.
			var at, ends []int64
			for _, ep := range f.idx.episodes {
				at = append(at, ep.offset, ep.offset+1, ep.offset+7, ep.offset+9)
				ends = append(ends, ep.offset, ep.offset+6)
				for _, c := range ep.chunks {
					at = append(at, c.offset, c.offset+1, c.offset+4, c.offset+11, c.offset+17, c.offset+c.length-1)
					ends = append(ends, c.offset, c.offset+10, c.offset+c.length-2)
				}
			}
			ends = append(ends, int64(len(b)))
			for _, off := range at {
				for _, end := range ends {
					if end <= off || off >= int64(len(b)) {
						continue
					}
					recovered(t, b[:end], m, want, n, fmt.Sprintf("byte %d flipped, cut at %d", off, end), off)
				}
				// Two damaged records, and a source failing past the damage.
				for _, off2 := range at {
					if off2 <= off || off2 >= int64(len(b)) {
						continue
					}
					recovered(t, b, m, want, n, fmt.Sprintf("bytes %d and %d flipped", off, off2), off, off2)
				}
				for _, end := range ends {
					if end <= off || off >= int64(len(b)) {
						continue
					}
					d := bytes.Clone(b)
					d[off] ^= 0x40
					r, err := NewReader(&errAfter{d, int(end)}, m, WithRecovery(true))
					for err == nil {
						if _, err = r.NextEpisode(); err == nil {
							for err == nil {
								_, _, err = r.ReadState(nil)
							}
							if err == io.EOF {
								err = nil
							}
						}
					}
					if err != io.EOF && !errors.Is(err, errBoom) {
						t.Fatalf("byte %d flipped, source failing after %d bytes: %v", off, end, err)
					}
					if r != nil {
						if _, err := r.NextEpisode(); err != io.EOF && !errors.Is(err, errBoom) {
							t.Fatalf("after the end: %v", err)
						}
					}
				}
			}
		})
	}
}

// isSubPrefix reports whether every episode of got is a prefix of one of
// recovered flips the bytes at the offsets of a copy of b, reads it with
// recovery and fails unless it succeeds and every episode it returns is a
// prefix of one of want's, in order (isSubPrefix).
func recovered(t *testing.T, b []byte, m *wm.Model, want []episode, n int, what string, flips ...int64) {
	t.Helper()
	d := bytes.Clone(b)
	for _, off := range flips {
		d[off] ^= 0x40
	}
	got, err := readAll(d, m, WithRecovery(true))
	if err == nil {
		err = isSubPrefix(got, want, n)
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// want, in order (episodes may be left out).
func isSubPrefix(got, want []episode, n int) error {
	k := 0
	for i, e := range got {
		for ; k < len(want); k++ {
			if isPrefix([]episode{e}, want[k:k+1], n) == nil {
				break
			}
		}
		if k == len(want) {
			return fmt.Errorf("episode %d of %d is a prefix of no episode left", i, len(got))
		}
		k++
	}
	return nil
}

// bodyStartOf returns the offset of the first record of a valid file.
func bodyStartOf(b []byte) int64 {
	h, err := parseHeader(b[:HeaderSize])
	if err != nil {
		panic(err)
	}
	return h.BodyStart()
}

// vector returns the vector of the given file.
func (s *conformanceSet) vector(file string) *vector {
	for i := range s.vectors {
		if s.vectors[i].File == file {
			return &s.vectors[i]
		}
	}
	panic("no vector " + file)
}

// tableStream codes, as SPEC.md 3.4 says, the values of two tables in rows
// of k1 and k2 into a stream of one lane at P = 16, for an empty store; zf
// may replace the zigzag difference coded for a value.
func tableStream(t *testing.T, off []uint32, k1 int, ctx []uint32, k2 int, zf func(tab, i int, z uint64) uint64) []byte {
	e, err := rans.NewEncoder(1, 16)
	if err != nil {
		t.Fatal(err)
	}
	var pr [2][64]uint32
	for i := range pr {
		for j := range pr[i] {
			pr[i][j] = 32768
		}
	}
	bit := func(p *uint32, b int) {
		if b == 0 {
			e.Put(0, 0, *p)
			*p += (65536 - *p) >> 4
		} else {
			e.Put(0, *p, 65536-*p)
			*p -= *p >> 4
		}
	}
	for tab, vals := range [][]uint32{off, ctx} {
		k := []int{k1, k2}[tab]
		for i, v := range vals {
			d := int64(v)
			if i%k > 0 {
				d -= int64(vals[i-1])
			}
			z := uint64(2 * d)
			if d < 0 {
				z = uint64(-2*d - 1)
			}
			z = zf(tab, i, z)
			l := bits.Len64(z)
			node := 1
			for j := 5; j >= 0; j-- {
				b := l >> j & 1
				bit(&pr[tab][node], b)
				node = node<<1 | b
			}
			for j := l - 2; j >= 0; j-- {
				e.Put(0, uint32(z>>j&1)<<15, 1<<15)
			}
		}
	}
	out, err := e.Finish(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
