package ctmc

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Allocation errors.
var (
	ErrBudget = errors.New("ctmc: budget below the floor of every item")
	ErrRank   = errors.New("ctmc: rank below 1")
	ErrTau    = errors.New("ctmc: tau must be finite and ≥ 0")
)

// DefaultCoreMass is the share of the total weight Σ r^-τ that the core
// holds unless CoreSize or CoreMass says otherwise.
const DefaultCoreMass = 0.8

type allocConfig struct {
	coreSize int     // > 0: explicit rank cut
	coreMass float64 // used when coreSize == 0
	floor    int64
	flatTail bool
}

// AllocOption configures Allocate and Plan.
type AllocOption func(*allocConfig) error

// CoreSize sets the core to the items of rank ≤ k (k ≥ 1).
func CoreSize(k int) AllocOption {
	return func(c *allocConfig) error {
		if k < 1 {
			return fmt.Errorf("ctmc: core size %d < 1", k)
		}
		c.coreSize = k
		return nil
	}
}

// CoreMass sets the core to the smallest rank cut k whose items carry at
// least q of the total weight Σ r^-τ (0 < q ≤ 1).
func CoreMass(q float64) AllocOption {
	return func(c *allocConfig) error {
		if !(q > 0 && q <= 1) {
			return fmt.Errorf("ctmc: core mass %v not in (0, 1]", q)
		}
		c.coreMass, c.coreSize = q, 0
		return nil
	}
}

// FlatTail gives every tail item the core boundary's weight: with the rank
// cut k of the core/tail split (CoreSize, or CoreMass on the weights
// r^-τ), item weights become w = min(r, k)^-τ. The core stays ranked by
// r^-τ; the tail is one flat group, not differentiated by ranks that, among
// rarely accessed items, are noise (counts of 1, 2, 3 are statistically
// indistinguishable). Pair it with CoreSize(CoreRankByCounts(counts, q))
// to cut the core by its share of the accesses.
func FlatTail() AllocOption {
	return func(c *allocConfig) error {
		c.flatTail = true
		return nil
	}
}

// Floor sets the least number of units any item receives (default 1, so no
// tail item is left without a summary). Floor(0) allows zero budgets.
func Floor(units int64) AllocOption {
	return func(c *allocConfig) error {
		if units < 0 {
			return fmt.Errorf("ctmc: floor %d < 0", units)
		}
		c.floor = units
		return nil
	}
}

// AllocPlan is an allocation and its core/tail split.
type AllocPlan struct {
	// Budgets[i] is the number of units of item i; they sum to the budget.
	Budgets []int64
	// CoreRank is the rank cut: items of rank ≤ CoreRank form the core.
	CoreRank int
	// CoreItems and TailItems count the items on each side.
	CoreItems, TailItems int
	// CoreUnits and TailUnits split the budget between the two sides.
	CoreUnits, TailUnits int64
	// Floored counts the items held at the floor (all of them in the tail
	// unless the budget barely covers the floors).
	Floored int
}

// Allocate splits an integer budget over items by rank, b(r; τ) ∝ r^-τ
// (rank 1 is the most accessed; equal ranks get equal shares), with the
// floor and core/tail split of Plan. It returns the per-item budgets.
func Allocate(ranks []int, budget int64, tau float64, opts ...AllocOption) ([]int64, error) {
	p, err := Plan(ranks, budget, tau, opts...)
	if err != nil {
		return nil, err
	}
	return p.Budgets, nil
}

// Plan computes an allocation:
//
//  1. Each item has weight w = r^-τ; τ = 0 is uniform. With FlatTail the
//     weight is min(r, k)^-τ, k the core's rank cut (step 4, found on the
//     weights r^-τ when CoreMass sets it).
//  2. Floor: items whose proportional share falls below the floor are held
//     at the floor, and the rest of the budget is shared in proportion to
//     weight among the others (water-filling from the lowest weight up;
//     the held items are the tail's end).
//  3. Integers: each free item gets the integer part of its share; the
//     units left go one each to the largest fractional parts, ties to the
//     lower rank, then to the earlier item (largest remainder). The budgets
//     sum exactly to budget.
//  4. Core/tail split: the core is the items of rank ≤ k, with k set by
//     CoreSize, or else the smallest k whose items carry CoreMass (default
//     DefaultCoreMass) of the total weight r^-τ. The split is reported;
//     unless FlatTail is set the budgets do not depend on it: it marks
//     where a consumer stores items in full (core) or summarised (tail).
//
// Weights use float64 pow: results are reproducible on one platform but
// are not part of any bit-exact contract.
func Plan(ranks []int, budget int64, tau float64, opts ...AllocOption) (*AllocPlan, error) {
	cfg := allocConfig{coreMass: DefaultCoreMass, floor: 1}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if math.IsNaN(tau) || math.IsInf(tau, 0) || tau < 0 {
		return nil, ErrTau
	}
	if budget < 0 {
		return nil, fmt.Errorf("ctmc: negative budget %d", budget)
	}
	n := len(ranks)
	for i, r := range ranks {
		if r < 1 {
			return nil, fmt.Errorf("%w: ranks[%d] = %d", ErrRank, i, r)
		}
	}
	if n > 0 && cfg.floor > 0 && budget/int64(n) < cfg.floor {
		return nil, fmt.Errorf("%w: %d items × floor %d > budget %d", ErrBudget, n, cfg.floor, budget)
	}
	p := &AllocPlan{Budgets: make([]int64, n)}
	if n == 0 {
		if budget != 0 {
			return nil, errors.New("ctmc: budget for no items")
		}
		return p, nil
	}
	w := make([]float64, n)
	for i, r := range ranks {
		w[i] = math.Pow(float64(r), -tau)
	}
	// Order by rank, then index: ascending order is descending weight.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return ranks[a] - ranks[b] })

	// Core/tail split by rank cut, on the weights r^-τ.
	cut := cfg.coreSize
	if cut == 0 {
		var total, acc float64
		for _, i := range order {
			total += w[i]
		}
		for k := 0; k < n; {
			r := ranks[order[k]]
			for k < n && ranks[order[k]] == r {
				acc += w[order[k]]
				k++
			}
			cut = r
			if acc >= cfg.coreMass*total*(1-1e-12) {
				break
			}
		}
	}
	if cfg.flatTail {
		for i, r := range ranks {
			w[i] = math.Pow(float64(min(r, cut)), -tau)
		}
	}

	// Water-filling from the lowest weight.
	var wsum float64
	for _, i := range order {
		wsum += w[i]
	}
	rest := budget
	free := n
	for free > 0 {
		i := order[free-1]
		if float64(rest)*w[i]/wsum >= float64(cfg.floor) {
			break
		}
		p.Budgets[i] = cfg.floor
		rest -= cfg.floor
		wsum -= w[i]
		free--
	}
	p.Floored = n - free
	if free > 0 {
		frac := make([]float64, free)
		left := rest
		for k, i := range order[:free] {
			q := float64(rest) * w[i] / wsum
			b := int64(math.Floor(q))
			if b < cfg.floor {
				b = cfg.floor
			}
			p.Budgets[i] = b
			frac[k] = q - float64(b)
			left -= b
		}
		// Largest remainder; rounding can also leave a small deficit.
		idx := make([]int, free)
		for k := range idx {
			idx[k] = k
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case frac[a] > frac[b]:
				return -1
			case frac[a] < frac[b]:
				return 1
			}
			return 0 // stable: order[:free] is already by rank, then index
		})
		for k := 0; left > 0; k = (k + 1) % free {
			p.Budgets[order[idx[k]]]++
			left--
		}
		for k := free - 1; left < 0; k = (k - 1 + free) % free {
			if i := order[idx[k]]; p.Budgets[i] > cfg.floor {
				p.Budgets[i]--
				left++
			}
		}
	}

	p.CoreRank = cut
	for i, r := range ranks {
		if r <= cut {
			p.CoreItems++
			p.CoreUnits += p.Budgets[i]
		} else {
			p.TailItems++
			p.TailUnits += p.Budgets[i]
		}
	}
	return p, nil
}

// CoreRankByCounts returns the rank cut of the core by access mass: the
// smallest k such that the items of rank ≤ k (ranks as Ranks(counts))
// carry at least q of Σ counts (0 < q ≤ 1). Items of equal count share a
// rank, so they join the core together. With no accesses every item ranks
// 1 and k = 1. Use it as CoreSize(k), e.g. with FlatTail.
func CoreRankByCounts(counts []int64, q float64) (int, error) {
	if !(q > 0 && q <= 1) {
		return 0, fmt.Errorf("ctmc: core mass %v not in (0, 1]", q)
	}
	var total int64
	for i, c := range counts {
		if c < 0 {
			return 0, fmt.Errorf("ctmc: counts[%d] = %d < 0", i, c)
		}
		total += c
	}
	if len(counts) == 0 {
		return 0, errors.New("ctmc: no counts")
	}
	sorted := slices.Clone(counts)
	slices.SortFunc(sorted, func(a, b int64) int { return sign(b - a) })
	var acc int64
	cut := 1
	for k := 0; k < len(sorted); {
		c := sorted[k]
		cut = k + 1
		for k < len(sorted) && sorted[k] == c {
			acc += c
			k++
		}
		if float64(acc) >= q*float64(total)*(1-1e-12) {
			break
		}
	}
	return cut, nil
}

// Ranks returns the 1-based rank of each count, most accessed first; equal
// counts share the smallest rank of their group (competition ranking).
func Ranks(counts []int64) []int {
	order := make([]int, len(counts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return sign(counts[b] - counts[a]) })
	ranks := make([]int, len(counts))
	for k, i := range order {
		if k > 0 && counts[i] == counts[order[k-1]] {
			ranks[i] = ranks[order[k-1]]
		} else {
			ranks[i] = k + 1
		}
	}
	return ranks
}
