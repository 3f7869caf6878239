package wm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The conformance vectors (testdata/conformance, SPEC.md "Conformance
// vectors") claim to reach every cap of the world model. Coverage cannot
// show that a cap was reached (a loop bound is not a statement), so this
// test runs the predictor over the inputs of the lossless vectors and
// checks each cap directly: more candidates than the cap were there, and
// the cap's number was kept. Models of the fast level (4.15) are driven as
// the writer drives them, slot events first, and checked for the limits
// of that level.

type capsInput struct {
	Episodes []struct {
		Actions     []int64  `json:"actions"`
		Codes       []uint16 `json:"codes"`
		FlushBefore []int    `json:"flush_before"`
	} `json:"episodes"`
}

type capsVector struct {
	File     string   `json:"file"`
	Input    string   `json:"input"`
	Model    string   `json:"model"`
	Keyframe int      `json:"keyframe_interval"`
	Lambda   uint32   `json:"lambda"`
	Levels   []uint32 `json:"levels"`
	Flush    bool     `json:"flush"`
}

// capsSeen records, per model version, whether each cap was reached.
type capsSeen struct {
	occ, anchors, succ, conts, ep, dict bool
}

func TestConformanceCaps(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "conformance")
	read := func(name string, v any) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if v != nil {
			if err := json.Unmarshal(b, v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		return b
	}
	var vs []capsVector
	read("vectors.json", &vs)
	seen := map[int]*capsSeen{1: {}, 2: {}, 3: {}}
	var fs fastSeen
	for _, v := range vs {
		if v.Lambda != 0xFFFFFFFF || len(v.Levels) > 0 {
			continue // lossy: the predictor sees the reconstruction, not the input
		}
		raw := read(v.Model, nil)
		if IsBundle(raw) {
			// A bundle (SPEC.md 3.6): the member the file's header names.
			ms, err := UnmarshalBundle(raw, 0)
			if err != nil {
				t.Fatal(err)
			}
			id := read(v.File, nil)[32:48]
			i := slices.IndexFunc(ms, func(m *Model) bool { return string(m.id[:]) == string(id) })
			if i < 0 {
				t.Fatalf("%s names no member of %s", v.File, v.Model)
			}
			raw, _ = ms[i].MarshalBinary()
		}
		m, err := UnmarshalModel(raw)
		if err != nil {
			t.Fatal(err)
		}
		var in capsInput
		read(v.Input, &in)
		if m.Level() == LevelFast {
			fastCaps(m, v, &in, &fs)
			continue
		}
		if m.Level() == LevelCopy {
			continue // the default level's predictor, whose caps its own vectors reach
		}
		s := seen[int(raw[4])]
		for id, c := range m.tileCount {
			s.occ = s.occ || int(c) > m.occCap && len(m.tileOcc[id]) == m.occCap
		}
		p := m.NewPredictor().level.(*fullPredictor)
		n := m.Geom.N()
		for _, e := range in.Episodes {
			inChunk := 0
			for st, a := range e.Actions {
				if st == 0 || inChunk == v.Keyframe || v.Flush && slices.Contains(e.FlushBefore, st) {
					p.Reset()
					inChunk = 0
				}
				inChunk++
				// Anchors that give a successor, and a predecessor.
				var next, prev int
				for _, an := range p.succ.anchors {
					if an.r.store == storeHist && int(an.r.state) < p.t || an.r.store == storeRef && m.refNext[an.r.state] >= 0 {
						next++
					}
					if an.r.store == storeHist && an.r.state >= 1 || an.r.store == storeRef && an.r.state >= 1 && m.refNext[an.r.state-1] == an.r.state {
						prev++
					}
				}
				p.Begin(a)
				s.anchors = s.anchors || next > m.anchorCap && len(p.succ.list) >= m.anchorCap
				s.succ = s.succ || next+prev > m.succCap && len(p.succ.list) == max(m.succCap, m.anchorCap)
				for j := range n {
					v := e.Codes[st*n+j]
					p.Predict(j)
					mm := p.mm
					var epAvail, dictAvail int
					if mm == 1 && p.ep.live {
						for _, r := range p.ep.first[p.ep.v0] {
							if p.tileOf(ref{storeHist, r / int32(p.S), r % int32(p.S)})[1] == v {
								epAvail++
							}
						}
					}
					if mm == 1 && p.dict.live {
						for _, pe := range m.dictPairs[p.dict.v0] {
							if pe.v1 == v {
								dictAvail = int(pe.hi - pe.lo)
							}
						}
					}
					p.Commit(j, v)
					if mm == 1 {
						// Groups of classes ep and dict are formed only at
						// m = 1: those present are this commit's.
						var ep, dict int
						for _, g := range p.grp.list {
							switch g.cls {
							case clsEp:
								ep++
							case clsDict:
								dict++
							}
						}
						s.ep = s.ep || epAvail > histCap && ep == histCap
						s.dict = s.dict || dictAvail > dictCap && dict == dictCap
					}
					if p.mm == 0 {
						s.conts = s.conts || len(p.cont.refs) == contCap
					}
				}
			}
		}
	}
	for ver, s := range seen {
		if ver == 3 {
			continue // the trained version-3 models are small: caps 2 and 3 share
		}
		if !s.occ || !s.anchors || !s.succ || !s.conts {
			t.Errorf("model version %d: caps of occurrences, anchors, successors, continuations reached: %v %v %v %v", ver, s.occ, s.anchors, s.succ, s.conts)
		}
	}
	if s := seen[2]; !s.ep || !s.dict {
		t.Errorf("caps of episode tiles (%d) and dictionary tiles (%d) reached: %v %v", histCap, dictCap, s.ep, s.dict)
	}
	if !fs.cands || !fs.halved || !fs.oneStep || !fs.longRun || !fs.chunk || !fs.dict || !fs.dictBeyond {
		t.Errorf("fast level: %d candidates, halved counts, a one-step match, a run of 9, the chunk lookup's and the dictionary lookup's cap (%d), a dictionary match past it: %v %v %v %v %v %v %v",
			maxCands, lookupCap, fs.cands, fs.halved, fs.oneStep, fs.longRun, fs.chunk, fs.dict, fs.dictBeyond)
	}
	// No vector has a chunk lookup whose first agreeing tile lies past
	// the cap: the cap is reached there, but does not change a match.
	t.Logf("fast level: a chunk lookup's first agreeing tile past the cap: %v", fs.chunkBeyond)
}

// fastSeen records whether the limits of the fast level (4.15) were
// reached: a slot with every candidate, a row of slot event counts
// halved, a match that missed too often to predict, a run in the last
// bucket, and a lookup with more slots of the chunk (tiles of a
// dictionary run) than it compares; and whether a lookup's first
// agreeing tile lay past the cap, where the cap changes the match.
type fastSeen struct {
	cands, halved, oneStep, longRun bool
	chunk, chunkBeyond              bool
	dict, dictBeyond                bool
}

// fastCaps runs a predictor of the fast level over the input of vector v
// as the writer does (slot events, then the escaped slots' coordinates)
// and records in fs the limits reached.
func fastCaps(m *Model, v capsVector, in *capsInput, fs *fastSeen) {
	p := m.NewPredictor().level.(*fastPredictor)
	f := p.fast
	n, M := m.Geom.N(), m.Geom.M
	for _, e := range in.Episodes {
		inChunk := 0
		for st, a := range e.Actions {
			if st == 0 || inChunk == v.Keyframe || v.Flush && slices.Contains(e.FlushBefore, st) {
				p.Reset()
				inChunk = 0
			}
			inChunk++
			p.Begin(a)
			codes := e.Codes[st*n : (st+1)*n]
			for j := 0; j < n; j++ {
				if j%M == 0 {
					if p.SlotTable(j) != nil {
						fs.cands = fs.cands || f.nc == maxCands
						row := &f.counts[f.sctx]
						var before, after uint32
						for _, c := range row {
							before += c
						}
						tile := p.CommitSlot(p.SlotSymbol(codes[j : j+M]))
						for _, c := range row {
							after += c
						}
						fs.halved = fs.halved || after < before
						if tile != nil {
							j += M - 1
							continue
						}
					}
				}
				vj := codes[j]
				p.Predict(j)
				fs.oneStep = fs.oneStep || f.mt != nil && f.mc >= mcOneStep
				fs.longRun = fs.longRun || f.two && runBucket(f.run) == runBuckets-1
				if mm := p.mm; mm >= 1 && !f.noLook && (f.mt == nil || f.mt[mm] != vj) {
					fastLookupCaps(p, append(slices.Clone(codes[j-mm:j]), vj), fs)
				}
				p.Commit(j, vj)
			}
		}
	}
}

// fastLookupCaps records the limits the lookup of the codes have (the
// current slot's so far, at least two) reaches, before the commit that
// makes it.
func fastLookupCaps(p *fastPredictor, have []uint16, fs *fastSeen) {
	f, m, M := p.fast, p.m, p.M
	length, first := 0, -1
	for e := f.head(have[0], have[1], p.K); e != 0; e = f.next[e-1] {
		o := int(e-1)/p.S*p.n + int(e-1)%p.S*M
		if first < 0 && slices.Equal(p.hist.codes[o:o+len(have)], have) {
			first = length
		}
		length++
	}
	fs.chunk = fs.chunk || length > lookupCap && (first < 0 || first >= lookupCap)
	fs.chunkBeyond = fs.chunkBeyond || first >= lookupCap
	if first >= 0 && first < lookupCap || m.dictTotal == 0 {
		return
	}
	for _, pe := range m.dictPairs[have[0]] {
		if pe.v1 != have[1] {
			continue
		}
		dfirst := -1
		for i := range int(pe.hi - pe.lo) {
			pos := m.dictStart[have[0]] + int(pe.lo) + i
			if slices.Equal(m.dictTiles[pos*M:pos*M+len(have)], have) {
				dfirst = i
				break
			}
		}
		fs.dict = fs.dict || pe.hi-pe.lo > lookupCap && (dfirst < 0 || dfirst >= lookupCap)
		fs.dictBeyond = fs.dictBeyond || dfirst >= lookupCap
	}
}
