package ctmc

import (
	"errors"
	"reflect"
	"testing"
)

func TestAllocate(t *testing.T) {
	for _, c := range []struct {
		name   string
		ranks  []int
		budget int64
		tau    float64
		opts   []AllocOption
		want   []int64
	}{
		{"uniform exact", []int{1, 2, 3, 4}, 8, 0, nil, []int64{2, 2, 2, 2}},
		{"uniform remainder to lower ranks", []int{3, 1, 4, 2}, 10, 0, nil, []int64{2, 3, 2, 3}},
		// τ=1, weights 1, 1/2, 1/3 (sum 11/6): quotas 60/11·{1, 1/2, 1/3} of 10 = 5.45, 2.73, 1.82.
		{"harmonic largest remainder", []int{1, 2, 3}, 10, 1, nil, []int64{5, 3, 2}},
		// τ=2, quotas 7.02 1.76 0.78 0.44: rank 4 is floored, then rank 3
		// (9·(1/9)/1.361 = 0.82); 8 units over 1, 1/4 give 6.4, 1.6.
		{"floor lifts the tail", []int{1, 2, 3, 4}, 10, 2, nil, []int64{6, 2, 1, 1}},
		{"floor 0 allows zero", []int{1, 2, 3, 4}, 10, 2, []AllocOption{Floor(0)}, []int64{7, 2, 1, 0}},
		{"ties share equally", []int{1, 1, 3}, 9, 1, nil, []int64{4, 4, 1}},
		{"tie on remainder goes to the earlier item", []int{2, 2}, 5, 1, nil, []int64{3, 2}},
		{"budget equals floors", []int{1, 2, 3}, 3, 1, nil, []int64{1, 1, 1}},
		{"floor 2", []int{1, 2, 3, 4, 5}, 20, 1.5, []AllocOption{Floor(2)}, []int64{10, 4, 2, 2, 2}},
		{"empty", nil, 0, 1, nil, []int64{}},
	} {
		got, err := Allocate(c.ranks, c.budget, c.tau, c.opts...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAllocateSumsExactly(t *testing.T) {
	for _, n := range []int{1, 7, 100, 1000} {
		ranks := make([]int, n)
		for i := range ranks {
			ranks[i] = n - i
		}
		for _, tau := range []float64{0, 0.5, 1, 1.7, 3} {
			for _, budget := range []int64{int64(n), int64(n) + 1, 3*int64(n) + 17, 1 << 40} {
				p, err := Plan(ranks, budget, tau)
				if err != nil {
					t.Fatal(err)
				}
				var sum int64
				for i, b := range p.Budgets {
					sum += b
					if b < 1 {
						t.Fatalf("n %d τ %v: item %d got %d", n, tau, i, b)
					}
					// Monotone in rank.
					if i > 0 && ranks[i] > ranks[i-1] && b > p.Budgets[i-1] {
						t.Fatalf("n %d τ %v: rank %d gets more than rank %d", n, tau, ranks[i], ranks[i-1])
					}
				}
				if sum != budget || p.CoreUnits+p.TailUnits != budget || p.CoreItems+p.TailItems != n {
					t.Fatalf("n %d τ %v budget %d: sum %d, plan %+v", n, tau, budget, sum, p)
				}
			}
		}
	}
}

func TestPlanCore(t *testing.T) {
	ranks := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	// τ=0: 80% of the weight is the top 8.
	p, _ := Plan(ranks, 100, 0)
	if p.CoreRank != 8 || p.CoreItems != 8 || p.CoreUnits != 80 {
		t.Errorf("τ=0: %+v", p)
	}
	// τ=1: H_10 = 2.929; top 4 carry 2.083 (71%), top 5 2.283 (78%), top 6 2.45 (84%).
	p, _ = Plan(ranks, 100, 1)
	if p.CoreRank != 6 {
		t.Errorf("τ=1: core rank %d, want 6", p.CoreRank)
	}
	p, _ = Plan(ranks, 100, 1, CoreSize(3))
	if p.CoreRank != 3 || p.CoreItems != 3 || p.TailItems != 7 {
		t.Errorf("CoreSize(3): %+v", p)
	}
	p, _ = Plan(ranks, 100, 1, CoreMass(0.5))
	if p.CoreRank != 2 { // 1 + 1/2 = 1.5 ≥ 2.929/2
		t.Errorf("CoreMass(0.5): core rank %d", p.CoreRank)
	}
}

func TestFlatTail(t *testing.T) {
	ranks := []int{1, 2, 3, 4, 5}
	// k = 2: weights 1, 1/2, 1/2, 1/2, 1/2 (sum 3).
	p, err := Plan(ranks, 30, 1, CoreSize(2), FlatTail())
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{10, 5, 5, 5, 5}; !reflect.DeepEqual(p.Budgets, want) {
		t.Errorf("CoreSize(2): budgets %v, want %v", p.Budgets, want)
	}
	if p.CoreRank != 2 || p.CoreItems != 2 || p.CoreUnits != 15 || p.TailUnits != 15 {
		t.Errorf("CoreSize(2): %+v", p)
	}
	// Without FlatTail the same cut leaves the weights r^-τ.
	if got, _ := Allocate(ranks, 137, 1, CoreSize(2)); !reflect.DeepEqual(got, mustAllocate(t, ranks, 137, 1)) {
		t.Errorf("the core split changed the budgets without FlatTail: %v", got)
	}
	// Default CoreMass on r^-1 over 10 ranks cuts at 6 (TestPlanCore): the
	// weights become 1, 1/2, …, 1/6 and 1/6 for ranks 7–10.
	ten := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	flat := []int{1, 2, 3, 4, 5, 6, 6, 6, 6, 6}
	if got, want := mustAllocate(t, ten, 1000, 1, FlatTail()), mustAllocate(t, flat, 1000, 1); !reflect.DeepEqual(got, want) {
		t.Errorf("default core: got %v, want %v", got, want)
	}
	// τ = 0 is uniform either way.
	if got, want := mustAllocate(t, ten, 1000, 0, CoreSize(3), FlatTail()), mustAllocate(t, ten, 1000, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("τ=0: got %v, want %v", got, want)
	}
	// Permuted ranks get the permuted budgets (no ties on remainders here).
	perm := []int{4, 1, 5, 2, 3}
	got := mustAllocate(t, perm, 30, 1, CoreSize(2), FlatTail())
	if want := []int64{5, 10, 5, 5, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("permuted: got %v, want %v", got, want)
	}
}

func mustAllocate(t *testing.T, ranks []int, budget int64, tau float64, opts ...AllocOption) []int64 {
	t.Helper()
	b, err := Allocate(ranks, budget, tau, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCoreRankByCounts(t *testing.T) {
	counts := []int64{1, 10, 0, 3, 5, 1} // ranks 4, 1, 6, 3, 2, 4; total 20
	for _, c := range []struct {
		q    float64
		want int
	}{
		{0.5, 1},  // 10 = 50%
		{0.8, 3},  // 10+5 = 75%, +3 = 90%
		{0.9, 3},  // exactly 90%
		{0.95, 4}, // the two 1s join together: 100%
		{1, 4},    // the never-accessed item is not needed
	} {
		got, err := CoreRankByCounts(counts, c.q)
		if err != nil || got != c.want {
			t.Errorf("q %v: got %d, %v; want %d", c.q, got, err, c.want)
		}
	}
	// The cut is a rank of Ranks(counts): the core is the items of rank ≤ k.
	k, _ := CoreRankByCounts(counts, 0.95)
	var core int64
	for i, r := range Ranks(counts) {
		if r <= k {
			core += counts[i]
		}
	}
	if core != 20 {
		t.Errorf("core of rank ≤ %d carries %d of 20", k, core)
	}
	if k, err := CoreRankByCounts([]int64{0, 0, 0}, 0.8); k != 1 || err != nil {
		t.Errorf("no accesses: %d, %v", k, err)
	}
	for _, bad := range []struct {
		counts []int64
		q      float64
	}{{[]int64{1}, 0}, {[]int64{1}, 1.5}, {[]int64{1, -1}, 0.8}, {nil, 0.8}} {
		if _, err := CoreRankByCounts(bad.counts, bad.q); err == nil {
			t.Errorf("%v, q %v accepted", bad.counts, bad.q)
		}
	}
}

func TestAllocateErrors(t *testing.T) {
	if _, err := Allocate([]int{1, 2, 3}, 2, 1); !errors.Is(err, ErrBudget) {
		t.Errorf("budget below floors: %v", err)
	}
	if _, err := Allocate([]int{1, 0}, 10, 1); !errors.Is(err, ErrRank) {
		t.Errorf("rank 0: %v", err)
	}
	if _, err := Allocate([]int{1}, 10, -1); !errors.Is(err, ErrTau) {
		t.Errorf("negative tau: %v", err)
	}
	for _, o := range []AllocOption{CoreSize(0), CoreMass(0), CoreMass(1.5), Floor(-1)} {
		if _, err := Allocate([]int{1}, 10, 1, o); err == nil {
			t.Error("bad option accepted")
		}
	}
	if _, err := Allocate([]int{1}, -1, 1, Floor(0)); err == nil {
		t.Error("negative budget accepted")
	}
}

func TestRanks(t *testing.T) {
	if got := Ranks([]int64{5, 9, 5, 1}); !reflect.DeepEqual(got, []int{2, 1, 2, 4}) {
		t.Errorf("Ranks = %v", got)
	}
}
