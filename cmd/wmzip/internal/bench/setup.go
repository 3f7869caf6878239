package bench

import (
	"fmt"
	"time"

	wmtrain "github.com/wmzip/wmzip/train"

	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/graphworld"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
)

// A Setup is a trained wmzip codec and the trajectories it is measured on.
type Setup struct {
	Name        string
	Train, Test *npz.Trajectory // with codes: the quantizer's when the input had float obs
	Quantizer   *opq.Quantizer  // nil when the input's codes were used
	Model       *wm.Model       // trained on all of Train; with a GATE section when Gate is set
	Gate        *gate.Params    // nil: no retention gate, NoGate says why
	NoGate      string

	QuantizerSeconds, ModelSeconds, GateSeconds float64 // training times
}

// SetupOptions configure Prepare. The zero value trains on float obs when
// both trajectories have them.
type SetupOptions struct {
	// CodesOnly ignores float obs and uses the trajectories' codes: no
	// quantizer, hence no gate (distortion has no embedding to live in).
	CodesOnly bool
	// Quantizer configures the quantizer trained on obs; zero fields take
	// opq's defaults (those of `wmzip train`), Seed 0 is taken as 1.
	Quantizer opq.Config
	// Log, if set, receives progress lines.
	Log func(format string, a ...any)
}

// Prepare trains a codec on train for test as `wmzip train` does: with
// float obs, a quantizer on train's slot vectors that codes both
// trajectories, then a world model on all of train and a retention gate
// calibrated on train's last episodes (gate.HoldoutEpisodes) with a second
// model trained without them. train and test are not modified.
func Prepare(name string, train, test *npz.Trajectory, opt SetupOptions) (*Setup, error) {
	logf := opt.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s := &Setup{Name: name}
	useObs := !opt.CodesOnly && train.Obs != nil && test.Obs != nil
	if useObs {
		cfg := opt.Quantizer
		cfg.Dim = train.ObsD
		if cfg.Seed == 0 {
			cfg.Seed = 1
		}
		t0 := time.Now()
		q, err := wmtrain.Quantizer(train.Obs, cfg)
		if err != nil {
			return nil, fmt.Errorf("quantizer: %w", err)
		}
		s.QuantizerSeconds = time.Since(t0).Seconds()
		logf("quantizer: %d×%d trained in %.1fs", q.M(), q.K(), s.QuantizerSeconds)
		if s.Train, err = quantized(q, train); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		if s.Test, err = quantized(q, test); err != nil {
			return nil, fmt.Errorf("test: %w", err)
		}
		s.Quantizer = q
	} else {
		if train.Codes == nil || test.Codes == nil {
			return nil, fmt.Errorf("%w: want codes, or float obs in both trajectories", ErrInput)
		}
		s.Train, s.Test = train, test
		s.NoGate = "codes only: no quantizer, so no embedding distortion for a gate"
	}
	if s.Train.S*s.Train.M != s.Test.S*s.Test.M {
		return nil, fmt.Errorf("%w: train has %d coordinates per state, test %d", ErrInput, s.Train.S*s.Train.M, s.Test.S*s.Test.M)
	}
	g := wm.Geometry{S: s.Train.S, M: s.Train.M, K: max(wmtrain.Alphabet(s.Train.Codes), wmtrain.Alphabet(s.Test.Codes))}
	if s.Quantizer != nil {
		g.K = s.Quantizer.K()
	}
	eps := episodes(s.Train)
	t0 := time.Now()
	m, err := wm.Train(g, eps, wm.TrainOptions{Level: wm.LevelCopy}) // wmzip train's level
	if err != nil {
		return nil, fmt.Errorf("world model: %w", err)
	}
	s.ModelSeconds = time.Since(t0).Seconds()
	logf("world model: trained on %d states in %.1fs", s.Train.T, s.ModelSeconds)
	s.Model = m
	if s.Quantizer == nil {
		return s, nil
	}
	qb, _ := s.Quantizer.MarshalBinary()
	if s.Model, err = m.WithSection(gate.QuantizerTag, qb); err != nil {
		return nil, err
	}
	hold := gate.HoldoutEpisodes(len(eps))
	if hold == 0 || hold >= len(eps) {
		s.NoGate = fmt.Sprintf("%d training episodes: too few to hold some out for the gate", len(eps))
		return s, nil
	}
	t0 = time.Now()
	if s.Model, s.Gate, err = calibrate(s.Model, eps[:len(eps)-hold], eps[len(eps)-hold:]); err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	s.GateSeconds = time.Since(t0).Seconds()
	logf("gate: calibrated on %d held-out episodes in %.1fs", hold, s.GateSeconds)
	return s, nil
}

// calibrate returns final with a GATE section calibrated on held, its
// predictions from a model trained on fit and its distances from final's
// quantizer (as `wmzip train` calibrates).
func calibrate(final *wm.Model, fit, held []wm.Episode) (*wm.Model, *gate.Params, error) {
	calib, err := wm.Train(final.Geom, fit, wm.TrainOptions{Precision: final.Precision, Level: final.Level()})
	if err != nil {
		return nil, nil, err
	}
	return wmtrain.CalibrateGate(calib, final, held, gate.CalibOptions{})
}

// quantized returns a copy of tr whose codes are q's codes of its obs.
func quantized(q *opq.Quantizer, tr *npz.Trajectory) (*npz.Trajectory, error) {
	if tr.ObsD != q.Dim() {
		return nil, fmt.Errorf("%w: observations have %d dimensions, the quantizer %d", ErrInput, tr.ObsD, q.Dim())
	}
	codes := make([]uint16, tr.T*tr.ObsS*q.M())
	if err := q.Encode(tr.Obs, codes); err != nil {
		return nil, err
	}
	c := *tr
	c.Codes, c.S, c.M, c.CodesDtype = codes, tr.ObsS, q.M(), ""
	return &c, nil
}

// episodes splits a trajectory into the world model's episodes.
func episodes(tr *npz.Trajectory) []wm.Episode {
	n := tr.S * tr.M
	var out []wm.Episode
	for _, e := range tr.Episodes() {
		out = append(out, wm.Episode{Codes: tr.Codes[e[0]*n : e[1]*n], Actions: tr.Actions[e[0]:e[1]]})
	}
	return out
}

// Graphworld generates the default world of the speed benchmark, the one
// `wmzip demo` uses: a uniform graph of 200 nodes (graph seed 1), training
// walks of 8 episodes × 250 steps (seed 100) and a test walk of 2 × 200
// steps (seed 200), with float obs when obs is set.
func Graphworld(obs bool) (train, test *npz.Trajectory, err error) {
	gen := func(eps, steps int, seed uint64) (*npz.Trajectory, error) {
		r, err := graphworld.Generate(graphworld.Config{Family: graphworld.Uniform, Nodes: 200, GraphSeed: 1, Episodes: eps, Steps: steps, Seed: seed, Obs: obs})
		if err != nil {
			return nil, err
		}
		tr := &npz.Trajectory{T: len(r.Actions), Codes: r.Codes, S: r.S, M: r.M, Actions: r.Actions, HasActions: true, EpisodeStart: r.EpisodeStart}
		if r.Obs != nil {
			tr.Obs, tr.ObsS, tr.ObsD = r.Obs, r.S, r.ObsDim
		}
		return tr, nil
	}
	if train, err = gen(8, 250, 100); err != nil {
		return nil, nil, err
	}
	if test, err = gen(2, 200, 200); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}
