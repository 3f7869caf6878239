// Package ctmc audits memory-access traces for heavy tails and allocates a
// storage budget by access rank, after "Heavy-Tailed Memory Traces in
// Long-Horizon Language Agents" (Song and Cai, 2026), whose Core-Tail Memory
// Controller (CTMC) gives the package its name.
//
// # Inputs
//
// An access trace is a UTF-8 text file of tab-separated values. Its first
// line is the header
//
//	episode<TAB>step
//
// and every further line is one access to the memory item stored at that
// (episode, step): two non-negative decimal integers separated by one tab.
// Lines may end in LF or CRLF; blank lines and lines whose first non-blank
// character is '#' are ignored anywhere. The access count of an item is the
// number of lines naming it; items never accessed do not appear. Example:
//
//	episode	step
//	0	3
//	0	3
//	2	17
//
// gives counts 2 for item 0/3 and 1 for item 2/17 (ReadTrace, CountAccesses).
// TraceWriter writes this format (the header, then one line per access; safe
// for concurrent use); its Access method plugs into format.WithAccessLog, so
// a .wmz reader records the trace of what it reads. `wmzip decode
// --access-log FILE` appends to such a trace, and `wmzip encode --access
// FILE --budget B` stores the states it names by access rank (accesses to
// states the file does not have are counted and ignored; states never
// accessed count 0).
//
// A counts file holds one non-negative integer per line, with the same
// blank-line and comment rules; zeros are dropped and their number reported
// (ReadCounts). A web-browsing step log (the web-pgdocs *_steps.jsonl files:
// one JSON object per line with episode, step, page and scroll_y) gives
// visit counts per page or per (page, scroll_y) state (ReadStepVisits).
// Malformed lines are reported as *ParseError with their line number.
//
// # Audit
//
// Audit computes the concentration statistics of the paper (Gini, top-10%
// share, σ of the top-10% counts, max/median, skew) and fits the tail by the
// method of Clauset, Shalizi and Newman (SIAM Review 51, 2009) for discrete
// data, following R's poweRlaw (displ, estimate_xmin, bootstrap_p):
//
//   - power law p(x) = x^-α / ζ(α, x_min): for every candidate x_min (each
//     distinct count up to XMax, except the two largest) α̂ maximises the
//     likelihood, found as the root of E_α[ln X] = mean ln x with the
//     Hurwitz zeta function and its derivative; x_min minimises the KS
//     distance over the integers x_min..max. The KS scan of a candidate
//     stops once it exceeds the best distance so far, which leaves the
//     result unchanged and makes the search, and so the bootstrap, fast.
//   - truncated power law x^-α e^{-λx}, discrete log-normal and discrete
//     exponential tails on the same x ≥ x_min, by maximum likelihood.
//   - Vuong likelihood-ratio tests: truncated power law vs log-normal (the
//     paper's column; positive favours the truncated power law) and power
//     law vs each alternative, with normalised statistic and two-sided p.
//   - the semi-parametric bootstrap goodness-of-fit p-value, parallel and
//     reproducible: simulation i uses its own PCG stream (Seed, i+1).
//   - the paper's screen: n_tail ≥ 100 and p_gof ≥ 0.10, stated as a
//     verdict together with the truncated-power-law vs log-normal test.
//
// On power-law-like tails the log-normal likelihood may have no maximum: it
// rises toward μ → −∞ with σ² ∝ −μ, where the log-normal becomes a power law
// on the tail. Audit reports such a fit as degenerate (LogNormal.Degenerate)
// with the limit's exponent instead of an arbitrary point on the ridge, and
// its Vuong tests against a power law as ties with the reason.
//
// # Allocation
//
// Allocate and Plan split an integer budget over items by rank, b(r; τ) ∝
// r^-τ, exactly (largest remainder), with a per-item floor and a reported
// core/tail split; see Plan. Ranks turns access counts into ranks. `wmzip
// encode --access` uses them to give each state of a .wmz file a bit budget,
// then the highest retention level (format.WithLevels) that fits it.
package ctmc
