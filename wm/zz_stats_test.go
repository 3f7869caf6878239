package wm

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/wmzip/wmzip/npz"
)

func zzEnv(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

func TestZZStats(t *testing.T) {
	mb, err := os.ReadFile(zzEnv("ZZM", "/tmp/w/m.wmm"))
	if err != nil {
		t.Skip(err)
	}
	m, err := UnmarshalModel(mb)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := npz.ReadTrajectory(zzEnv("ZZT", "/work/shared/data/web-pgdocs/test_codes.npz"))
	if err != nil {
		t.Fatal(err)
	}
	n := m.Geom.N()
	p := m.NewPredictor()
	var ideal float64
	var coords, bin, binHit, groups int
	var weakG int
	defer func() { fmt.Println("weak with groups", weakG) }()
	var tiles, fullHit, fullBin, weakCoords, virtC int
	M := m.Geom.M
	t0 := time.Now()
	for _, ep := range tr.Episodes() {
		p.Reset()
		for t := ep[0]; t < ep[1]; t++ {
			p.Begin(tr.Actions[t])
			st := tr.Codes[t*n : (t+1)*n]
			allHit, allBin := true, true
			for j := 0; j < n; j++ {
				if j%M == 0 {
					allHit, allBin = true, true
				}
				ideal += predict(p, j, st[j], nil)
				if j%M < 2 {
				} else if p.hit == 0 {
					allBin = false
					allHit = false
					if p.virt {
						virtC++
					} else {
						weakCoords++
						if len(p.groups) > 0 {
							weakG++
						}
					}
				} else if j%M >= 2 && st[j] != p.top {
					allHit = false
				}
				if j%M == M-1 {
					tiles++
					if allHit {
						fullHit++
					}
					if allBin {
						fullBin++
					}
				}
				groups += len(p.groups)
				if p.hit > 0 {
					bin++
					if st[j] == p.top {
						binHit++
					}
				}
				coords++
				p.Commit(j, st[j])
			}
		}
	}
	el := time.Since(t0)
	states := coords / n
	fmt.Printf("tiles %d fullHit %.3f fullBin %.3f weak %.3f virt %.3f\n", tiles, float64(fullHit)/float64(tiles), float64(fullBin)/float64(tiles), float64(weakCoords)/float64(coords), float64(virtC)/float64(coords))
	fmt.Printf("ideal %.1f bits/state; binary %.3f (hit %.4f); groups/coord %.2f; %.1f µs/state\n", ideal/float64(states), float64(bin)/float64(coords), float64(binHit)/float64(bin), float64(groups)/float64(coords), float64(el.Microseconds())/float64(states))
}

func BenchmarkZZPredict(b *testing.B) {
	mb, err := os.ReadFile(zzEnv("ZZM", "/tmp/w/m.wmm"))
	if err != nil {
		b.Skip(err)
	}
	m, _ := UnmarshalModel(mb)
	tr, _ := npz.ReadTrajectory(zzEnv("ZZT", "/work/shared/data/web-pgdocs/test_codes.npz"))
	n := m.Geom.N()
	p := m.NewPredictor()
	b.ResetTimer()
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	for b.Loop() {
		for _, ep := range tr.Episodes() {
			p.Reset()
			for t := ep[0]; t < ep[1]; t++ {
				p.Begin(tr.Actions[t])
				st := tr.Codes[t*n : (t+1)*n]
				for j := 0; j < n; j++ {
					top, hit := p.Predict(j)
					if hit == 0 || top != st[j] {
						p.Table()
					}
					p.Commit(j, st[j])
				}
			}
		}
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := (ru1.Utime.Sec-ru0.Utime.Sec)*1e9 + (ru1.Utime.Usec-ru0.Utime.Usec)*1e3
	b.ReportMetric(float64(cpu)/float64(b.N*tr.T), "cpu-ns/state")
}

func BenchmarkZZMixRow(b *testing.B) {
	mb, err := os.ReadFile(zzEnv("ZZM", "/tmp/w/m.wmm"))
	if err != nil {
		b.Skip(err)
	}
	m, _ := UnmarshalModel(mb)
	K := m.Geom.K
	cum := make([]uint16, K)
	w := make([]uint32, K)
	i := 0
	for b.Loop() {
		m.mixRow(i%(m.Geom.M*m.fallCtx), (i*7)%(m.Geom.M*m.fall2Ctx), cum, w)
		i++
	}
}

func BenchmarkZZLoad(b *testing.B) {
	mb, err := os.ReadFile(zzEnv("ZZM", "/tmp/w/m.wmm"))
	if err != nil {
		b.Skip(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := UnmarshalModel(mb); err != nil {
			b.Fatal(err)
		}
	}
}

func TestZZPrec(t *testing.T) {
	mb, _ := os.ReadFile(zzEnv("ZZM", "/tmp/w/m.wmm"))
	m, _ := UnmarshalModel(mb)
	fmt.Println("prec", m.Precision, "fallCtx", m.fallCtx, "fall2Ctx", m.fall2Ctx, "K", m.Geom.K)
}
