package format

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/rans"
	"github.com/wmzip/wmzip/internal/wm"
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

// metaEdges are metadata that SPEC.md 6.5 makes valid though a strict
// reader might refuse them.
var metaEdges = []string{
	`{"a":1,"a":2}`,
	`["\ud800","x\udc00","\udc00\ud800"]`,
	`[1e999,-0,-0.0e-0,0.5E-400,123456789012345678901234567890]`,
	" \t\r\n" + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n",
	`{"s":"café ~\u007f` + "\x7f" + `"}`,
}

// buildMeta: episodes whose metadata are metaEdges, with the tiny model.
func buildMeta() (conformanceInput, *wm.Model) {
	b := tinyBuild()
	rng := rand.New(rand.NewPCG(14, 10))
	eps := walk(rng, b.g, randPages(rng, b.g, 2), []int{2, 0, 1, 3, 1}, 5)
	for i := range eps {
		eps[i].Meta = []byte(metaEdges[i])
	}
	return inputOf(b.g, b.prec, eps), b.model()
}

// fileParts are the structures of a .wmz file, for rewriting.
type fileParts struct {
	hdr, model, levels []byte
	recs               [][]byte // episode and chunk records, in order
	x                  index    // the index's totals (its entries are rebuilt)
	index, trailer     []byte   // nil: rebuilt from the records
	after              []byte   // bytes after the trailer
	version            int      // the container version of the index
}

// splitFile cuts a valid file into its parts.
func splitFile(b []byte) *fileParts {
	h, err := parseHeader(b[:HeaderSize])
	if err != nil {
		panic(err)
	}
	p := &fileParts{hdr: bytes.Clone(b[:HeaderSize]), version: h.Version}
	p.model = bytes.Clone(b[HeaderSize : HeaderSize+h.ModelSize])
	start := h.BodyStart()
	if len(h.Levels) > 0 {
		p.levels = bytes.Clone(b[HeaderSize+h.ModelSize : start])
	}
	tr, err := parseTrailer(b[len(b)-TrailerSize:], int64(len(b)-TrailerSize))
	if err != nil {
		panic(err)
	}
	x, err := parseIndex(b[tr.indexOffset:len(b)-TrailerSize], tr.indexOffset, start, &h)
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
		idx = x.marshal(p.version)
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

// bundleParts are the fields of a bundle (SPEC.md 3.6), for rewriting.
type bundleParts struct {
	version, flags uint16
	n              uint32     // the member count written
	lens           []uint64   // the lengths written (nil: the members')
	ids            [][16]byte // the IDs listed, one a member (a member without one: its own)
	members        [][]byte
	gap            []byte // bytes between the last member and the CRC
}

// splitBundle cuts a valid bundle into its fields.
func splitBundle(b []byte) *bundleParts {
	p := &bundleParts{version: le.Uint16(b[4:]), flags: le.Uint16(b[6:]), n: le.Uint32(b[8:])}
	off := 12 + 24*int(p.n)
	for i := range int(p.n) {
		l := int(le.Uint64(b[12+24*i:]))
		p.ids = append(p.ids, [16]byte(b[12+24*i+8:12+24*i+24]))
		p.members = append(p.members, bytes.Clone(b[off:off+l]))
		off += l
	}
	return p
}

// lengths returns the members' lengths.
func (p *bundleParts) lengths() []uint64 {
	var ls []uint64
	for _, m := range p.members {
		ls = append(ls, uint64(len(m)))
	}
	return ls
}

// join assembles the fields, the CRC recomputed.
func (p *bundleParts) join() []byte {
	out := []byte("WMZB")
	out = le.AppendUint16(out, p.version)
	out = le.AppendUint16(out, p.flags)
	out = le.AppendUint32(out, p.n)
	ls := p.lens
	if ls == nil {
		ls = p.lengths()
	}
	for i, l := range ls {
		out = le.AppendUint64(out, l)
		var id [16]byte
		if i < len(p.ids) {
			id = p.ids[i]
		} else if i < len(p.members) {
			if m, err := wm.UnmarshalModel(p.members[i]); err == nil {
				id = m.ID()
			}
		}
		out = append(out, id[:]...)
	}
	for _, m := range p.members {
		out = append(out, m...)
	}
	out = append(out, p.gap...)
	return le.AppendUint32(out, crc(out))
}

// rejectVector is one entry of reject.json.
type rejectVector struct {
	Name    string `json:"name"`    // the rule the bytes break, in SPEC.md's terms
	Check   string `json:"check"`   // "model" (a model file or a bundle), "gate" or "file"
	Section string `json:"section"` // the section of SPEC.md that states the rule
	Base    string `json:"base"`    // the file the bytes derive from
	// Patches turn Base into the rejected bytes: each replaces Del bytes at
	// At (an offset in Base) by Hex (none: Base as it is); Prefixes instead
	// says that every proper prefix of Base is rejected.
	Patches  []rejectPatch `json:"patches,omitempty"`
	Prefixes bool          `json:"every_prefix,omitempty"`
	Model    string        `json:"model,omitempty"` // "file": the model given to the decoder ("" = embedded)
	Error    string        `json:"error"`           // the reference decoder's error class
	// Expect is a fragment of the reference decoder's error at the rule:
	// loading the model, or decoding the file sequentially. ExpectRandom
	// is the fragment random access gives, where it meets the damage at
	// another check ("": Expect; not checked for Prefixes).
	Expect       string `json:"expect"`
	ExpectRandom string `json:"expect_random,omitempty"`
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

// rejectCases builds the rejection vectors from the committed files. Each
// breaks one rule, named by its name and section, and keeps every other
// (checksums recomputed, lengths and offsets kept consistent); where the
// rule cannot break alone (a count larger than the bytes after it, a
// damaged stream), the named one is the first a decoder meets reading the
// fields in order. expect is a fragment of the reference decoder's error
// at that rule, written here rather than recorded, so that a decoder that
// starts rejecting the vector elsewhere fails TestConformanceReject.
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

	// Model files (3.1), from the version-2 model-tiny.wmm.
	modelErr := func(name, sec, errc, expect string, edit func(b []byte) []byte) {
		cs = append(cs, rejectCase{rejectVector{Name: name, Check: "model", Section: sec, Base: "model-tiny.wmm", Error: errc, Expect: expect},
			func() []byte { return edit(bytes.Clone(tinyModel)) }})
	}
	model := func(name, expect string, edit func(b []byte) []byte) { modelErr(name, "3.1", "invalid", expect, edit) }
	put16 := func(off int, v uint16) func([]byte) []byte {
		return func(b []byte) []byte { le.PutUint16(b[off:], v); return b }
	}
	put32 := func(off int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { le.PutUint32(b[off:], v); return b }
	}
	rebuilt := func(edit func(b *wmmBuild)) func([]byte) []byte {
		return func([]byte) []byte { c := tinyBuild(); edit(c); return c.bytes() }
	}
	for _, n := range []string{"model-tiny.wmm", "model-v1.wmm", "model-tiny-fast.wmm", "model-tiny-copy.wmm"} {
		cs = append(cs, rejectCase{v: rejectVector{Name: "every proper prefix of " + n, Check: "model", Section: "3.1", Base: n, Prefixes: true,
			Error: "invalid", Expect: "truncated"}})
	}
	model("magic", "bad magic", func(b []byte) []byte { b[0] = 'X'; return b })
	model("shorter than the 24 bytes of the header", "shorter than the 24 of the header", func(b []byte) []byte { return b[:20] })
	modelErr("version 5", "3.1", "unsupported", "unsupported model file version 5", put16(at["version"], 5))
	modelErr("version 4 without the level flag", "3.1", "invalid", "flags 0x0 invalid in version 4", put16(at["version"], 4))
	// Version 4 (a level other than the default's) from
	// model-tiny-fast.wmm, model-tiny.wmm's fields under flags 0x1.
	fastModel := read("model-tiny-fast.wmm")
	if le.Uint16(fastModel[4:]) != 4 || !bytes.Equal(fastModel[8:], tinyModel[8:]) {
		t.Fatal("model-tiny-fast.wmm is not model-tiny.wmm at the fast level: run go test ./format -run TestConformance -update")
	}
	fastErr := func(name, expect string, flags uint16) {
		cs = append(cs, rejectCase{rejectVector{Name: name, Check: "model", Section: "3.1", Base: "model-tiny-fast.wmm", Error: "invalid", Expect: expect},
			func() []byte { b := bytes.Clone(fastModel); le.PutUint16(b[6:], flags); return b }})
	}
	fastErr("version 4 with both level flags (fast and copy)", "flags 0x5 invalid in version 4", 0x5)
	fastErr("version 4 with reserved flag bit 3", "flags 0x9 invalid in version 4", 0x9)
	copyModel := read("model-tiny-copy.wmm")
	if le.Uint16(copyModel[4:]) != 4 || le.Uint16(copyModel[6:]) != 4 || !bytes.Equal(copyModel[8:], tinyModel[8:]) {
		t.Fatal("model-tiny-copy.wmm is not model-tiny.wmm at the copy level: run go test ./format -run TestConformance -update")
	}
	cs = append(cs, rejectCase{rejectVector{Name: "version 4 of the copy level with reserved flag bit 3", Check: "model", Section: "3.1", Base: "model-tiny-copy.wmm", Error: "invalid", Expect: "flags 0xc invalid in version 4"},
		func() []byte { b := bytes.Clone(copyModel); le.PutUint16(b[6:], 0xc); return b }})
	fastErr("version 4 with flag bit 15", "flags 0x8001 invalid in version 4", 0x8001)
	fastErr("version 4 with the layout flag (version 3) on fields of version 2", "second fallback contexts 1540769564", 0x3)
	modelErr("version 0", "3.1", "unsupported", "unsupported model file version 0", put16(at["version"], 0))
	model("flags not zero", "reserved flags 0x1 set", put16(at["flags"], 1))
	model("reserved byte after P not zero", "reserved bytes set", func(b []byte) []byte { b[at["P"]+2] = 1; return b })
	model("S = 0", "slots 0 out of range", put32(at["S"], 0))
	model("S = 4097", "slots 4097 out of range", put32(at["S"], 4097))
	model("M = 0", "subspaces 0 out of range", put32(at["M"], 0))
	model("M = 4097", "subspaces 4097 out of range", put32(at["M"], 4097))
	model("S·M = 4096·32 > 65536", "131072 coordinates exceed the limit 65536", func(b []byte) []byte {
		le.PutUint32(b[at["S"]:], 4096)
		le.PutUint32(b[at["M"]:], 32)
		return b
	})
	model("K = 1", "alphabet 1 out of range", put32(at["K"], 1))
	model("K = 65537", "alphabet 65537 out of range", put32(at["K"], 65537))
	model("P = 9", "precision 9 invalid", func(b []byte) []byte { b[at["P"]] = 9; return b })
	model("P = 17", "precision 17 invalid", func(b []byte) []byte { b[at["P"]] = 17; return b })
	model("K = 2000 > 2^P at P = 10", "precision 10 invalid for K=2000", put32(at["K"], 2000))
	model("C1 = 2", "fallback contexts 2", put32(at["C"], 2))
	model("a row of FB1 sums to 65537", "first fallback table: row 0 does not sum to 65536", func(b []byte) []byte { b[at["fall"]]++; return b })
	model("C2 = 1", "second fallback contexts 1", put32(at["C2"], 1))
	model("e1 = 1025", "fallback exponents 1025, 100 above 1024", put16(at["e1"], 1025))
	model("e2 = 1025", "fallback exponents 200, 1025 above 1024", put16(at["e2"], 1025))
	model("a row of FB2 sums to 65535", "second fallback table: row 0 does not sum to 65536", func(b []byte) []byte { b[at["fall2"]+4]--; return b })
	model("A = 257", "substitution mix 257 above 256", put16(at["A"], 257))
	model("a continuation list of 0 entries", "0 continuations of slot 1", rebuilt(func(c *wmmBuild) { c.cont[1] = nil }))
	model("a continuation list of 9 entries", "9 continuations of slot 0", rebuilt(func(c *wmmBuild) {
		for range 7 {
			c.cont[0] = append(c.cont[0], [2]uint16{0, 1})
		}
	}))
	model("a continuation to slot S", "continuation (2, 16384) of slot 0", put16(at["cont"]+1, 2))
	model("a continuation of probability 0", "continuation (1, 0) of slot 0", put16(at["cont"]+3, 0))
	model("a continuation of probability 32769", "continuation (1, 32769) of slot 0", put16(at["cont"]+3, 32769))
	model("a continuation listed twice", "slot 0 continues to 1 twice", func(b []byte) []byte {
		copy(b[at["cont"]+5:], b[at["cont"]+1:at["cont"]+3])
		return b
	})
	model("OffRows = 16", "16 offset rows", put32(at["R"], 16))
	model("an offset frequency of 65536 (stored 0xFFFF)", "offset frequency 65536", put16(at["off"], 0xFFFF))
	model("an offset row sums to 65537", "offset row does not sum to 65536", func(b []byte) []byte { b[at["off"]]++; return b })
	model("CtxRows = 8", "8 class contexts", put32(at["Pctx"], 8))
	model("RefStates = 2^20 + 1", "1048577 reference states exceed the limit", put32(at["T"], 1<<20+1))
	model("a reference code of K", "reference code 4 >= K", func(b []byte) []byte { b[at["codes"]+1] = 4; return b })
	model("an action bucket of 16", "action bucket 16 >= 16", func(b []byte) []byte { b[at["buckets"]+1] = 16; return b })
	model("Sections = 65", "65 sections exceed the limit 64", put32(at["sections"], 65))
	model("sections not in ascending tag order", "sections not in ascending tag order", rebuilt(func(c *wmmBuild) {
		c.secs = append(c.secs, wm.Section{Tag: [4]byte{'A', 'A', 'A', 'A'}})
	}))
	model("two sections with one tag (tags not strictly ascending)", "sections not in ascending tag order", rebuilt(func(c *wmmBuild) { c.secs = append(c.secs, c.secs[0]) }))
	model("a byte after the last section", "1 trailing bytes", func(b []byte) []byte { return append(b, 0) })
	model("RefStates > 0 with RefEpisodes = 0", "reference states without reference episodes", rebuilt(func(c *wmmBuild) { c.starts = nil }))
	model("the first reference episode starts at 1", "the first reference episode starts at 1, not 0", put32(at["starts"], 1))
	model("reference episode starts not ascending", "reference episode starts not ascending", put32(at["starts"]+4, 0))
	model("a reference episode start at RefStates", "not below the", func(b []byte) []byte {
		le.PutUint32(b[at["starts"]+4:], le.Uint32(b[at["T"]:]))
		return b
	})
	model("a class count of hits of 2^30 + 1", "class count 1073741825 of hits above 2^30", put32(24, 1<<30+1))
	model("a class count of hitsS of 2^32 − 1", "class count 4294967295 of hitsS above 2^30", rebuilt(func(c *wmmBuild) { c.hitsS[3] = 1<<32 - 1 }))
	model("a stored fallback frequency of 0xFFFF", "first fallback table: frequency 65536 (stored 0xFFFF)", put16(at["fall"], 0xFFFF))
	model("RefEpisodes = 1 with RefStates = 0", "1 reference episodes without reference states", rebuilt(func(c *wmmBuild) {
		c.codes, c.buckets, c.starts = nil, nil, []uint32{0}
	}))
	model("an offset law with one slot (S = 1)", "offset law with one slot", rebuilt(func(c *wmmBuild) {
		c.g.S = 1
		c.hitsS = c.hitsS[:8]
		c.cont = [][][2]uint16{{{0, 1}}}
		c.off = make([]uint16, 256)
	}))

	// Version 3 (model.wmm, trained): the fallback fields (3.1) and the
	// coded reference store (3.4).
	v3 := read("model.wmm")
	if le.Uint16(v3[4:]) != 3 {
		t.Fatal("model.wmm is not a version-3 model file: run go test ./format -run TestConformance -update")
	}
	cs = append(cs, rejectCase{v: rejectVector{Name: "every proper prefix of model.wmm", Check: "model", Section: "3.1", Base: "model.wmm", Prefixes: true,
		Error: "invalid", Expect: "truncated"}})
	model3 := func(name, sec, expect string, edit func(b []byte) []byte) {
		cs = append(cs, rejectCase{rejectVector{Name: "version 3: " + name, Check: "model", Section: sec, Base: "model.wmm", Error: "invalid", Expect: expect},
			func() []byte { return edit(bytes.Clone(v3)) }})
	}
	f3 := 600 + 32*int(le.Uint32(v3[8:])) // C1
	p3 := func(off int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { le.PutUint32(b[off:], v); return b }
	}
	model3("C1 = 2", "3.1", "fallback contexts 2", p3(f3, 2))
	model3("C2 = 1", "3.1", "second fallback contexts 1", p3(f3+4, 1))
	model3("e1 = 1025", "3.1", "fallback exponents 1025, 0 above 1024", func(b []byte) []byte { le.PutUint16(b[f3+8:], 1025); return b })
	model3("β1 = 2^24 + 1", "3.1", "fallback smoothing 16777217, 0 above 2^24", p3(f3+12, 1<<24+1))
	model3("β2 > 0 with C2 = 0", "3.1", "smoothing 1 of an absent second fallback table", p3(f3+16, 1))
	model3("M·(C1 + C2)·K above 2^16 + 64·FileLen", "3.1", "fallback tables of 6400160000 entries in a file of 1619 bytes", func(b []byte) []byte {
		// K = 40,000 at P = 16 with C1 = K+1.
		b[20] = 16
		le.PutUint32(b[16:], 40000)
		le.PutUint32(b[f3:], 40001)
		return b
	})
	// The store's offset and length: model.wmm (and model-mix3.wmm) have
	// no section, so the store ends 4 bytes before the file, at its
	// section count.
	storeAt := func(b []byte) (int, int) {
		end := len(b) - 4
		for o := f3 + 20; o+4 <= end; o++ {
			if l := int(le.Uint32(b[o:])); o+4+l == end && l > 8 {
				return o, l
			}
		}
		t.Fatal("no store found")
		return 0, 0
	}
	// episodesAt returns the offset of RefEpisodes, before the starts and
	// RefStates that precede the store at at.
	episodesAt := func(b []byte, at int) int {
		e := 1
		for le.Uint32(b[at-8-4*e:]) != uint32(e) {
			e++
		}
		return at - 8 - 4*e
	}
	// withStore replaces the reference store by st: no episodes, no
	// states, only the tables' values (or a damaged stream).
	withStore := func(b, st []byte) []byte {
		at, l := storeAt(b)
		out := append([]byte(nil), b[:episodesAt(b, at)]...)
		out = le.AppendUint32(out, 0) // RefEpisodes
		out = le.AppendUint32(out, 0) // RefStates
		out = le.AppendUint32(out, uint32(len(st)))
		out = append(out, st...)
		return append(out, b[at+4+l:]...)
	}
	model3("StoreBytes = 0 (RefStates·N + OffRows·S + CtxRows·S·8 above 1024·StoreBytes)", "3.1",
		"1392 reference codes and table values in a store of 0 bytes", func(b []byte) []byte {
			at, l := storeAt(b)
			le.PutUint32(b[at:], 0)
			return append(b[:at+4], b[at+4+l:]...)
		})
	model3("a store of 3 bytes, too short for its lane state (no reference episodes or states)", "2.5",
		"3 bytes, need 4 for 1 lane states", func(b []byte) []byte {
			at, _ := storeAt(b)
			return withStore(b, b[at+4:at+7])
		})
	model3("a store one byte longer: a byte left over", "2.5", "1 bytes left at end of stream", func(b []byte) []byte {
		at, l := storeAt(b)
		le.PutUint32(b[at:], uint32(l+1))
		return append(b[:at+4+l], append([]byte{0}, b[at+4+l:]...)...)
	})
	model3("a store's lane state below 2^24", "2.5", "lane 0 state 0x583da0 below 2^24", func(b []byte) []byte { at, _ := storeAt(b); b[at+7] = 0; return b })
	model3("a store's first byte changed: a copy's source at δ ≥ S", "3.4", "slot delta 3 at state 4 slot 1", func(b []byte) []byte {
		at, _ := storeAt(b)
		b[at+8] ^= 0x80
		return b
	})
	model3("a store without its last 16 bytes: a byte past its end needed", "2.5", "class contexts: rans: corrupt stream: lane 0 needs a byte past the end of the stream", func(b []byte) []byte {
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
			e := int(le.Uint32(b[episodesAt(b, at):]))
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
			return withStore(b, tableStream(t, off, S, ctx, 8, zf))
		}
	}
	same := func(off, ctx []uint32) {}
	asIs := func(tab, i int, z uint64) uint64 { return z }
	if _, err := wm.UnmarshalModel(tables(same, asIs)(bytes.Clone(v3))); err != nil {
		t.Fatalf("model.wmm with an empty store and its tables does not load: %v", err)
	}
	var off0 uint64
	model3("a table value of 34 bits", "3.4", "offset law: value of 34 bits", tables(same, func(tab, i int, z uint64) uint64 {
		if tab == 0 && i == 0 {
			return 1 << 33
		}
		return z
	}))
	model3("a table value below 0", "3.4", "offset law: value -1 outside [0, 2^32)", tables(func(off, ctx []uint32) { off0 = uint64(off[0]) }, func(tab, i int, z uint64) uint64 {
		if tab == 0 && i == 1 {
			return 2*(off0+1) - 1 // a difference of −(off[0] + 1)
		}
		return z
	}))
	model3("an offset frequency of 65536 (stored 0xFFFF)", "3.1", "offset frequency 65536", tables(func(off, ctx []uint32) { off[0] = 65535 }, asIs))
	model3("an offset row summing to 65537", "3.1", "offset row does not sum to 65536", tables(func(off, ctx []uint32) { off[0]++ }, asIs))
	model3("a store cut to its first 32 bytes: a byte past its end needed among the tiles", "2.5",
		"reference store: rans: corrupt stream: lane 0 needs a byte past the end of the stream", func(b []byte) []byte {
			at, l := storeAt(b)
			le.PutUint32(b[at:], 32)
			return append(b[:at+4+32], b[at+4+l:]...)
		})
	model3("RefStates = 2^20 in a short store (above 1024·StoreBytes)", "3.1", "12583896 reference codes and table values in a store of 842 bytes", func(b []byte) []byte {
		at, _ := storeAt(b)
		le.PutUint32(b[at-4:], 1<<20)
		return b
	})
	// model-mix3.wmm has neither offset law nor class contexts: its store
	// stream ends with its last tile, and a state more needs a byte past
	// the end of the stream at once.
	mix3 := read("model-mix3.wmm")
	cs = append(cs, rejectCase{rejectVector{Name: "version 3: one reference state more than the store codes: a byte past its end needed",
		Check: "model", Section: "2.5", Base: "model-mix3.wmm", Error: "invalid", Expect: "reference store: rans: corrupt stream: lane 0 needs a byte past the end of the stream"},
		func() []byte {
			b := bytes.Clone(mix3)
			at, _ := storeAt(b)
			le.PutUint32(b[at-4:], le.Uint32(b[at-4:])+1)
			return b
		}})

	// GATE sections (5.1): the model loads, a lossy file cannot use it.
	gateSec := tb.secs[0].Data
	gateCase := func(name, expect string, edit func(d []byte) []byte) {
		cs = append(cs, rejectCase{rejectVector{Name: "GATE: " + name, Check: "gate", Section: "5.1", Base: "model-tiny.wmm", Error: "invalid", Expect: expect},
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
	gateCase("43 bytes", "43 bytes", func(d []byte) []byte { return d[:43] })
	gateCase("version 3", "version 3", g16(0, 3))
	gateCase("version 0", "version 0", g16(0, 0))
	gateCase("reserved flag bit 3", "reserved flag bits 0x8 set", g16(2, 0xb))
	gateCase("reserved flag bit 15", "reserved flag bits 0x8000 set", g16(2, 0x8003))
	gateCase("reserved byte 19", "reserved byte 19 not zero", func(d []byte) []byte { d[19] = 1; return d })
	gateCase("version 1 with Axis 1", "version 1 with bin axis 1", func(d []byte) []byte { d[0] = 1; return d })
	gateCase("version 2 with Axis 0", "version 2 with bin axis 0", func(d []byte) []byte { d[18] = 0; return d })
	gateCase("version 2 with Axis 2", "version 2 with bin axis 2", func(d []byte) []byte { d[18] = 2; return d })
	gateCase("N is not the model's S·M", "geometry N=5 M=2 K=4 differs from the model's", g32(4, uint32(n+1)))
	gateCase("M is not the model's", "geometry N=4 M=1 K=4 differs from the model's", g32(8, 1))
	gateCase("K is not the model's", "geometry N=4 M=2 K=5 differs from the model's", g32(12, 5))
	gateCase("P is not the model's", "precision 11 differs from the model's 10", func(d []byte) []byte { d[17] = 11; return d })
	gateCase("BinShift 17", "bin shift 17", func(d []byte) []byte { d[16] = 17; return d })
	gateCase("Bins = 0", "0 error-rate bins", g32(20, 0))
	gateCase("Bins = 4097", "4097 error-rate bins", g32(20, 4097))
	gateCase("cut inside BinErr", "the section ends inside BinErr", func(d []byte) []byte { return d[:44+2] })
	gateCase("cut inside CoordErr", "the section ends inside CoordErr", func(d []byte) []byte { return d[:44+4*nb+2] })
	gateCase("cut before Weights (flag bit 1 set)", "the section ends inside Weights", func(d []byte) []byte { return d[:wOff] })
	gateCase("cut before Tables (flag bit 0 set)", "the section ends before Tables", func(d []byte) []byte { return d[:tOff] })
	gateCase("Tables = 3 (not M or N)", "Tables 3, not M or N", g32(tOff, 3))
	gateCase("Dist one entry short", "the section ends inside Dist", func(d []byte) []byte { return d[:len(d)-2] })
	gateCase("a byte after Dist", "1 bytes after Dist", func(d []byte) []byte { return append(d, 0) })
	gateCase("a byte after CoordErr (no tables, no weights)", "1 bytes after the last field", func(d []byte) []byte {
		d[2] = 0
		return append(d[:wOff:wOff], 0)
	})
	gateCase("a BinErr of 2^24 + 1", "bin error rate 0x1000001", g32(44, 1<<24+1))
	gateCase("a CoordErr of 2^24 + 1", "coordinate error rate 0x1000001", g32(44+4*nb, 1<<24+1))
	gateCase("a CoordErr of 0xFFFFFFFF", "coordinate error rate 0xffffffff", g32(44+4*nb+4, gate.NoEstimate))
	gateCase("a non-zero distance of a code to itself", "non-zero distance of a code to itself", g16(tOff+4+2*5, 1))

	// Bundles (3.6), from bundle.wmm: model-tiny.wmm, model-tiny-copy.wmm
	// and model-k2-fast.wmm.
	bundleRaw := read("bundle.wmm")
	if p := splitBundle(bundleRaw); len(p.members) != 3 || !bytes.Equal(p.join(), bundleRaw) {
		t.Fatal("bundle.wmm is not a bundle of three members: run go test ./format -run TestConformance -update")
	}
	bundleErr := func(name, errc, expect string, edit func(p *bundleParts) []byte) {
		cs = append(cs, rejectCase{rejectVector{Name: "bundle: " + name, Check: "model", Section: "3.6", Base: "bundle.wmm", Error: errc, Expect: expect},
			func() []byte { return edit(splitBundle(bundleRaw)) }})
	}
	bundle := func(name, expect string, edit func(p *bundleParts)) {
		bundleErr(name, "invalid", expect, func(p *bundleParts) []byte { edit(p); return p.join() })
	}
	cs = append(cs, rejectCase{v: rejectVector{Name: "every proper prefix of bundle.wmm", Check: "model", Section: "3.6", Base: "bundle.wmm", Prefixes: true,
		Error: "invalid", Expect: "invalid model file"}})
	bundleErr("CRC", "invalid", "bundle checksum", func(p *bundleParts) []byte { b := p.join(); b[len(b)-1] ^= 0x80; return b })
	bundle("flags 1", "bundle flags 0x1 set", func(p *bundleParts) { p.flags = 1 })
	bundle("flag bit 15", "bundle flags 0x8000 set", func(p *bundleParts) { p.flags = 0x8000 })
	bundleErr("version 2", "unsupported", "bundle version 2", func(p *bundleParts) []byte { p.version = 2; return p.join() })
	bundleErr("version 0", "unsupported", "bundle version 0", func(p *bundleParts) []byte { p.version = 0; return p.join() })
	bundle("nm = 0: the header and the CRC alone", "bundle of 0 members", func(p *bundleParts) { p.n, p.members = 0, nil })
	bundle("nm = 17, the lengths and members of three kept", "bundle of 17 members", func(p *bundleParts) { p.n = 17 })
	bundle("len[0] = 23, len[1] longer by as much (the members still end at the CRC)", "bundle member 0 of 23 bytes", func(p *bundleParts) {
		p.lens = p.lengths()
		p.lens[1] += p.lens[0] - 23
		p.lens[0] = 23
	})
	bundle("the lengths run past the CRC (len[2] one byte more)", "bundle members run past its end", func(p *bundleParts) {
		p.lens = p.lengths()
		p.lens[2]++
	})
	wrapped := uint64(len(splitBundle(bundleRaw).members[0])) + 1<<63
	bundle("len[0] and len[1] 2^63 more: their sum wraps around 2^64 to the members' bytes", fmt.Sprintf("bundle member 0 of %d bytes", wrapped), func(p *bundleParts) {
		p.lens = p.lengths()
		p.lens[0] += 1 << 63
		p.lens[1] += 1 << 63
	})
	bundle("a byte between the last member and the CRC", "1 bytes after the bundle's last member", func(p *bundleParts) { p.gap = []byte{0} })
	// model-tiny-copy.wmm is model-tiny.wmm but for its flags.
	bundle("two members with the same model ID: member 0 again as member 1", "bundle member 1 repeats model", func(p *bundleParts) {
		p.members[1], p.ids[1] = p.members[0], p.ids[0]
	})
	bundle("member 2 listed under another ID (one bit of it changed)", "bundle member 2 is model", func(p *bundleParts) { p.ids[2][0] ^= 1 })
	// A version-3 model and its canonical serialization (3.5): one ID in
	// other bytes.
	m3, err := wm.UnmarshalModel(v3)
	if err != nil {
		t.Fatal(err)
	}
	canon, err := m3.CanonicalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if c, err := wm.UnmarshalModel(canon); err != nil || c.ID() != m3.ID() || bytes.Equal(canon, v3) {
		t.Fatalf("model.wmm's canonical serialization: %v", err)
	}
	bundle("two members with the same model ID in other bytes: model.wmm (version 3) as member 0, its canonical serialization (version 2) as member 2",
		"bundle member 2 repeats model", func(p *bundleParts) {
			p.members[0], p.members[2] = v3, canon
			p.ids[0], p.ids[2] = m3.ID(), m3.ID()
		})
	bundle("member 1 not a model file (the last byte of its magic changed)", "bundle member 1: wm: invalid model file: bad magic", func(p *bundleParts) { p.members[1][3] = 'X' })
	bundle("member 0 with a byte after its last section (len[0] counts it)", "bundle member 0: wm: invalid model file: 1 trailing bytes", func(p *bundleParts) {
		p.members[0] = append(p.members[0], 0)
	})
	bundle("member 1 a bundle (of the same member alone), not a model file", "bundle member 1: wm: invalid model file: bad magic", func(p *bundleParts) {
		inner := &bundleParts{version: 1, n: 1, members: [][]byte{p.members[1]}}
		p.members[1] = inner.join()
	})
	cs = append(cs, rejectCase{rejectVector{Name: "bundle: a file whose model ID names no member (fast-tiny.wmz: the content of members 0 and 1 at the fast level, of their geometry)",
		Check: "file", Section: "3.6", Base: "fast-tiny.wmz", Model: "bundle.wmm", Error: "model-mismatch", Expect: "file needs model"},
		func() []byte { return read("fast-tiny.wmz") }})

	// Streams damaged at every chunk of two files, checksums recomputed:
	// the last byte dropped, or a byte in the middle changed. Decoding the
	// damage is deterministic, so every decoder meets the same check
	// first (2.5, 6.6); the name says which.
	reached := []struct{ msg, name, sec string }{
		{"needs a byte past the end of the stream", "a byte past its end needed", "2.5"},
		{"ends in state", "Finish: a lane not back at X0", "2.5"},
		{"bytes left at end of stream", "Finish: bytes left over", "2.5"},
		{"reconstruction checksum", "the reconstruction checksum", "6.6"},
	}
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
				k := slices.IndexFunc(reached, func(r struct{ msg, name, sec string }) bool {
					return err != nil && strings.Contains(err.Error(), r.msg)
				})
				if k < 0 {
					t.Fatalf("%s record %d, %s: %v", base, i, kind, err)
				}
				cs = append(cs, rejectCase{rejectVector{Name: base + ": record " + strconv.Itoa(i) + ", the stream with " + kind + ": " + reached[k].name,
					Check: "file", Section: reached[k].sec, Base: base, Model: mname, Error: errorClass(err), Expect: reached[k].msg},
					func() []byte { return bad }})
			}
		}
	}

	// Files.
	tiny, lossy, v3file, fastFile, copyFile := read("tiny.wmz"), read("tiny-lossy.wmz"), read("v3-lossless.wmz"), read("fast-tiny.wmz"), read("copy-tiny.wmz")
	fileRA := func(name, sec, base, model, errc, expect, expectRA string, edit func(p *fileParts) []byte) {
		b := map[string][]byte{"tiny.wmz": tiny, "tiny-lossy.wmz": lossy, "v3-lossless.wmz": v3file, "fast-tiny.wmz": fastFile, "copy-tiny.wmz": copyFile}[base]
		cs = append(cs, rejectCase{rejectVector{Name: name, Check: "file", Section: sec, Base: base, Model: model, Error: errc,
			Expect: expect, ExpectRandom: expectRA}, func() []byte { return edit(splitFile(b)) }})
	}
	const tm = "model-tiny.wmm"
	// file is a vector of tiny.wmz decoded with model-tiny.wmm.
	file := func(name, sec, errc, expect, expectRA string, edit func(p *fileParts) []byte) {
		fileRA(name, sec, "tiny.wmz", tm, errc, expect, expectRA, edit)
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
	// idx edits the index (entries rebuilt first) and keeps its checksum
	// and the trailer valid; the index may change length.
	idx := func(edit func(x []byte) []byte) func(p *fileParts) []byte {
		return func(p *fileParts) []byte {
			p.reindex(edit)
			return p.join(true)
		}
	}
	// rec edits record i (its checksum and stream length fixed, the index
	// rebuilt from the records).
	rec := func(i int, edit func(r []byte) []byte) func(p *fileParts) []byte {
		return func(p *fileParts) []byte {
			p.recs[i] = edit(p.recs[i])
			return p.join(true)
		}
	}
	// recKeep edits record i in place, its checksum fixed, and keeps the
	// index of the valid file: random access meets the record as the index
	// lists it.
	recKeep := func(i int, edit func(r []byte)) func(p *fileParts) []byte {
		return func(p *fileParts) []byte {
			off := int64(len(p.hdr) + len(p.model) + len(p.levels))
			for _, r := range p.recs[:i] {
				off += int64(len(r))
			}
			b := p.join(true)
			r := b[off : off+int64(len(p.recs[i]))]
			edit(r)
			le.PutUint32(r[len(r)-4:], crc(r[:len(r)-4]))
			return b
		}
	}
	// meta sets the metadata of episode record i.
	meta := func(i int, m string) func(p *fileParts) []byte {
		return rec(i, func(r []byte) []byte {
			out := le.AppendUint32(bytes.Clone(r[:4]), uint32(len(m)))
			return append(append(out, m...), 0, 0, 0, 0)
		})
	}
	embed := func(p *fileParts, model []byte) {
		p.model = model
		le.PutUint16(p.hdr[10:], 1)
		sum := sha256.Sum256(model)
		copy(p.hdr[32:48], sum[:16])
	}
	tinyID := s.models[tm].ID()
	// embedAs embeds model under the ID of model-tiny.wmm.
	embedAs := func(model []byte) func(p *fileParts) []byte {
		return func(p *fileParts) []byte {
			embed(p, model)
			copy(p.hdr[32:48], tinyID[:])
			return p.join(true)
		}
	}
	cs = append(cs, rejectCase{v: rejectVector{Name: "every proper prefix of tiny.wmz", Check: "file", Section: "6.14", Base: "tiny.wmz", Model: tm, Prefixes: true,
		Error: "truncated", Expect: "truncated"}})
	// The magic is checked once the 64 bytes of the header are read: a
	// shorter file is truncated whatever its first bytes (6.2, 6.14).
	file("a file shorter than the header, its magic wrong", "6.14", "truncated", "truncated", "", func(p *fileParts) []byte {
		b := p.join(true)[:40]
		b[1] = 'X'
		return b
	})

	// Header (6.2).
	file("magic", "6.2", "invalid", "bad magic", "", func(p *fileParts) []byte { b := p.join(true); b[1] = 'X'; return b })
	file("version 2", "6.2", "unsupported", "unsupported container version at offset 8: version 2", "", hdr(func(h []byte) { le.PutUint16(h[8:], 2) }))
	file("version 5, header checksum not updated", "6.2", "unsupported", "unsupported container version at offset 8: version 5", "", func(p *fileParts) []byte {
		b := p.join(true)
		le.PutUint16(b[8:], 5)
		return b
	})
	file("header checksum", "6.2", "checksum", "header checksum", "", func(p *fileParts) []byte { b := p.join(true); b[60] ^= 1; return b })
	file("reserved flag bit 1", "6.2", "invalid", "reserved flag bits set", "", hdr(func(h []byte) { h[10] |= 2 }))
	file("reserved byte 23", "6.2", "invalid", "reserved header byte 23 not zero", "", hdr(func(h []byte) { h[23] = 1 }))
	file("reserved bytes 52..59", "6.2", "invalid", "reserved header bytes 52..59 not zero", "", hdr(func(h []byte) { h[59] = 1 }))
	file("S = M = 4096 (N > 65536)", "6.2", "invalid", "geometry 4096x4096 out of range", "", hdr(func(h []byte) {
		le.PutUint16(h[12:], 4095)
		le.PutUint16(h[14:], 4095)
	}))
	file("P = 9", "6.2", "invalid", "precision 9 out of range", "", hdr(func(h []byte) { h[20] = 9 }))
	file("P = 17", "6.2", "invalid", "precision 17 out of range", "", hdr(func(h []byte) { h[20] = 17 }))
	file("K = 1", "6.2", "invalid", "alphabet 1 out of range", "", hdr(func(h []byte) { le.PutUint32(h[16:], 1) }))
	file("K = 65537", "6.2", "invalid", "alphabet 65537 out of range", "", hdr(func(h []byte) { le.PutUint32(h[16:], 65537) }))
	file("K = 2000 > 2^P", "6.2", "invalid", "alphabet 2000 out of range", "", hdr(func(h []byte) { le.PutUint32(h[16:], 2000) }))
	file("L = 0", "6.2", "invalid", "lanes 0 out of range", "", hdr(func(h []byte) { h[21] = 0 }))
	file("L = 33", "6.2", "invalid", "lanes 33 out of range", "", hdr(func(h []byte) { h[21] = 33 }))
	file("Q = 1", "6.2", "invalid", "1 retention levels", "", hdr(func(h []byte) { h[22] = 1 }))
	file("Q = 17", "6.2", "invalid", "17 retention levels", "", hdr(func(h []byte) { h[22] = 17 }))
	file("G = 0", "6.2", "invalid", "keyframe interval 0 out of range", "", hdr(func(h []byte) { le.PutUint32(h[24:], 0) }))
	file("G = 65537", "6.2", "invalid", "keyframe interval 65537 out of range", "", hdr(func(h []byte) { le.PutUint32(h[24:], 65537) }))
	// S = 129, M = 2: N = 258 and G = 65536 (the model's S and M differ
	// too, a check of 6.3 that comes after the header's).
	file("G·N > 2^24 (G = 65536, N = 258)", "6.2", "invalid", "keyframe interval 65536 times 258 coordinates exceeds 2^24", "", hdr(func(h []byte) {
		le.PutUint16(h[12:], 128)
		le.PutUint32(h[24:], 65536)
	}))
	file("model flag without a model (ModelSize 0)", "6.2", "invalid", "model size 0 inconsistent with flags", "", hdr(func(h []byte) { h[10] = 1 }))
	file("ModelSize 2^30 + 1", "6.2", "invalid", "model size 1073741825 exceeds 2^30", "", hdr(func(h []byte) { h[10] = 1; le.PutUint32(h[48:], 1<<30+1) }))
	file("a model without the flag", "6.2", "invalid", "model size 2673 inconsistent with flags", "", func(p *fileParts) []byte {
		embed(p, tinyModel)
		le.PutUint16(p.hdr[10:], 0)
		return p.join(true)
	})

	// The model (6.3).
	fileRA("given another model", "6.3", "tiny.wmz", "model-mix.wmm", "model-mismatch", "file needs model", "", func(p *fileParts) []byte { return p.join(true) })
	// Flag bit 2 of GATE changes the rule, hence the model ID.
	searchFile := read("lossy64-search.wmz")
	cs = append(cs, rejectCase{rejectVector{Name: "a file of a gate with the search fill (GATE flag bit 2) given the same model without the flag", Check: "file", Section: "6.3",
		Base: "lossy64-search.wmz", Model: "model-gate64.wmm", Error: "model-mismatch", Expect: "file needs model"}, func() []byte { return searchFile }})
	fileRA("no model given, none embedded", "6.3", "tiny.wmz", "", "no-model", "file has no embedded model and none was given", "", func(p *fileParts) []byte { return p.join(true) })
	file("model ID of another model", "6.3", "model-mismatch", "file needs model", "", hdr(func(h []byte) { h[32] ^= 1 }))
	fileRA("embedded model does not hash to the model ID", "6.3", "tiny.wmz", "", "checksum", "embedded model does not hash to the model ID", "", func(p *fileParts) []byte {
		m := bytes.Clone(tinyModel)
		m[len(m)-1] ^= 1
		return embedAs(m)(p)
	})
	file("a model given, the embedded model does not hash to the model ID", "6.3", "checksum", "embedded model does not hash to the model ID", "", func(p *fileParts) []byte {
		m := bytes.Clone(tinyModel)
		m[len(m)-1] ^= 1
		return embedAs(m)(p)
	})
	fileRA("embedded model invalid (reserved flags), with its ID", "6.3", "tiny.wmz", "", "invalid", "embedded model: wm: invalid model file: reserved flags 0x1 set", "", func(p *fileParts) []byte {
		m := bytes.Clone(tinyModel)
		m[6] = 1
		embed(p, m)
		return p.join(true)
	})
	v5 := bytes.Clone(tinyModel)
	le.PutUint16(v5[4:], 5)
	fileRA("embedded model of version 5", "6.3", "tiny.wmz", "", "checksum", "embedded model does not match the model ID: wm: unsupported model file version 5", "", embedAs(v5))
	file("a model given, the embedded model of version 5", "6.3", "checksum", "embedded model does not match the model ID: wm: unsupported model file version 5", "", embedAs(v5))
	fileRA("embedded model of 5 bytes (no version field)", "6.3", "tiny.wmz", "", "invalid", "embedded model of 5 bytes has no version field", "", embedAs(tinyModel[:5]))
	file("a model given, the embedded model of 5 bytes (no version field)", "6.3", "invalid", "embedded model of 5 bytes has no version field", "", embedAs(tinyModel[:5]))
	file("header S differs from the model's", "6.3", "model-mismatch", "model geometry or precision differs from the header", "", hdr(func(h []byte) { le.PutUint16(h[12:], 2) }))
	file("header K differs from the model's", "6.3", "model-mismatch", "model geometry or precision differs from the header", "", hdr(func(h []byte) { le.PutUint32(h[16:], 5) }))
	file("header P differs from the model's", "6.3", "model-mismatch", "model geometry or precision differs from the header", "", hdr(func(h []byte) { h[20] = 11 }))
	fileRA("finite λ, model without GATE", "5.4", "tiny-lossy.wmz", "", "unsupported", "finite lambda needs a model with a retention gate", "", func(p *fileParts) []byte {
		c := tinyBuild()
		c.secs = nil
		embed(p, c.bytes())
		return p.join(true)
	})
	fileRA("finite λ, model with a malformed GATE (version 3)", "5.4", "tiny-lossy.wmz", "", "model-mismatch", "gate: malformed GATE section: version 3", "", func(p *fileParts) []byte {
		c := tinyBuild()
		le.PutUint16(c.secs[0].Data, 3)
		embed(p, c.bytes())
		return p.join(true)
	})

	// Level table (6.4).
	fileRA("level table checksum", "6.4", "tiny-lossy.wmz", tm, "checksum", "level table checksum", "", func(p *fileParts) []byte {
		b := p.join(true)
		b[HeaderSize+4] ^= 1
		return b
	})
	fileRA("level λs not increasing", "6.4", "tiny-lossy.wmz", tm, "invalid", "level lambdas not strictly increasing at level 1", "", func(p *fileParts) []byte {
		le.PutUint32(p.levels[0:], le.Uint32(p.levels[4:]))
		return p.join(true)
	})
	fileRA("last level λ differs from the header's", "6.4", "tiny-lossy.wmz", tm, "invalid", "last level's lambda 4294967294 differs from the header's", "", func(p *fileParts) []byte {
		le.PutUint32(p.levels[4:], le.Uint32(p.levels[4:])-1)
		return p.join(true)
	})

	// Records (6.5, 6.14).
	file("first record a chunk", "6.14", "invalid", "expected an episode record, found tag 0x43", "episode record disagrees with the index: tag 0x43",
		recKeep(0, func(r []byte) { r[0] = tagChunk }))
	file("unknown record tag", "6.14", "invalid", "unknown record tag 0x5a", "chunk record disagrees with the index: tag 0x5a",
		recKeep(1, func(r []byte) { r[0] = 'Z' }))
	file("episode record reserved byte", "6.5", "invalid", "reserved bytes of episode record not zero", "", rec(0, func(r []byte) []byte { r[2] = 1; return r }))
	file("episode MetaLen 2^20 + 1", "6.5", "invalid", "metadata of 1048577 bytes exceeds 1048576", "episode record disagrees with the index: MetaLen 1048577",
		func(p *fileParts) []byte {
			b := p.join(true)
			le.PutUint32(b[HeaderSize+4:], 1<<20+1)
			return b
		})
	file("metadata not JSON", "6.5", "invalid", "episode metadata is not JSON", "", rec(0, func(r []byte) []byte { r[8] = '!'; return r }))
	for _, m := range []struct{ name, meta string }{
		{"NaN", `{"episode":NaN}`},
		{"-Infinity", `[-Infinity]`},
		{"a trailing comma", `{"episode":0,}`},
		{"a byte-order mark", "\ufeff{}"},
		{"a control character in a string", "[\"\x01\"]"},
		{"nested 10,001 deep", strings.Repeat("[", 10001) + strings.Repeat("]", 10001)},
		{"whitespace alone", " "},
	} {
		file("metadata not JSON: "+m.name, "6.5", "invalid", "episode metadata is not JSON", "", meta(0, m.meta))
	}
	file("episode record checksum", "6.5", "checksum", "episode record checksum", "", func(p *fileParts) []byte {
		b := p.join(true)
		b[HeaderSize+8] ^= 1
		return b
	})
	file("chunk record reserved byte 3", "6.5", "invalid", "reserved byte 3 of chunk record not zero", "", rec(1, func(r []byte) []byte { r[3] = 1; return r }))
	fileRA("version 3: chunk record byte 1 not zero", "6.5", "v3-lossless.wmz", "", "invalid", "reserved bytes of chunk record not zero", "", rec(1, func(r []byte) []byte { r[1] = 1; return r }))
	file("chunk mode 3", "6.5", "invalid", "chunk mode 3, level 0 not allowed in this file", "", rec(1, func(r []byte) []byte { r[1] = 3; return r }))
	file("chunk mode 1 (lossless) in a lossless file", "6.5", "invalid", "chunk mode 1, level 0 not allowed in this file", "", rec(1, func(r []byte) []byte { r[1] = 1; return r }))
	file("chunk mode 2 (a level) in a file without a level table", "6.5", "invalid", "chunk mode 2, level 0 not allowed in this file", "", rec(1, func(r []byte) []byte { r[1] = 2; return r }))
	file("chunk mode 0 with byte 2 (level) not zero", "6.5", "invalid", "chunk mode 0, level 1 not allowed in this file", "", rec(1, func(r []byte) []byte { r[2] = 1; return r }))
	fileRA("chunk mode 2 with level Q", "6.5", "tiny-lossy.wmz", tm, "invalid", "chunk mode 2, level 2 not allowed in this file", "", rec(1, func(r []byte) []byte { r[1], r[2] = 2, 2; return r }))
	fileRA("chunk mode 1 with byte 2 (level) not zero", "6.5", "tiny-lossy.wmz", tm, "invalid", "chunk mode 1, level 1 not allowed in this file", "", rec(1, func(r []byte) []byte { r[1], r[2] = 1, 1; return r }))
	file("chunk of 0 states", "6.5", "invalid", "chunk of 0 states", "chunk 0 of 0 states, not 1..G", rec(1, func(r []byte) []byte { le.PutUint32(r[4:], 0); return r }))
	file("chunk of G + 1 states", "6.5", "invalid", "chunk of 3 states", "chunk 0 of 3 states, not 1..G", rec(1, func(r []byte) []byte { le.PutUint32(r[4:], 3); return r }))
	file("chunk of one state more than its stream holds: a byte past its end needed", "2.5", "invalid", "needs a byte past the end of the stream", "",
		rec(3, func(r []byte) []byte { le.PutUint32(r[4:], 2); return r }))
	file("chunk StreamLen 2^28 + 1", "6.5", "invalid", "stream of 268435457 bytes exceeds 268435456", "chunk record disagrees with the index: 2 states and 268435457 stream bytes",
		func(p *fileParts) []byte {
			b := p.join(true)
			o := HeaderSize + len(p.recs[0])
			le.PutUint32(b[o+8:], 1<<28+1)
			return b
		})
	file("chunk record checksum", "6.5", "checksum", "chunk record checksum", "", func(p *fileParts) []byte {
		b := p.join(true)
		b[HeaderSize+len(p.recs[0])+16] ^= 1
		return b
	})
	file("reconstruction checksum", "6.6", "checksum", "reconstruction checksum", "", rec(1, func(r []byte) []byte { r[12] ^= 1; return r }))
	file("stream shorter than 4L bytes", "2.5", "invalid", "7 bytes, need 8 for 2 lane states", "", rec(1, func(r []byte) []byte {
		return append(r[:chunkHdrSize+7:chunkHdrSize+7], 0, 0, 0, 0)
	}))
	file("stream lane state below 2^24", "2.5", "invalid", "lane 0 state 0x83b801 below 2^24", "", rec(1, func(r []byte) []byte { r[chunkHdrSize+3] = 0; return r }))
	file("stream with a byte left over", "2.5", "invalid", "1 bytes left at end of stream", "", rec(1, func(r []byte) []byte {
		return append(r[:len(r)-4:len(r)-4], 0x55, 0, 0, 0, 0)
	}))
	file("stream one byte short: a byte past its end needed", "2.5", "invalid", "needs a byte past the end of the stream", "", rec(1, func(r []byte) []byte {
		return append(r[:len(r)-5:len(r)-5], 0, 0, 0, 0)
	}))
	file("stream lane state changed: Finish finds a lane not back at X0", "2.5", "invalid", "lane 0 ends in state 0x311a57d9, not 0x1000000", "",
		rec(1, func(r []byte) []byte { r[chunkHdrSize+4] ^= 1; return r }))

	// Trailer and index (6.7, 6.8).
	file("trailer magic", "6.7", "invalid", "bad trailer magic", "", func(p *fileParts) []byte { b := p.join(true); b[len(b)-1] = 0; return b })
	file("trailer checksum", "6.7", "checksum", "trailer checksum", "", func(p *fileParts) []byte { b := p.join(true); b[len(b)-8] ^= 1; return b })
	trailerEdit := func(edit func(t []byte)) func(p *fileParts) []byte {
		return func(p *fileParts) []byte {
			b := p.join(true)
			t := b[len(b)-TrailerSize:]
			edit(t)
			le.PutUint32(t[20:], crc(t[:20]))
			return b
		}
	}
	file("IndexOffset + IndexLength ≠ size − 28", "6.7", "invalid", "index offset 293 and length 263 do not end at the trailer", "",
		trailerEdit(func(t []byte) { le.PutUint64(t[8:], le.Uint64(t[8:])-1) }))
	file("IndexLength 47", "6.7", "invalid", "index length 47 below 48", "", trailerEdit(func(t []byte) {
		o := le.Uint64(t[0:]) + le.Uint64(t[8:]) - 47
		le.PutUint64(t[0:], o)
		le.PutUint64(t[8:], 47)
	}))
	file("IndexLength 87: no room for the report of version 4", "6.7", "invalid", "trailer points to index at 470, found at 293", "index too short", func(p *fileParts) []byte {
		b := p.join(true)
		t := b[len(b)-TrailerSize:]
		o := le.Uint64(t[0:]) + le.Uint64(t[8:]) - 87
		le.PutUint64(t[0:], o)
		le.PutUint64(t[8:], 87)
		le.PutUint32(t[16:], crc(b[o:o+87]))
		le.PutUint32(t[20:], crc(t[:20]))
		return b
	})
	file("IndexOffset below BodyStart", "6.7", "invalid", "trailer points to index at 10, found at 293", "index offset 10 inside the header", trailerEdit(func(t []byte) {
		end := le.Uint64(t[0:]) + le.Uint64(t[8:])
		le.PutUint64(t[0:], 10)
		le.PutUint64(t[8:], end-10)
	}))
	file("index checksum", "6.7", "checksum", "index checksum", "", trailerEdit(func(t []byte) { t[16] ^= 1 }))
	// Sequential decoding meets the index's tag as a record's and compares
	// the rest of the index with the one it rebuilt (6.14); random access
	// checks each field.
	const differs = "index disagrees with the records"
	x32 := func(off int, v func(x []byte) uint32) func(x []byte) []byte {
		return func(x []byte) []byte { le.PutUint32(x[off:], v(x)); return x }
	}
	file("index tag", "6.7", "invalid", "unknown record tag 0x59", "bad index tag", idx(func(x []byte) []byte { x[0] = 'Y'; return x }))
	file("index reserved byte", "6.7", "invalid", differs, "reserved bytes of the index not zero", idx(func(x []byte) []byte { x[1] = 1; return x }))
	file("index Episodes = 2^24 + 1", "6.7", "invalid", differs, "index of 16777217 episodes, above 2^24", idx(x32(4, func([]byte) uint32 { return 1<<24 + 1 })))
	file("index States = 2^48 + 1", "6.7", "invalid", differs, "index of 281474976710657 states, above 2^48", idx(func(x []byte) []byte {
		le.PutUint64(x[8:], 1<<48+1)
		return x
	}))
	file("index States one more than its episodes' sum", "6.7", "invalid", differs, "index States 9, its episodes' 8", idx(func(x []byte) []byte {
		le.PutUint64(x[8:], le.Uint64(x[8:])+1)
		return x
	}))
	file("index Chunks one more (IndexLength ≠ 48 + 24·Episodes + 16·Chunks)", "6.7", "invalid", differs, "index length does not match its counts", idx(func(x []byte) []byte {
		le.PutUint64(x[16:], le.Uint64(x[16:])+1)
		return x
	}))
	// A sequential decoder reads as many index bytes as it rebuilt, and
	// then a trailer where the index goes on.
	file("index Chunks one more than its episodes' sum, with a chunk entry no episode holds", "6.7", "invalid", "bad trailer magic", "index Chunks 6, its episodes' 5",
		idx(func(x []byte) []byte {
			le.PutUint64(x[16:], le.Uint64(x[16:])+1)
			return append(x, x[48+24:48+24+16]...)
		}))
	// The writer's report closing the index (version 4).
	rep := func(at int, v uint64) func(p *fileParts) []byte {
		return idx(func(x []byte) []byte { le.PutUint64(x[len(x)-reportLen+at:], v); return x })
	}
	file("report: more slot vectors measured than the file has coordinates", "6.7", "invalid", "report of 33 and 0 slot vectors, the file has 32", "", rep(0, 33))
	file("report: a retention distortion that is not a number", "6.7", "invalid", "report holds a negative or non-finite distortion", "", rep(8, math.Float64bits(math.NaN())))
	file("report: a negative source distortion", "6.7", "invalid", "report holds a negative or non-finite distortion", "", rep(24, math.Float64bits(-1)))
	file("report: a cosine sum beyond its slot vectors", "6.7", "invalid", "report's cosine sum exceeds its 0 slot vectors", "", rep(32, math.Float64bits(0.5)))
	file("index IdealCodeBits", "6.8", "invalid", differs, "ideal code lengths in the index differ from the streams'", idx(func(x []byte) []byte { x[24] ^= 1; return x }))
	file("index IdealActionBits", "6.8", "invalid", differs, "ideal code lengths in the index differ from the streams'", idx(func(x []byte) []byte { x[32] ^= 1; return x }))
	file("index Retained", "6.8", "invalid", differs, "retained coordinates in the index differ from the streams'", idx(func(x []byte) []byte { x[40] ^= 1; return x }))
	// The entries of tiny.wmz: episode 0 (5 states; chunks of 2, 2, 1),
	// episode 1 (no state), episode 2 (3 states; 2, 1), episode 3 (none).
	const e0, e2, e3 = 48, 48 + 2*24 + 3*16, 48 + 3*24 + 5*16
	chunk := func(e, k int) int { return e + 24 + 16*k }
	file("index episode Offset", "6.7", "invalid", differs, "episode 0 record at offset 65, not 64", idx(func(x []byte) []byte { x[e0] ^= 1; return x }))
	file("index episode States one more than its chunks hold", "6.7", "invalid", differs, "episode 0 chunks hold 5 states, not 6", idx(func(x []byte) []byte {
		le.PutUint64(x[e0+8:], 6)
		le.PutUint64(x[8:], le.Uint64(x[8:])+1)
		return x
	}))
	file("index: an empty last episode's MetaLen runs into the index", "6.7", "invalid", differs, "episode records overlap the index", idx(func(x []byte) []byte {
		le.PutUint32(x[e3+20:], 1000)
		return x
	}))
	file("index episode Chunks > States", "6.7", "invalid", differs, "episode 2 of 2 chunks for 1 states: more chunks than states", idx(func(x []byte) []byte {
		le.PutUint64(x[e2+8:], 1)
		le.PutUint64(x[8:], le.Uint64(x[8:])-2)
		return x
	}))
	file("index episode Chunks < ⌈States/G⌉", "6.7", "invalid", differs, "episode 0 of 2 chunks for 5 states: fewer than ⌈States/G⌉", idx(func(x []byte) []byte {
		le.PutUint32(x[e0+16:], 2) // the entries after it read one off
		return x
	}))
	file("index episode Chunks beyond the index's chunk entries", "6.7", "invalid", differs, "episode 2 of 3 states and 3 chunks exceeds the index's",
		idx(x32(e2+16, func([]byte) uint32 { return 3 })))
	file("index episode MetaLen 2^20 + 1", "6.7", "invalid", differs, "episode 0 metadata of 1048577 bytes exceeds 1048576", idx(x32(e0+20, func([]byte) uint32 { return 1<<20 + 1 })))
	file("index chunk Offset", "6.7", "invalid", differs, "episode 0 chunk 0 record at offset", idx(func(x []byte) []byte { x[chunk(e0, 0)] ^= 1; return x }))
	file("index chunk Length 19", "6.7", "invalid", differs, "episode 0 chunk 0 record length 19 out of range", idx(x32(chunk(e0, 0)+8, func([]byte) uint32 { return 19 })))
	file("index chunk Length running into the index", "6.7", "invalid", differs, "chunk records overlap the index", idx(x32(chunk(e0, 0)+8, func([]byte) uint32 { return 1 << 20 })))
	file("index chunk of 0 states", "6.7", "invalid", differs, "episode 0 chunk 0 of 0 states, not 1..G", idx(x32(chunk(e0, 0)+12, func([]byte) uint32 { return 0 })))
	file("index chunk of G + 1 states", "6.7", "invalid", differs, "episode 0 chunk 0 of 3 states, not 1..G", idx(x32(chunk(e0, 0)+12, func([]byte) uint32 { return 3 })))
	file("index chunks of an episode sum to States − 1", "6.7", "invalid", differs, "episode 0 chunks hold 4 states, not 5", idx(x32(chunk(e0, 1)+12, func([]byte) uint32 { return 1 })))
	file("index chunks of an episode sum to States + 1", "6.7", "invalid", differs, "episode 0 chunks hold more than its 5 states", idx(x32(chunk(e0, 2)+12, func([]byte) uint32 { return 2 })))
	// The last episode given metadata, "{}", and its index entry a MetaLen
	// of 1.
	file("index records end before the index (the last MetaLen one short)", "6.7", "invalid", differs, "index records end at 294, before the index at 295",
		func(p *fileParts) []byte {
			p.recs[len(p.recs)-1] = le.AppendUint32(bytes.Clone(p.recs[len(p.recs)-1][:4]), 2)
			p.recs[len(p.recs)-1] = append(p.recs[len(p.recs)-1], '{', '}', 0, 0, 0, 0)
			return idx(x32(e3+20, func([]byte) uint32 { return 1 }))(p)
		})
	file("a byte after the trailer", "6.7", "invalid", "bytes after the trailer", "bad trailer magic", func(p *fileParts) []byte { p.after = []byte{0}; return p.join(true) })

	// Files of the fast level (fast-tiny.wmz: tiny.wmz's input and
	// model-tiny.wmm at the fast level, slot events in its streams).
	const tf = "model-tiny-fast.wmm"
	fast := func(name, sec, errc, expect, expectRA string, edit func(p *fileParts) []byte) {
		fileRA(name, sec, "fast-tiny.wmz", tf, errc, expect, expectRA, edit)
	}
	cs = append(cs, rejectCase{v: rejectVector{Name: "every proper prefix of fast-tiny.wmz", Check: "file", Section: "6.14", Base: "fast-tiny.wmz", Model: tf, Prefixes: true,
		Error: "truncated", Expect: "truncated"}})
	fileRA("a fast-level file given the default-level model of the same content", "6.3", "fast-tiny.wmz", tm, "model-mismatch", "file needs model", "",
		func(p *fileParts) []byte { return p.join(true) })
	fileRA("a default-level file given the fast-level model of the same content", "6.3", "tiny.wmz", tf, "model-mismatch", "file needs model", "",
		func(p *fileParts) []byte { return p.join(true) })
	fast("fast level: reconstruction checksum", "6.6", "checksum", "reconstruction checksum", "", rec(1, func(r []byte) []byte { r[12] ^= 1; return r }))
	// A changed stream byte changes slot events and values: a lane runs
	// out of bytes or ends elsewhere than X0, or the reconstruction's
	// checksum differs.
	for _, c := range []struct {
		k            int
		sec, errc, e string
	}{
		{0, "2.5", "invalid", "lane 0 needs a byte past the end of the stream"},
		{2, "2.5", "invalid", "lane 0 ends in state 0x17a073f4, not 0x1000000"},
		{10, "6.6", "checksum", "reconstruction checksum"},
	} {
		fast(fmt.Sprintf("fast level: stream byte %d changed", c.k), c.sec, c.errc, c.e, "",
			recKeep(1, func(r []byte) { r[chunkHdrSize+c.k] ^= 0x5a }))
	}

	// Files of the copy level (copy-tiny.wmz: tiny.wmz's input and
	// model-tiny.wmm at the copy level).
	const tc = "model-tiny-copy.wmm"
	cs = append(cs, rejectCase{v: rejectVector{Name: "every proper prefix of copy-tiny.wmz", Check: "file", Section: "6.14", Base: "copy-tiny.wmz", Model: tc, Prefixes: true,
		Error: "truncated", Expect: "truncated"}})
	fileRA("a copy-level file given the default-level model of the same content", "6.3", "copy-tiny.wmz", tm, "model-mismatch", "file needs model", "",
		func(p *fileParts) []byte { return p.join(true) })
	fileRA("a copy-level file given the fast-level model of the same content", "6.3", "copy-tiny.wmz", tf, "model-mismatch", "file needs model", "",
		func(p *fileParts) []byte { return p.join(true) })
	fileRA("a default-level file given the copy-level model of the same content", "6.3", "tiny.wmz", tc, "model-mismatch", "file needs model", "",
		func(p *fileParts) []byte { return p.join(true) })
	fileRA("copy level: reconstruction checksum", "6.6", "copy-tiny.wmz", tc, "checksum", "reconstruction checksum", "", rec(1, func(r []byte) []byte { r[12] ^= 1; return r }))
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

// atRule checks that err is of v's class and, at the rule, has the fragment
// want.
func atRule(v rejectVector, err error, want string) error {
	if c := errorClass(err); c != v.Error {
		return fmt.Errorf("error %s (%v), want %s", c, err, v.Error)
	}
	if !strings.Contains(err.Error(), want) {
		return fmt.Errorf("error %q, not at the rule: want %q", err, want)
	}
	return nil
}

// rejects checks that b is rejected as v says: of its class, at its rule.
func rejects(t *testing.T, v rejectVector, b []byte) error {
	switch v.Check {
	case "model", "gate":
		if v.Check == "model" && wm.IsBundle(b) {
			// A .wmm file is a bundle by its magic (3.6).
			_, err := wm.UnmarshalBundle(b, 0)
			return atRule(v, err, v.Expect)
		}
		m, err := wm.UnmarshalModel(b)
		if v.Check == "gate" {
			if err != nil {
				return err
			}
			_, err = gate.FromModel(m)
		}
		return atRule(v, err, v.Expect)
	}
	var m *wm.Model
	if v.Model != "" {
		raw, err := os.ReadFile(filepath.Join(conformanceDir, v.Model))
		if err != nil {
			t.Fatal(err)
		}
		if wm.IsBundle(raw) {
			ms, err := wm.UnmarshalBundle(raw, 0)
			if err != nil {
				t.Fatal(err)
			}
			m = bundleMember(ms, b) // the member the header names, as a decoder given the bundle
		} else if m, err = wm.UnmarshalModel(raw); err != nil {
			t.Fatal(err)
		}
	}
	for _, threads := range []int{1, 3} {
		_, err := readAll(b, m, WithThreads(threads))
		if err := atRule(v, err, v.Expect); err != nil {
			return fmt.Errorf("sequential decoding on %d goroutines: %v", threads, err)
		}
	}
	// Skipping every episode checks them all the same.
	r, err := NewReader(bytes.NewReader(b), m)
	for err == nil {
		_, err = r.NextEpisode()
	}
	if err == io.EOF {
		return errors.New("sequential decoding skipping episodes accepts it")
	}
	if err := atRule(v, err, v.Expect); err != nil {
		return fmt.Errorf("sequential decoding skipping episodes: %v", err)
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
	if v.Prefixes {
		return nil // random access reads a trailer where the cut falls
	}
	want := v.Expect
	if v.ExpectRandom != "" {
		want = v.ExpectRandom
	}
	if !strings.Contains(err.Error(), want) {
		return fmt.Errorf("random access: error %q, not at the rule: want %q", err, want)
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
			if r.Header().ModelID != s.writer(v).ID() || r.Model().ID() != s.writer(v).ID() || r.Level() != 0 {
				t.Fatal("Reader's header, model or first level")
			}
			chunk := -1 // chunks of G states, no flushes but where v.Flush says
			for e := 0; ; e++ {
				if _, err := r.NextEpisode(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				inChunk := 0
				for st := 0; ; st++ {
					if _, _, err := r.ReadState(nil); err == io.EOF {
						break
					} else if err != nil {
						t.Fatal(err)
					}
					if st == 0 || inChunk == v.Keyframe || v.Flush && slices.Contains(in.Episodes[e].FlushBefore, st) {
						chunk, inChunk = chunk+1, 0
					}
					inChunk++
					want := 0
					if len(v.Levels) > 0 {
						want = in.Episodes[e].Levels[st]
					}
					switch {
					case v.Modes != nil && v.Modes[chunk][0] == modeLossless:
						want = -1
					case v.Modes != nil && v.Modes[chunk][0] == modeLevel:
						want = int(v.Modes[chunk][1])
					case v.version() >= 4 && r.Level() == -1:
						want = -1 // the writer coded the chunk losslessly
					}
					if r.Level() != want {
						t.Fatalf("episode %d state %d: level %d, want %d", e, st, r.Level(), want)
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
		n := s.writer(v).Geom.N()
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
