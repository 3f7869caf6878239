package ctmc

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestConcentrate(t *testing.T) {
	c := Concentrate([]int64{4, 4, 4, 4})
	if c.Gini != 0 || c.Skew != 0 || c.MaxMedian != 1 || c.Top10Items != 1 || !near(c.Top10Share, 0.25) {
		t.Errorf("equal counts: %+v", c)
	}
	// Ten counts 1..10: Gini = Σ(2i−11)i / (10·55) = 330/550.
	x := []int64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	c = Concentrate(x)
	if !near(c.Gini, 0.3) || c.Top10Items != 1 || !near(c.Top10Share, 10.0/55) || c.Median != 5.5 || !near(c.MaxMedian, 10/5.5) || !near(c.Skew, 0) {
		t.Errorf("1..10: %+v", c)
	}
	// 21 counts: top group is ⌈2.1⌉ = 3 items {20, 30, 40}; population sd
	// √(200/3); skew of {1×18, 20, 30, 40} by the moment formula.
	y := []int64{40, 30, 20}
	for i := 0; i < 18; i++ {
		y = append(y, 1)
	}
	c = Concentrate(y)
	if c.Top10Items != 3 || !near(c.SigmaTop10, math.Sqrt(200.0/3)) || !near(c.Top10Share, 90.0/108) || c.Median != 1 {
		t.Errorf("21 counts: %+v", c)
	}
	mean := 108.0 / 21
	var m2, m3 float64
	for _, v := range y {
		d := float64(v) - mean
		m2 += d * d / 21
		m3 += d * d * d / 21
	}
	if !near(c.Skew, m3/math.Pow(m2, 1.5)) {
		t.Errorf("skew %v", c.Skew)
	}
}

func TestVuongSymmetric(t *testing.T) {
	s := newSample(readTestCounts(t, "pl_a2.5_n5000.counts"))
	tl := s.tail(0)
	pa := func(x int64) float64 { return -2.5*math.Log(float64(x)) - math.Log(hurwitz(2.5, 1)) }
	pb := func(x int64) float64 { return math.Log(0.5) - math.Log(2)*float64(x-1) }
	ab, ba := vuong("a", "b", pa, pb, &tl), vuong("b", "a", pb, pa, &tl)
	if !near(ab.Statistic, -ba.Statistic) || !near(ab.P, ba.P) || ab.Favors != "a" || ba.Favors != "a" {
		t.Errorf("%+v vs %+v", ab, ba)
	}
	same := vuong("a", "a", pa, pa, &tl)
	if same.P != 1 || same.Statistic != 0 || same.Favors != "neither" {
		t.Errorf("identical models: %+v", same)
	}
}
