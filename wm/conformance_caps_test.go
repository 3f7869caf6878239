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
// the cap's number was kept.

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
	dir := filepath.Join("..", "testdata", "conformance")
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
	for _, v := range vs {
		if v.Lambda != 0xFFFFFFFF || len(v.Levels) > 0 {
			continue // lossy: the predictor sees the reconstruction, not the input
		}
		raw := read(v.Model, nil)
		m, err := UnmarshalModel(raw)
		if err != nil {
			t.Fatal(err)
		}
		if m.Level() != LevelDefault {
			continue // the caps are those of the default level's hypotheses
		}
		var in capsInput
		read(v.Input, &in)
		s := seen[int(raw[4])]
		for id, c := range m.tileCount {
			s.occ = s.occ || int(c) > m.occCap && len(m.tileOcc[id]) == m.occCap
		}
		p := m.NewPredictor()
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
}
