package wm

import (
	"errors"
	"testing"
)

// Regression tests for model files that are valid by the letter of an
// earlier SPEC.md but broke the decoder or let implementations disagree.

// smallModel returns a version-2 model of geometry g with a first
// fallback table of one context, the rows given, and no reference store.
func smallModel(g Geometry, prec uint, fall []uint16) *Model {
	m := &Model{Geom: g, Precision: prec,
		fallTables:  fallTables{fallCtx: 1, fallback: fall, subMix: 128},
		classPriors: classPriors{clsSlot: make([]uint32, g.S*nClasses)},
		slotLaws:    slotLaws{contNext: defaultContNext(g.S)}}
	for b := range nBuckets {
		for c := range nClasses {
			m.clsHits[b][c] = 1
		}
	}
	return m
}

// SPEC.md, "World model", the combined row: f2mix is the table Quantize
// gives for w[v] = (G1[v]·G2[v]) >> 8, and Quantize of all-zero weights
// is the uniform table. When the two powers peak at different values and
// are steep enough (exponents near 1024), every product is below 256 and
// every w[v] is 0: the combined row (Predictor.mix) was once quantized
// with a total of 0, dividing by zero, and a valid model file made every
// decoder and encoder panic at its first prediction.
func TestModelBugMixRowAllZero(t *testing.T) {
	g := Geometry{S: 1, M: 1, K: 2}
	m := smallModel(g, 12, []uint16{65535, 1})
	m.fall2Ctx = g.K + 1
	m.fall2 = []uint16{1, 65535, 1, 65535, 1, 65535}
	m.fallExp = [2]uint16{1024, 1024}
	m.encode()
	m, err := UnmarshalModel(m.raw)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("the first prediction panics: %v", r)
		}
	}()
	p := m.NewPredictor()
	p.Begin(NoAction)
	if _, hit := p.Predict(0); hit != 0 {
		t.Fatalf("two-step prediction without groups")
	}
	if cum := p.Table(); cum[0] != 0 || cum[1] != 2048 {
		t.Fatalf("table %v, want the uniform table [0 2048]", cum)
	}
}

// SPEC.md, "Model file": fallback frequencies are stored minus one, so
// each is at least 1 and a row of K ≥ 2 of them summing to 65536 has none
// above 65535. readRows adds the one in 16 bits: a stored 0xFFFF wraps to
// a frequency of 0, and a row such as (0xFFFF, 0x7FFF, 0x7FFF) — read as
// 0, 32768, 32768 — sums to 65536 and is accepted. Its table has a symbol
// of frequency 0 (cum not strictly increasing): an encoder given that
// value divides by zero, and decoders may disagree.
func TestModelBugFallbackFrequencyWraps(t *testing.T) {
	g := Geometry{S: 1, M: 1, K: 3}
	m := smallModel(g, 12, []uint16{0, 32768, 32768}) // stored as 0xFFFF, 0x7FFF, 0x7FFF
	m.encode()
	if _, err := UnmarshalModel(m.raw); !errors.Is(err, ErrModelFormat) {
		t.Fatalf("a fallback row with a stored 0xFFFF: %v, want ErrModelFormat", err)
	}
}

// SPEC.md, "World model", chunk state: the class counts start at the
// model's (32-bit fields) and grow by one per slot. The predictor keeps
// hits, hitsS, hitsP, mis and cn in 32 bits, which wrap, but the sums the
// prior divides by (hitsB, hitsC, hitsT) in 64 bits, which do not: a model
// whose counts are within G·S of 2^32 gives priors no integer reading of
// the text reproduces, and implementations that keep 64-bit counts
// disagree with this one. The parser bounds the counts at 2^30
// (MaxClassCount).
func TestModelBugCountsWrap(t *testing.T) {
	g := Geometry{S: 1, M: 1, K: 2}
	m := smallModel(g, 12, []uint16{32768, 32768})
	for c := range nClasses {
		m.clsHits[0][c] = 1<<32 - 1
	}
	m.encode()
	if _, err := UnmarshalModel(m.raw); !errors.Is(err, ErrModelFormat) {
		t.Fatalf("class counts of 2^32-1: %v, want ErrModelFormat", err)
	}
}

// SPEC.md, "Model file": episode starts are ascending, the first 0, all
// below T. With T = 0 the parser checks none of the starts: a model with
// no reference states and one reference episode starting at 12345 loads.
func TestModelBugEmptyStoreEpisodeStart(t *testing.T) {
	g := Geometry{S: 1, M: 1, K: 2}
	m := smallModel(g, 12, []uint16{32768, 32768})
	m.refStart = []int64{12345}
	m.encode()
	if _, err := UnmarshalModel(m.raw); !errors.Is(err, ErrModelFormat) {
		t.Fatalf("T = 0 with an episode starting at 12345: %v, want ErrModelFormat", err)
	}
}
