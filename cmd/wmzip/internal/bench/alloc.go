package bench

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/wmzip/wmzip/internal/alloc"
	"github.com/wmzip/wmzip/internal/ctmc"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/internal/traj"
)

// AllocRow is one allocation of one family in Alloc's report.
type AllocRow struct {
	Family       string  `json:"family"`
	Space        string  `json:"alloc_space"`          // what the rank weights scale: bits or lambda
	TailWeights  string  `json:"tail_weights"`         // ranked (r^-τ) or flat (min(r, k)^-τ)
	CoreItems    int     `json:"core_items,omitempty"` // flat tail: states of this row's rank ≤ k
	Allocation   string  `json:"allocation"`
	Tau          float64 `json:"tau"`
	BitsPerState float64 `json:"bits_per_state"`
	Distortion   float64 `json:"distortion"`      // mean d_i over all states
	Weighted     float64 `json:"access_weighted"` // Σ c_i d_i / Σ c_i
	Tail         float64 `json:"tail"`            // mean d_i, bottom 50% by access count
	TailRatio    float64 `json:"tail_vs_uniform"` // Tail ÷ the uniform allocation's Tail (same space)
	EmbWeighted  float64 `json:"access_weighted_embedding,omitempty"`
	EmbTail      float64 `json:"tail_embedding,omitempty"`
	Levels       []int   `json:"states_per_level"`
	Encodings    int     `json:"encodings"`
	DecodeEqual  bool    `json:"decoder_equals_writer"`
}

// AllocFamily is the setup of one family.
type AllocFamily struct {
	Family         string     `json:"family"`
	States         int        `json:"stored_states"`
	TrainStates    int        `json:"train_states"`
	Accesses       int64      `json:"accesses"`
	Missed         int64      `json:"accesses_without_stored_state"`
	Accessed       int        `json:"states_accessed"`
	Gini           float64    `json:"access_gini"`
	Top10          float64    `json:"access_top10_share"`
	LosslessBits   float64    `json:"lossless_bits_per_state"`
	LowestBits     float64    `json:"lowest_level_bits_per_state"`
	Budget         float64    `json:"budget_bits_per_state"`
	CoreRank       int        `json:"flat_tail_core_rank,omitempty"`         // k: the access core's rank cut
	CoreShare      float64    `json:"flat_tail_core_access_share,omitempty"` // accesses to the states of rank ≤ k
	Bars           []AllocBar `json:"bars"`
	SecondsPerFile float64    `json:"seconds_per_encoding"`
}

// AllocBar is the bar for one allocation space: CTMC has the
// lowest access-weighted distortion of the four, and its tail distortion is
// within 1.5x the uniform allocation's.
type AllocBar struct {
	Space    string `json:"alloc_space"`
	TailW    string `json:"tail_weights"`
	Weighted bool   `json:"ctmc_lowest_access_weighted"`
	Tail     bool   `json:"ctmc_tail_within_1_5x_uniform"`
}

// AllocReport is the outcome of Alloc.
type AllocReport struct {
	Command  string         `json:"command"`
	Space    string         `json:"distortion_space"`
	Families []AllocFamily  `json:"families"`
	Rows     []AllocRow     `json:"rows"`
	Config   map[string]any `json:"config"`
}

// AllocConfig sets the storage-by-access benchmark, the Table 6 analogue:
// per graphworld family a world, a training walk, a stored walk (the file)
// and an access walk that reads stored states, the file encoded at one
// budget under four allocations (CTMC ranks, uniform, shuffled and
// reversed ranks) in each space and tail.
type AllocConfig struct {
	Families                    []string
	Nodes                       int
	GraphSeed                   uint64
	TrainEpisodes, TrainSteps   int
	StoredEpisodes, StoredSteps int
	AccessEpisodes, AccessSteps int
	Pick                        string  // uniform or recent: which stored visit an access reads
	BudgetFrac                  float64 // budget as a fraction of the lossless rate
	Budget                      float64 // bits/state for every family (overrides BudgetFrac when > 0)
	Tau                         float64
	Spaces                      []alloc.Space
	Tails                       []alloc.Tail
	Guard                       float64
	Seed                        uint64
	Codes                       bool // code space instead of quantized float obs
	Keyframe, Tries, Workers    int
	Command                     string         // for the report
	Config                      map[string]any // for the report
}

// Alloc runs the storage-by-access benchmark.
func Alloc(c AllocConfig, logf func(string, ...any)) (*AllocReport, error) {
	rep := &AllocReport{Command: c.Command, Config: c.Config}
	for _, fam := range c.Families {
		gen := func(eps, steps int, s uint64, obs bool) (*graphworld.Result, error) {
			return graphworld.Generate(graphworld.Config{Family: fam, Nodes: c.Nodes, GraphSeed: c.GraphSeed, Episodes: eps, Steps: steps, Seed: s, Obs: obs})
		}
		t0 := time.Now()
		trainRes, err := gen(c.TrainEpisodes, c.TrainSteps, c.Seed, !c.Codes)
		if err != nil {
			return nil, err
		}
		storedRes, err := gen(c.StoredEpisodes, c.StoredSteps, c.Seed+1, !c.Codes)
		if err != nil {
			return nil, err
		}
		accRes, err := gen(c.AccessEpisodes, c.AccessSteps, c.Seed+2, false)
		if err != nil {
			return nil, err
		}
		stored := traj.FromWalk(storedRes)
		s, err := PrepareRD(RDConfig{Input: fam + " stored walk", Traj: stored, TrainName: fam + " training walk", Train: traj.FromWalk(trainRes), CodesOnly: c.Codes, OPQM: 32, OPQK: 64}, logf)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fam, err)
		}
		rep.Space = s.info.Space
		logf("%s: world, walks and model in %v", fam, time.Since(t0).Round(time.Second))

		// The access trace: each access-walk step at node u reads a stored
		// state at u.
		at := map[int][]int{}
		for i, u := range storedRes.Nodes {
			at[u] = append(at[u], i)
		}
		rng := rand.New(rand.NewPCG(c.Seed, 0x616c6c6f63))
		counts := make([]int64, stored.T)
		fr := AllocFamily{Family: fam, States: stored.T, TrainStates: len(trainRes.Nodes)}
		var trace bytes.Buffer
		tw := ctmc.NewTraceWriter(&trace)
		eps := stored.Episodes()
		for _, u := range accRes.Nodes {
			vis := at[u]
			if len(vis) == 0 {
				fr.Missed++
				continue
			}
			i := vis[len(vis)-1]
			if c.Pick == "uniform" {
				i = vis[rng.IntN(len(vis))]
			}
			counts[i]++
			fr.Accesses++
			e := episodeOf(eps, i)
			tw.Access(int64(e), int64(i-eps[e][0]))
		}
		if err := tw.Close(); err != nil {
			return nil, err
		}
		// Round trip through the trace format, as a trace file is read.
		acc, err := ctmc.ReadTrace(&trace)
		if err != nil || int64(len(acc)) != fr.Accesses {
			return nil, fmt.Errorf("%s: access trace round trip: %d accesses, %v", fam, len(acc), err)
		}
		var nz []int64
		for _, c := range counts {
			if c > 0 {
				fr.Accessed++
				nz = append(nz, c)
			}
		}
		conc := ctmc.Concentrate(nz)
		fr.Gini, fr.Top10 = conc.Gini, conc.Top10Share

		t1 := time.Now()
		lad, err := alloc.FitLadder(s.m, episodes(stored), c.Keyframe, c.Workers, 0, logf)
		if err != nil {
			return nil, err
		}
		nLevels := len(lad.Lambdas)
		fr.LosslessBits = lad.FileBits[nLevels-1] / float64(stored.T)
		fr.LowestBits = lad.FileBits[0] / float64(stored.T)
		fr.Budget = c.Budget
		if fr.Budget == 0 {
			fr.Budget = c.BudgetFrac * fr.LosslessBits
		}
		logf("%s: %d stored states, %d accesses (%d missed), %d states accessed; lossless %.1f, lowest level %.1f, budget %.1f bits/state",
			fam, stored.T, fr.Accesses, fr.Missed, fr.Accessed, fr.LosslessBits, fr.LowestBits, fr.Budget)

		// The flat tail's core: the rank cut k of the top-ranked states
		// carrying alloc.CoreMass of the accesses. The same k serves every
		// τ > 0 row: CTMC's core is the most-read states, shuffled's a
		// random set of as many (its ranks are a permutation of CTMC's),
		// reversed's the least-read states of reversed rank ≤ k (as many
		// up to the tie groups straddling k).
		core, err := alloc.TailCore(alloc.TailFlat, counts)
		if err != nil {
			return nil, err
		}
		fr.CoreRank = core
		base := ctmc.Ranks(counts)
		for i, r := range base {
			if r <= core {
				fr.CoreShare += float64(counts[i])
			}
		}
		fr.CoreShare /= float64(max(fr.Accesses, 1))
		shuffled := slices.Clone(base)
		rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		neg := make([]int64, len(counts))
		for i, c := range counts {
			neg[i] = -c
		}
		plans := []struct {
			name  string
			ranks []int
			tau   float64
		}{
			{fmt.Sprintf("CTMC (τ=%g)", c.Tau), base, c.Tau},
			{"Uniform (τ=0)", base, 0},
			{fmt.Sprintf("Shuffled ranks (τ=%g)", c.Tau), shuffled, c.Tau},
			{fmt.Sprintf("Reversed ranks (τ=%g)", c.Tau), ctmc.Ranks(neg), c.Tau},
		}
		// The tail: the 50% least-accessed states (ties by file order), the
		// half the tail guard protects.
		tail := alloc.LeastReadHalf(base)
		encodings := 0
		var rows []AllocRow
		for _, sp := range c.Spaces {
			for _, tm := range c.Tails {
				var srows []AllocRow
				for _, pl := range plans {
					k := 0
					if tm == alloc.TailFlat && pl.tau > 0 {
						k = core
					}
					r, err := alloc.Allocate(s.m, episodes(stored), lad, pl.ranks, alloc.Config{Keyframe: c.Keyframe, Budget: fr.Budget, Tau: pl.tau, Space: sp, Core: k, Guard: c.Guard, Tries: c.Tries, Logf: logf})
					if err != nil {
						return nil, fmt.Errorf("%s, %s, %s space, %s tail: %w", fam, pl.name, sp, tm, err)
					}
					encodings += r.Attempts
					row := AllocRow{Family: fam, Space: string(sp), TailWeights: string(tm), Allocation: pl.name, Tau: pl.tau, BitsPerState: r.Bits / float64(stored.T), Levels: r.Counts, Encodings: r.Attempts}
					for _, rk := range pl.ranks {
						if k > 0 && rk <= k {
							row.CoreItems++
						}
					}
					d := make([]float64, stored.T)
					var sum, wsum float64
					for i, a := range r.Accounts {
						d[i] = s.p.RelDistortion(a.DistSum, 1)
						sum += d[i]
						wsum += float64(counts[i]) * d[i]
					}
					row.Distortion = sum / float64(stored.T)
					row.Weighted = wsum / float64(max(fr.Accesses, 1))
					for _, i := range tail {
						row.Tail += d[i]
					}
					row.Tail /= float64(max(len(tail), 1))
					recon, equal, err := decodeCheck(r, s)
					if err != nil {
						return nil, fmt.Errorf("%s, %s, %s space: decoding: %w", fam, pl.name, sp, err)
					}
					row.DecodeEqual = equal
					if s.q != nil {
						row.EmbWeighted, row.EmbTail = s.embeddingDistortion(recon, counts, tail)
					}
					logf("%s %-6s %-6s %-22s %7.1f bits/state  mean %.5f  access-weighted %.5f  tail %.5f  levels %v", fam, sp, tm, pl.name, row.BitsPerState, row.Distortion, row.Weighted, row.Tail, row.Levels)
					srows = append(srows, row)
				}
				for i := range srows {
					if srows[1].Tail > 0 {
						srows[i].TailRatio = srows[i].Tail / srows[1].Tail
					} else if srows[i].Tail == 0 {
						srows[i].TailRatio = 1
					} else {
						srows[i].TailRatio = math.Inf(1)
					}
				}
				bar := AllocBar{Space: string(sp), TailW: string(tm), Weighted: true, Tail: srows[0].TailRatio <= 1.5}
				for _, r := range srows[1:] {
					if r.Weighted <= srows[0].Weighted {
						bar.Weighted = false
					}
				}
				fr.Bars = append(fr.Bars, bar)
				rows = append(rows, srows...)
			}
		}
		fr.SecondsPerFile = time.Since(t1).Seconds() / float64(nLevels+encodings)
		rep.Families = append(rep.Families, fr)
		rep.Rows = append(rep.Rows, rows...)
	}
	return rep, nil
}

// episodeOf returns the episode holding state i.
func episodeOf(eps [][2]int, i int) int {
	for e, x := range eps {
		if i < x[1] {
			return e
		}
	}
	return len(eps) - 1
}

// decodeCheck decodes an allocated file with the sequential reader and
// reports whether every state and its level equal what the writer wrote.
func decodeCheck(r *alloc.Result, s *RDSetup) ([]uint16, bool, error) {
	rd, err := format.NewReader(bytes.NewReader(r.File), s.m)
	if err != nil {
		return nil, false, err
	}
	var recon, st []uint16
	equal := true
	t := 0
	for {
		if _, err := rd.NextEpisode(); err == io.EOF {
			break
		} else if err != nil {
			return nil, false, err
		}
		for {
			_, c, err := rd.ReadState(st)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, false, err
			}
			st = c
			recon = append(recon, c...)
			if t >= len(r.Levels) || rd.Level() != r.Levels[t] {
				equal = false
			}
			t++
		}
	}
	if t != len(r.Levels) || !slices.Equal(recon, r.Recon) {
		equal = false
	}
	return recon, equal, nil
}

// embeddingDistortion is bench rd's distortion per state (squared error of
// the decoded slot vectors against the lossless reconstruction, over the
// mean squared norm of a lossless state), access-weighted and over the tail.
func (s *RDSetup) embeddingDistortion(recon []uint16, counts []int64, tail []int) (weighted, tailMean float64) {
	g := s.m.Geom
	n := g.N()
	vec := make([]float32, g.S*s.dim)
	errs := make([]float64, s.states)
	var normSum float64
	for t := range s.states {
		if err := s.q.Decode(recon[t*n:(t+1)*n], vec); err != nil {
			return math.NaN(), math.NaN()
		}
		y := s.truthVec[t*g.S*s.dim : (t+1)*g.S*s.dim]
		for i := range vec {
			d := float64(vec[i]) - float64(y[i])
			errs[t] += d * d
			normSum += float64(y[i]) * float64(y[i])
		}
	}
	mean := normSum / float64(s.states)
	var wsum, csum float64
	for t, e := range errs {
		wsum += float64(counts[t]) * e / mean
		csum += float64(counts[t])
	}
	for _, t := range tail {
		tailMean += errs[t] / mean
	}
	return wsum / max(csum, 1), tailMean / float64(max(len(tail), 1))
}

// PrintAlloc prints the report as a table.
func PrintAlloc(w io.Writer, rep *AllocReport) {
	fmt.Fprintf(w, "%s\ndistortion d_i: the gate's (LastAccount().DistSum over S·slot norm); %s\n\n", rep.Command, rep.Space)
	fmt.Fprintf(w, "%-12s %-6s %-6s %-22s %9s %9s %11s %9s %8s %11s %9s\n", "family", "space", "tail", "allocation", "bits/st", "mean d", "access-wtd", "tail d", "tail/uni", "emb acc-wtd", "emb tail")
	for _, f := range rep.Families {
		fmt.Fprintf(w, "%s: %d stored states, %d accesses (%d without a stored state), %d states accessed, Gini %.3f, top-10%% %.1f%%; lossless %.1f, lowest level %.1f, budget %.1f bits/state; flat tail's core: rank ≤ %d, %.1f%% of the accesses\n",
			f.Family, f.States, f.Accesses, f.Missed, f.Accessed, f.Gini, 100*f.Top10, f.LosslessBits, f.LowestBits, f.Budget, f.CoreRank, 100*f.CoreShare)
		for _, r := range rep.Rows {
			if r.Family != f.Family {
				continue
			}
			emb := fmt.Sprintf("%11s %9s", "-", "-")
			if r.EmbWeighted != 0 || r.EmbTail != 0 {
				emb = fmt.Sprintf("%11.5f %9.5f", r.EmbWeighted, r.EmbTail)
			}
			alloc := r.Allocation
			if r.CoreItems > 0 {
				alloc += fmt.Sprintf(" [core %d]", r.CoreItems)
			}
			fmt.Fprintf(w, "%-12s %-6s %-6s %-22s %9.1f %9.5f %11.5f %9.5f %8.3f %s\n", r.Family, r.Space, r.TailWeights, alloc, r.BitsPerState, r.Distortion, r.Weighted, r.Tail, r.TailRatio, emb)
		}
		for _, b := range f.Bars {
			fmt.Fprintf(w, "  bar, %s space, %s tail: CTMC lowest access-weighted distortion: %v; CTMC tail within 1.5x uniform's: %v\n", b.Space, b.TailW, b.Weighted, b.Tail)
		}
	}
}
