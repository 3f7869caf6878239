package ctmc

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
)

func readTestCounts(t *testing.T, name string) []int64 {
	t.Helper()
	f, err := os.Open(filepath.Join(testdataDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, _, err := ReadCounts(f)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// bruteKS is poweRlaw's get_distance_statistic written out: both CDFs at
// every integer from x_min to the largest value ≤ xmax.
func bruteKS(x []int64, xmin int64, alpha float64, xmax int64) float64 {
	var tail []int64
	for _, v := range x {
		if v >= xmin && v <= xmax {
			tail = append(tail, v)
		}
	}
	hi := slices.Max(tail)
	occ := make([]float64, hi-xmin+1)
	for _, v := range tail {
		occ[v-xmin]++
	}
	z := hurwitz(alpha, xmin)
	d, cd, cf := 0.0, 0.0, 0.0
	for k := xmin; k <= hi; k++ {
		cd += occ[k-xmin] / float64(len(tail))
		cf += math.Pow(float64(k), -alpha) / z
		d = math.Max(d, math.Abs(cd-cf))
	}
	return d
}

func TestKSMatchesBruteForce(t *testing.T) {
	x := readTestCounts(t, "pl_a2.2_xmin10_n5000.counts")
	s := newSample(slices.Clone(x))
	for _, j := range []int{0, 3, 9, 10, 25, len(s.v) - 3} {
		a := s.plMLE(j)
		for _, xmax := range []int64{100, DefaultXMax} {
			if s.v[j] > xmax {
				continue
			}
			got := s.plKS(j, a, xmax, math.Inf(1))
			want := bruteKS(x, s.v[j], a, xmax)
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("x_min %d xmax %d: KS %v, brute force %v", s.v[j], xmax, got, want)
			}
		}
	}
}

func TestMLEIsMaximum(t *testing.T) {
	s := newSample(readTestCounts(t, "pl_a2.5_n5000.counts"))
	for _, j := range []int{0, 1, 4, 10} {
		a := s.plMLE(j)
		ll := s.plLogLik(j, a)
		for _, d := range []float64{-1e-4, 1e-4} {
			if s.plLogLik(j, a+d) > ll {
				t.Errorf("x_min %d: α̂ %v is not a maximum", s.v[j], a)
			}
		}
	}
}

func TestRecoversKnownExponent(t *testing.T) {
	for _, c := range []struct {
		file  string
		xmin  int64
		alpha float64
	}{
		{"pl_a2.5_n5000.counts", 1, 2.5},
		{"pl_a2.2_xmin10_n5000.counts", 10, 2.2},
	} {
		r, err := Audit(readTestCounts(t, c.file), Options{})
		if err != nil {
			t.Fatal(err)
		}
		pl := r.PowerLaw
		if pl.XMin != c.xmin || math.Abs(pl.Alpha-c.alpha) > 0.05 {
			t.Errorf("%s: x_min %d α̂ %.4f, want %d and %.2f ± 0.05", c.file, pl.XMin, pl.Alpha, c.xmin, c.alpha)
		}
		if cmp := r.Comparisons[3]; cmp.Favors != "power_law" {
			t.Errorf("%s: power law vs exponential favours %s", c.file, cmp.Favors)
		}
	}
}

// poweRlaw 0.70.6 on the same files (scripts/powerlaw_compare.sh): x_min,
// α̂, n_tail and KS distance.
func TestAgreesWithPoweRlaw(t *testing.T) {
	for _, c := range []struct {
		file  string
		xmin  int64
		alpha float64
		ntail int64
		ks    float64
	}{
		{"web-pgdocs_train_pages.counts", 6, 2.7487, 61, 0.04193},
		{"web-pgdocs_test_pages.counts", 4, 2.5630, 42, 0.04951},
		{"pl_a2.5_n5000.counts", 1, 2.5131, 5000, 0.00297},
		{"pl_a2.2_xmin10_n5000.counts", 10, 2.1855, 3497, 0.00847},
	} {
		r, err := Audit(readTestCounts(t, c.file), Options{})
		if err != nil {
			t.Fatal(err)
		}
		pl := r.PowerLaw
		if pl.XMin != c.xmin || math.Abs(pl.Alpha-c.alpha) > 1e-3 || pl.NTail != c.ntail || math.Abs(pl.KS-c.ks) > 1e-5 {
			t.Errorf("%s: got x_min %d α̂ %.4f n_tail %d KS %.5f, poweRlaw %d %.4f %d %.5f",
				c.file, pl.XMin, pl.Alpha, pl.NTail, pl.KS, c.xmin, c.alpha, c.ntail, c.ks)
		}
	}
}

func TestBootstrapDeterministic(t *testing.T) {
	x := readTestCounts(t, "web-pgdocs_train_states.counts")
	var want []byte
	for _, w := range []int{1, 2, 3} {
		for _, procs := range []int{1, 2} {
			old := runtime.GOMAXPROCS(procs)
			calls := 0
			r, err := Audit(x, Options{Sims: 40, Seed: 9, Workers: w, Progress: func(done, total int) {
				calls++
				if done != calls || total != 40 {
					t.Errorf("progress %d/%d at call %d", done, total, calls)
				}
			}})
			runtime.GOMAXPROCS(old)
			if err != nil {
				t.Fatal(err)
			}
			if calls != 40 {
				t.Errorf("%d progress calls, want 40", calls)
			}
			got, _ := json.Marshal(r)
			if want == nil {
				want = got
			} else if string(got) != string(want) {
				t.Errorf("workers %d GOMAXPROCS %d: report differs\n%s\n%s", w, procs, got, want)
			}
		}
	}
	r, _ := Audit(x, Options{Sims: 40, Seed: 10})
	got, _ := json.Marshal(r)
	if string(got) == string(want) {
		t.Error("another seed gives the same report")
	}
}

func TestBootstrapCalibrated(t *testing.T) {
	// Data drawn from a power law should pass; a geometric sample should
	// fail the goodness of fit (its tail is not a power law).
	if testing.Short() {
		t.Skip("bootstrap")
	}
	r, err := Audit(SamplePowerLaw(2000, 1, 2.5, 3), Options{Sims: 100, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Bootstrap.P < 0.10 || !r.Screen.Pass {
		t.Errorf("power-law sample: p_gof %.2f, screen %v", r.Bootstrap.P, r.Screen.Pass)
	}
}

func TestAuditEdgeCases(t *testing.T) {
	if _, err := Audit([]int64{0, 0}, Options{}); err != ErrNoCounts {
		t.Errorf("all zeros: %v", err)
	}
	if _, err := Audit([]int64{1, -2}, Options{}); err == nil {
		t.Error("negative count accepted")
	}
	r, err := Audit([]int64{0, 3, 3, 5}, Options{Sims: 10})
	if err != nil {
		t.Fatal(err)
	}
	if r.PowerLaw != nil || r.Zeros != 1 || r.Screen.Pass {
		t.Errorf("two distinct counts: %+v", r)
	}
	if _, err := Audit([]int64{1, 2}, Options{Sims: -1}); err == nil {
		t.Error("negative sims accepted")
	}
}

func TestSamplerMatchesPMF(t *testing.T) {
	const n = 200000
	x := SamplePowerLaw(n, 2, 2.3, 5)
	p := newPLSampler(2, 2.3)
	counts := map[int64]int{}
	for _, v := range x {
		counts[v]++
	}
	for k := int64(2); k < 8; k++ {
		want := math.Pow(float64(k), -2.3) / p.z * n
		if math.Abs(float64(counts[k])-want) > 5*math.Sqrt(want) {
			t.Errorf("P(X=%d): %d draws, want %.0f", k, counts[k], want)
		}
	}
	// Past the table: the inversion must agree with the survival function.
	big := &plSampler{xmin: 1, alpha: 1.5, z: hurwitz(1.5, 1), cdf: []float64{1 / hurwitz(1.5, 1)}}
	for _, q := range []float64{1e-3, 1e-6} {
		q = 1 - fixedRand(1-q).Float64() // the q the draw sees
		v := big.draw(fixedRand(1 - q))
		if !(big.sf(v+1) <= q && big.sf(v) > q) {
			t.Errorf("draw at u=1-%g gave %d: sf %g, %g", q, v, big.sf(v), big.sf(v+1))
		}
	}
	if reflect.DeepEqual(SamplePowerLaw(10, 1, 2, 1), SamplePowerLaw(10, 1, 2, 2)) {
		t.Error("seeds give the same sample")
	}
}
