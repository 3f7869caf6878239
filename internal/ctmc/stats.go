package ctmc

import (
	"math"
	"slices"
)

// Concentration summarises how unevenly accesses fall on items; the
// statistics of the paper's Tables 7–8 and Figure 6.
type Concentration struct {
	// Items is the number of items with a positive count; Accesses their sum.
	Items    int   `json:"items"`
	Accesses int64 `json:"accesses"`
	// Gini is the Gini coefficient of the counts: Σ(2i−n−1)x_(i) / (n Σx)
	// over the ascending counts, 0 for equal counts, → 1 for one item.
	Gini float64 `json:"gini"`
	// Top10Items is ⌈n/10⌉, the size of the most-accessed group.
	Top10Items int `json:"top10_items"`
	// Top10Share is the fraction of all accesses taken by those items.
	Top10Share float64 `json:"top10_share"`
	// SigmaTop10 is the population standard deviation (divisor n, numpy's
	// default) of the counts of the top-10% items. The paper does not state
	// its divisor or whether counts were normalised.
	SigmaTop10 float64 `json:"sigma_top10"`
	// SigmaTop10Pct is the same for the items' shares in percent of all
	// accesses, a normalisation under which graph sizes compare.
	SigmaTop10Pct float64 `json:"sigma_top10_pct"`
	Max           int64   `json:"max"`
	Median        float64 `json:"median"`
	Mean          float64 `json:"mean"`
	// MaxMedian is Max / Median.
	MaxMedian float64 `json:"max_median"`
	// Skew is the Fisher–Pearson moment coefficient m3 / m2^{3/2}
	// (population moments, scipy.stats.skew's default).
	Skew float64 `json:"skew"`
}

// Concentrate computes the concentration statistics of positive counts.
func Concentrate(counts []int64) Concentration {
	n := len(counts)
	c := Concentration{Items: n}
	if n == 0 {
		return c
	}
	x := slices.Clone(counts)
	slices.Sort(x)
	var sum, wsum float64
	for i, v := range x {
		sum += float64(v)
		wsum += float64(2*(i+1)-n-1) * float64(v)
		c.Accesses += v
	}
	c.Mean = sum / float64(n)
	c.Gini = wsum / (float64(n) * sum)
	c.Max = x[n-1]
	if n%2 == 1 {
		c.Median = float64(x[n/2])
	} else {
		c.Median = (float64(x[n/2-1]) + float64(x[n/2])) / 2
	}
	c.MaxMedian = float64(c.Max) / c.Median
	var m2, m3 float64
	for _, v := range x {
		d := float64(v) - c.Mean
		m2 += d * d
		m3 += d * d * d
	}
	m2 /= float64(n)
	m3 /= float64(n)
	if m2 > 0 {
		c.Skew = m3 / math.Pow(m2, 1.5)
	}
	k := (n + 9) / 10
	top := x[n-k:]
	var tsum float64
	for _, v := range top {
		tsum += float64(v)
	}
	c.Top10Items = k
	c.Top10Share = tsum / sum
	tm := tsum / float64(k)
	var tv float64
	for _, v := range top {
		d := float64(v) - tm
		tv += d * d
	}
	c.SigmaTop10 = math.Sqrt(tv / float64(k))
	c.SigmaTop10Pct = c.SigmaTop10 / sum * 100
	return c
}

// Comparison is a Vuong likelihood-ratio test between two tails fitted on
// the same observations x ≥ x_min (CSN 2009, §5; poweRlaw's
// compare_distributions).
type Comparison struct {
	A string `json:"a"`
	B string `json:"b"`
	// LogLikRatio is R = Σ (ln p_A(x_i) − ln p_B(x_i)).
	LogLikRatio float64 `json:"loglik_ratio"`
	// Statistic is the normalised ratio √n · mean / sd of the pointwise
	// differences (sample sd, divisor n−1); positive favours A.
	Statistic float64 `json:"statistic"`
	// P is the two-sided p-value of Statistic under N(0, 1).
	P float64 `json:"p"`
	// NestedP, for a model nested in the other (power law in truncated power
	// law), is P(χ²₁ > 2|R|): the test CSN use for nested pairs.
	NestedP *float64 `json:"nested_p,omitempty"`
	// Favors is A or B when P < 0.10, else "neither".
	Favors string `json:"favors"`
	// Reason, if set, says why the test cannot separate A and B; then a
	// tie has Statistic 0, P 1 and Favors "neither".
	Reason string `json:"reason,omitempty"`
}

// tie marks a comparison as undecided for the given reason.
func (c *Comparison) tie(reason string) {
	c.Statistic, c.P, c.Favors, c.Reason = 0, 1, "neither", reason
}

func vuong(a, b string, la, lb func(x int64) float64, t *tailStats) Comparison {
	var s, s2 float64
	for i, x := range t.vals {
		d := la(x) - lb(x)
		w := float64(t.freq[i])
		s += w * d
		s2 += w * d * d
	}
	n := t.n
	c := Comparison{A: a, B: b, LogLikRatio: s, Favors: "neither"}
	mean := s / n
	v := (s2 - n*mean*mean) / (n - 1)
	// Identical fits (a truncated power law at λ = 0) differ only by
	// rounding: no evidence either way.
	if n < 2 || !(v > 1e-12*(s2/n)) {
		c.P = 1
		return c
	}
	c.Statistic = math.Sqrt(n) * mean / math.Sqrt(v)
	c.P = math.Erfc(math.Abs(c.Statistic) / math.Sqrt2)
	if c.P < 0.10 {
		if c.Statistic > 0 {
			c.Favors = a
		} else {
			c.Favors = b
		}
	}
	return c
}
