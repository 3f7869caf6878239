package train

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/check"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/ratecurve"
	"github.com/wmzip/wmzip/internal/rdcode"
	"github.com/wmzip/wmzip/internal/wm"
)

// A codec trained for coding by rate and distortion (the default for
// float observations) is a bundle of members, each a plain product
// quantizer (no rotation: the world model predicts its codes best) of K
// centroids per subspace and a world model of its codes. Which geometries
// become members is measured, not assumed: each candidate is trained on
// the episodes but those held out, the held-out episodes are coded by
// rate and distortion at a ladder of λ, and a candidate is kept when it
// writes the fewest bits at some distortion between the finest
// candidate's floor and FamilyMaxDistortion. The calibration points go
// into each member (section RDCV), where the writer reads which member,
// and which λ, to start from for a target.

// familyCandidates are the geometries a family's members are chosen
// among, coarse to fine: subspaces M of a slot vector, and how many slot
// vectors of a state the world model sees as one of its slots (a tile of
// few codes is hard to tell from the others: four or more of them carry
// a tile's identity).
var familyCandidates = []struct{ m, group int }{{1, 8}, {2, 1}, {2, 2}, {4, 1}, {8, 1}, {16, 1}, {32, 1}}

const familyK = 256

// FamilyMaxDistortion is the largest mean relative squared error a
// family's members are chosen for, unless the finest floor is above a
// third of it: then members are chosen up to FamilyRange times the floor.
const (
	FamilyMaxDistortion = 0.03
	FamilyRange         = 3
)

// familyTop returns the largest distortion members are chosen for, given
// the finest candidate's floor.
func familyTop(floor float64) float64 { return max(FamilyMaxDistortion, FamilyRange*floor) }

// familyLams is the ladder of the coder's λ (distortion units a bit)
// calibration codes the held-out episodes at; 0 is the quantizer's own
// codes.
var familyLams = []uint64{0, 250, 500, 1000, 2000, 4000, 8000, 16000, 24000, 32000, 48000, 64000, 96000, 128000, 192000, 256000, 384000, 512000}

// candidate is one trained geometry.
type candidate struct {
	group int
	q     *opq.Quantizer
	curve ratecurve.Curve
	floor float64
	qual  opq.Quality
}

// trainFamily trains the bundle of eps, whose episodes all carry float
// observations.
func trainFamily(ctx context.Context, eps []wmzip.Episode, c config) (*wmzip.Codec, error) {
	fit, held, err := splitHeld(eps, c.hold)
	if err != nil {
		return nil, err
	}
	dim, S := 0, slotsOf(&eps[0])
	for i := range eps {
		e := &eps[i]
		n := len(e.Actions) * slotsOf(e)
		if n == 0 {
			continue
		}
		if slotsOf(e) != S {
			return nil, fmt.Errorf("%w: episode %d has %d slots, episode 0 %d", wmzip.ErrInput, i, slotsOf(e), S)
		}
		if len(e.Obs)%n != 0 {
			return nil, fmt.Errorf("%w: episode %d: %d observation values for %d states of %d slots", wmzip.ErrInput, i, len(e.Obs), len(e.Actions), slotsOf(e))
		}
		d := len(e.Obs) / n
		if err := check.Finite(e.Obs, slotsOf(e), d, 0, fmt.Sprintf("episode %d", i), nil); err != nil {
			return nil, err
		}
		if dim != 0 && d != dim {
			return nil, fmt.Errorf("%w: observation dimension %d differs from %d", wmzip.ErrInput, d, dim)
		}
		dim = d
	}
	if dim == 0 {
		return nil, fmt.Errorf("%w: no observations to train a quantizer on", wmzip.ErrInput)
	}
	var parts [][]float32
	for _, e := range fit {
		parts = append(parts, e.Obs)
	}
	vecs := joinFloats(parts)
	nvec := len(vecs) / dim
	k := min(familyK, nvec)
	if k < 2 {
		return nil, fmt.Errorf("%w: %d training slot vectors, too few for a quantizer", wmzip.ErrInput, nvec)
	}
	type geom struct{ m, group int }
	var gs []geom
	for _, fc := range familyCandidates {
		if fc.m <= dim && dim%fc.m == 0 && S%fc.group == 0 {
			gs = append(gs, geom{fc.m, fc.group})
		}
	}
	if len(gs) == 0 {
		gs = []geom{{1, 1}}
	}
	heldStates := make([][]rdcode.State, len(held))
	for i, e := range held {
		per := S * dim
		for t, a := range e.Actions {
			o := e.Obs[t*per : (t+1)*per]
			heldStates[i] = append(heldStates[i], rdcode.State{Action: a, Ref: o, Obs: o})
		}
	}
	wopt := c.wm
	wopt.NoDenoise, wopt.Progress = true, nil
	cands := make([]*candidate, len(gs))
	var floors []float64 // the candidates' floors so far: the ladders stop twice the range above the least
	quants := map[int]*opq.Quantizer{}
	for ci, ge := range gs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := ge.m
		q := quants[m]
		if q == nil {
			cfg := c.quant
			cfg.Dim, cfg.M, cfg.K, cfg.OPQIters, cfg.PerSlot = dim, m, k, -1, false
			if c.progress != nil {
				name := fmt.Sprintf("quantizer %dx%d", m, k)
				cfg.Progress = func(stage string, done, total int) { c.progress(name+" "+stage, done, total) }
			}
			var err error
			if q, err = Quantizer(vecs, cfg); err != nil {
				return nil, err
			}
			q.RoundToHalf()
			quants[m] = q
		}
		g := wm.Geometry{S: S / ge.group, M: m * ge.group, K: k}
		calibEps, err := quantizeEpisodes(q, fit, S)
		if err != nil {
			return nil, err
		}
		copt := wopt
		copt.NoFile = true
		calib, err := wm.Train(g, calibEps, copt)
		if err != nil {
			return nil, err
		}
		cd := &candidate{q: q, group: ge.group}
		for li, lam := range familyLams {
			if c.progress != nil {
				c.progress(fmt.Sprintf("calibrating %dx%d/%d", m, k, ge.group), li+1, len(familyLams))
			}
			p, err := rdcode.Encode(q, calib, heldStates, lam, nil)
			if err != nil {
				return nil, err
			}
			bits := float64(len(p.File)) * 8 / float64(max(p.States, 1))
			cd.curve = append(cd.curve, ratecurve.Point{Lam: lam, Dist: p.Dist, Bits: bits})
			if lam == 0 {
				cd.floor = p.Dist
				cd.qual = p.FloorQ
			}
			if lam == 0 {
				floors = append(floors, p.Dist)
			}
			if p.Dist > 2*familyTop(slices.Min(floors)) {
				break
			}
		}
		cands[ci] = cd
		if os.Getenv("WMZIP_FAMILY_DEBUG") != "" {
			for _, p := range cd.curve {
				fmt.Fprintf(os.Stderr, "candidate %dx%d/%d lam %d D %.5f bits %.1f\n", m, k, ge.group, p.Lam, p.Dist, p.Bits)
			}
		}
	}
	keep := chooseMembers(cands)
	members := make([]*wmzip.Codec, 0, len(keep))
	for _, ci := range keep {
		cd := cands[ci]
		g := wm.Geometry{S: S / cd.group, M: cd.q.M() * cd.group, K: cd.q.K()}
		all, err := quantizeEpisodes(cd.q, eps, S)
		if err != nil {
			return nil, err
		}
		o := wopt
		if c.progress != nil {
			o.Progress = func(done, total int) { c.progress(fmt.Sprintf("world model %dx%d", g.M, g.K), done, total) }
		}
		m, err := wm.Train(g, all, o)
		if err != nil {
			return nil, err
		}
		qb, _ := cd.q.MarshalBinary()
		if m, err = m.WithSection(gate.QuantizerTag, qb); err != nil {
			return nil, err
		}
		if m, err = m.WithSection(ratecurve.Section, ratecurve.Marshal(cd.curve)); err != nil {
			return nil, err
		}
		if cd.qual.Vectors > 0 {
			if m, err = m.WithSection(qualitySection, marshalQuality(cd.qual)); err != nil {
				return nil, err
			}
		}
		mc, err := wmzip.NewCodec(m)
		if err != nil {
			return nil, err
		}
		members = append(members, mc)
	}
	return wmzip.NewBundle(members...)
}

// chooseMembers returns the candidates (indexes, coarse to fine by
// floor) that write the fewest bits at some distortion between the
// finest floor and familyTop of it, and the finest always.
func chooseMembers(cands []*candidate) []int {
	finest := 0
	for i, c := range cands {
		if c.floor < cands[finest].floor {
			finest = i
		}
	}
	kept := map[int]bool{finest: true}
	lo, hi := cands[finest].floor, familyTop(cands[finest].floor)
	if lo > 0 && hi > lo {
		const grid = 48
		for gi := range grid + 1 {
			d := lo * math.Pow(hi/lo, float64(gi)/grid)
			best, bestB := -1, math.Inf(1)
			for i, c := range cands {
				if b := c.curve.BitsAt(d); b < bestB {
					best, bestB = i, b
				}
			}
			if best >= 0 {
				kept[best] = true
			}
		}
	}
	var out []int
	for i := range cands {
		if kept[i] {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int {
		switch {
		case cands[a].floor > cands[b].floor:
			return -1
		case cands[a].floor < cands[b].floor:
			return 1
		}
		return 0
	})
	return out
}

// quantizeEpisodes returns eps as the world model trains on them: their
// observations quantized by q.
func quantizeEpisodes(q *opq.Quantizer, eps []wmzip.Episode, S int) ([]wm.Episode, error) {
	out := make([]wm.Episode, len(eps))
	for i, e := range eps {
		codes := make([]uint16, len(e.Actions)*S*q.M())
		if len(codes) > 0 {
			if err := q.Encode(e.Obs, codes); err != nil {
				return nil, fmt.Errorf("%w: episode %d: %v", wmzip.ErrInput, i, err)
			}
		}
		out[i] = wm.Episode{Codes: codes, Actions: e.Actions}
	}
	return out, nil
}

// splitHeld returns the episodes trained on and those held out to
// calibrate on: the last hold episodes (hold < 0: gate.HoldoutEpisodes),
// or, with none to hold out, the last eighth of the states, cut from the
// episodes they belong to.
func splitHeld(eps []wmzip.Episode, hold int) (fit, held []wmzip.Episode, err error) {
	if hold < 0 {
		hold = gate.HoldoutEpisodes(len(eps))
	}
	if hold >= len(eps) && hold > 0 {
		return nil, nil, fmt.Errorf("%w: holdout %d leaves no training episode of %d", wmzip.ErrInput, hold, len(eps))
	}
	if hold > 0 {
		return eps[:len(eps)-hold], eps[len(eps)-hold:], nil
	}
	total := 0
	for _, e := range eps {
		total += len(e.Actions)
	}
	if total < 2 {
		return nil, nil, fmt.Errorf("%w: %d training states, too few to hold any out", wmzip.ErrInput, total)
	}
	cut := total - max(total/8, 1) // states trained on
	for _, e := range eps {
		t := len(e.Actions)
		switch {
		case cut >= t:
			fit = append(fit, e)
		case cut > 0:
			per := len(e.Obs) / t
			fit = append(fit, wmzip.Episode{Slots: e.Slots, Actions: e.Actions[:cut], Obs: e.Obs[:cut*per]})
			held = append(held, wmzip.Episode{Slots: e.Slots, Actions: e.Actions[cut:], Obs: e.Obs[cut*per:]})
		default:
			held = append(held, e)
		}
		cut -= t
	}
	return fit, held, nil
}
