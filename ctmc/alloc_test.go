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
