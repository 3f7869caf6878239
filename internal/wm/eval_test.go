package wm

import (
	"github.com/wmzip/wmzip/npz"
	"os"
	"testing"
	"time"
)

func loadEpisodes(t *testing.T, path string) (Geometry, []Episode) {
	tr, err := npz.ReadTrajectory(path)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Codes == nil {
		t.Fatalf("%s: no codes", path)
	}
	k := 2
	for _, v := range tr.Codes {
		for k <= int(v) {
			k *= 2
		}
	}
	g := Geometry{S: tr.S, M: tr.M, K: k}
	n := g.N()
	var eps []Episode
	for _, e := range tr.Episodes() {
		eps = append(eps, Episode{Codes: tr.Codes[e[0]*n : e[1]*n], Actions: tr.Actions[e[0]:e[1]]})
	}
	return g, eps
}

// TestEval trains on WMZIP_TRAIN and reports the ideal code length of
// WMZIP_TEST (both trajectory .npz files with codes), with a breakdown by
// the class that explained each slot, by slot and by subspace. It is a
// measurement tool for model work, skipped unless both are set:
//
//	WMZIP_TRAIN=train.npz WMZIP_TEST=test.npz go test ./wm -run Eval -v
func TestEval(t *testing.T) {
	if os.Getenv("WMZIP_TRAIN") == "" || os.Getenv("WMZIP_TEST") == "" {
		t.Skip("set WMZIP_TRAIN and WMZIP_TEST")
	}
	g, tr := loadEpisodes(t, os.Getenv("WMZIP_TRAIN"))
	g2, te := loadEpisodes(t, os.Getenv("WMZIP_TEST"))
	g.K = max(g.K, g2.K)
	if g2.S*g2.M != g.N() {
		t.Fatalf("geometries differ")
	}
	t0 := time.Now()
	m, err := Train(g, tr, TrainOptions{NoDenoise: os.Getenv("NODENOISE") != ""})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("train %v, model %d bytes, %d distinct tiles", time.Since(t0), len(m.raw), len(m.tileRep))
	t.Logf("hits %v fallExp %v", m.clsHits[1], m.fallExp)
	p := m.NewPredictor()
	pf := p.level.(*fullPredictor) // Train's default level
	n := g.N()
	var bits float64
	var byCls [nClasses + 1]float64
	var cntCls [nClasses + 1]int
	states := 0
	newSlot := make([]int, g.S)
	posBits := make([]float64, g.S)
	var s4 [nClasses + 1]int
	var s4b [nClasses + 1]float64
	mBits := make([]float64, g.M)
	var modalN, otherN int
	var modalBits, otherBits float64
	t1 := time.Now()
	for _, e := range te {
		p.Reset()
		for s := range e.Actions {
			p.Begin(e.Actions[s])
			prev := pf.stats.hits[pf.bucket]
			slotBits := 0.0
			for j := range n {
				v := e.Codes[s*n+j]
				b := predict(p, j, v, nil)
				bits += b
				if s := j / g.M; s >= 8 && s < 28 {
					mBits[j%g.M] += b
					if j%g.M >= 8 {
						best := pf.pred.top
						if pf.pred.hit == 0 {
							best = pf.pred.modal
						}
						if v == best {
							modalN++
							modalBits += b
						} else {
							otherN++
							otherBits += b
						}
					}
				}
				slotBits += b
				p.Commit(j, v)
				if j%g.M == g.M-1 {
					c := nClasses
					for k := range nClasses {
						if pf.stats.hits[pf.bucket][k] != prev[k] {
							c = k
						}
					}
					prev = pf.stats.hits[pf.bucket]
					posBits[j/g.M] += slotBits
					if j/g.M == 4 {
						s4[c]++
						s4b[c] += slotBits
					}
					if c == clsNew {
						newSlot[j/g.M]++
					}
					byCls[c] += slotBits
					cntCls[c]++
					slotBits = 0
				}
			}
			states++
		}
	}
	el := time.Since(t1)
	t.Logf("ideal %.1f bits/state over %d states; %.0f ns/coord", bits/float64(states), states, float64(el.Nanoseconds())/float64(states*n))
	t.Logf("hits after %v", pf.stats.hits[1])
	t.Logf("new slots by position %v", newSlot)
	t.Logf("eps %v mis %v cn %v", pf.stats.eps, pf.stats.mis, pf.stats.cn)
	for i := range posBits {
		posBits[i] = float64(int(posBits[i]/float64(states)*10)) / 10
	}
	t.Logf("bits/state by slot %v", posBits)
	for c := range s4 {
		t.Logf("slot 4 class %d: %d slots %.1f bits", c, s4[c], s4b[c]/float64(max(1, s4[c])))
	}
	for i := range mBits {
		mBits[i] = float64(int(mBits[i]/float64(states*20)*100)) / 100
	}
	t.Logf("bits/coord by subspace (slots 8-27) %v", mBits)
	t.Logf("steady state: modal %d coords %.4f bits each; other %d coords (%.3f%%) %.2f bits each", modalN, modalBits/float64(modalN), otherN, 100*float64(otherN)/float64(modalN+otherN), otherBits/float64(max(otherN, 1)))
	for c := range byCls {
		t.Logf("class %d: %d slots, %.1f bits/slot, %.1f bits/state", c, cntCls[c], byCls[c]/float64(max(1, cntCls[c])), byCls[c]/float64(states))
	}
}
