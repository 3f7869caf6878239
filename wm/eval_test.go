package wm

import (
	"encoding/binary"
	"math"
	"os"
	"testing"
	"time"
)

func loadRaw(t *testing.T, base string, n int) []Episode {
	codes, err := os.ReadFile(base + ".u8")
	if err != nil {
		t.Skip(err)
	}
	ab, _ := os.ReadFile(base + ".act")
	eb, _ := os.ReadFile(base + ".es")
	T := len(codes) / n
	act := make([]int64, T)
	for i := range act {
		act[i] = int64(binary.LittleEndian.Uint64(ab[8*i:]))
	}
	var starts []int
	for i := 0; i < len(eb); i += 8 {
		starts = append(starts, int(binary.LittleEndian.Uint64(eb[i:])))
	}
	starts = append(starts, T)
	var eps []Episode
	for i := 0; i+1 < len(starts); i++ {
		a, b := starts[i], starts[i+1]
		c := make([]uint16, (b-a)*n)
		for k := range c {
			c[k] = uint16(codes[a*n+k])
		}
		eps = append(eps, Episode{Codes: c, Actions: act[a:b]})
	}
	return eps
}

// TestEvalWeb reports ideal bits/state on the web trajectories when
// WMZIP_EVAL=1 (raw dumps in /tmp made from the shared .npz files).
func TestEvalWeb(t *testing.T) {
	if os.Getenv("WMZIP_EVAL") == "" {
		t.Skip("set WMZIP_EVAL=1")
	}
	g := Geometry{32, 32, 64}
	tr := loadRaw(t, os.Getenv("WMZIP_TRAIN"), g.N())
	te := loadRaw(t, os.Getenv("WMZIP_TEST"), g.N())
	t0 := time.Now()
	m, err := Train(g, tr, TrainOptions{NoDenoise: os.Getenv("NODENOISE") != ""})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("train %v, model %d bytes, %d distinct tiles", time.Since(t0), len(m.raw), len(m.tileRep))
	t.Logf("hits %v fallExp %v", m.clsHits[1], m.fallExp)
	p := m.NewPredictor()
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
			prev := p.hits[p.bucket]
			slotBits := 0.0
			for j := range n {
				cum := p.Table(j)
				v := e.Codes[s*n+j]
				next := 1 << m.Precision
				if int(v)+1 < g.K {
					next = int(cum[v+1])
				}
				b := -math.Log2(float64(next-int(cum[v])) / float64(int(1)<<m.Precision))
				bits += b
				if s := j / g.M; s >= 8 && s < 28 {
					mBits[j%g.M] += b
					if j%g.M >= 8 {
						// modal value of the table
						best, bf := 0, 0
						for u := range g.K {
							nx := 1 << m.Precision
							if u+1 < g.K {
								nx = int(cum[u+1])
							}
							if f := nx - int(cum[u]); f > bf {
								best, bf = u, f
							}
						}
						if int(v) == best {
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
						if p.hits[p.bucket][k] != prev[k] {
							c = k
						}
					}
					prev = p.hits[p.bucket]
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
	t.Logf("hits after %v", p.hits[1])
	t.Logf("new slots by position %v", newSlot)
	t.Logf("eps %v mis %v cn %v", p.eps, p.mis, p.cn)
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
