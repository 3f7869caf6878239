package graphworld

import (
	"errors"
	"fmt"
	"math"
)

// Family names accepted in Config.Family.
const (
	Uniform     = "uniform"     // near-regular graph: every node has about Degree neighbours
	Exponential = "exponential" // configuration model with a geometric (discrete exponential) degree law
	ScaleFree   = "scalefree"   // preferential attachment (Barabási–Albert)
	Modular     = "modular"     // planted communities: dense inside, sparse between
	Mixed       = "mixed"       // communities of unequal size, each built by a different family
)

// Families lists the graph families in a fixed order.
var Families = []string{Uniform, Exponential, ScaleFree, Modular, Mixed}

// Defaults applied by Generate to zero-valued Config fields.
const (
	DefaultFamily   = Uniform
	DefaultNodes    = 500
	DefaultEpisodes = 10
	DefaultSteps    = 200
	DefaultSlots    = 32
	DefaultSubs     = 32
	DefaultK        = 64
	DefaultDegree   = 6
	DefaultNoise    = 0.01
	DefaultObsDim   = 512
	DefaultObsSigma = 0.1
	DefaultSkew     = 1.0
)

// Limits on what Generate accepts. MaxCoords and MaxAlphabet match the
// geometry limits of the rest of wmzip; MaxElements bounds every output array.
const (
	MaxNodes    = 1 << 22
	MaxCoords   = 1 << 16 // Slots*Subspaces
	MaxAlphabet = 1 << 16 // K (codes are uint16)
	MaxActions  = 256
	MaxElements = 1 << 31 // Codes, Obs and the world's latent table
)

// DefaultActionProbs and DefaultActionShifts define the default action set:
// two "links" that show the new page as it is, a row down, a row up, a page
// down (two rows) and a one-slot nudge. Shifts are in units of content slots
// (see Config.ActionShifts); a row is Slots/8 slots wide (rounded down, at
// least one), so for 32 slots a row is 4 slots.
var (
	DefaultActionProbs  = []float64{0.30, 0.20, 0.15, 0.15, 0.10, 0.10}
	defaultShiftsInRows = []int{0, 0, 1, -1, 2, 0}
	defaultShiftsExtra  = []int{0, 0, 0, 0, 0, 1}
)

// Config describes a Synthetic Graph World and the walks taken in it.
//
// The world — graph, every node's latent state, the tile pool, the per-visit
// content law and the observation embedding — is fixed by GraphSeed and the
// world-shaping fields (Family, Nodes, Degree, Communities, Slots, Subspaces,
// K, FrameSlots, DynamicSlots, PoolTiles, Skew, ObsDim). The walks — episode
// start nodes, actions, neighbour choices, per-visit content and noise — are
// fixed by Seed and the walk fields (Episodes, Steps, Noise, actions,
// ObsSigma). Two configs that differ only in Seed describe the same world.
//
// A zero field selects its default. For Noise, FrameSlots, DynamicSlots and
// ObsSigma, whose zero would be a meaningful choice, a negative value means
// "none" (no noise, no frame, no per-visit slots, noiseless observations).
type Config struct {
	// Family is one of Uniform, Exponential, ScaleFree, Modular, Mixed.
	// Default Uniform.
	Family string
	// Nodes is the number of states of the world (>= 4). Default 500.
	Nodes int
	// Degree is the target mean degree (>= 2, < Nodes). Default 6 (or
	// Nodes-1 if smaller).
	// Scale-free graphs attach ceil(Degree/2) edges per new node.
	Degree int
	// Communities is the number of planted communities for Modular and
	// Mixed, and the number of page sections (which share frame slots) for
	// every family. Default max(2, round(sqrt(Nodes)/2)); at most Nodes/2.
	Communities int
	// GraphSeed fixes the world.
	GraphSeed uint64

	// Episodes and Steps: the output has Episodes*Steps states. Defaults 10
	// and 200.
	Episodes, Steps int
	// Seed fixes the walks.
	Seed uint64

	// Slots (S), Subspaces (M) and K: each state is S*M codes in [0,K).
	// Defaults 32, 32, 64.
	Slots, Subspaces, K int
	// FrameSlots is the number of frame slots at fixed positions at the top
	// of every state: the first ceil(F/2) are shared by all nodes, the rest
	// by the nodes of one section. Default Slots/8. Negative: none.
	FrameSlots int
	// DynamicSlots is the number of slots at the end of every state whose
	// content is drawn afresh at every step (a clock, an advert, a cursor),
	// from a per-subspace law fixed by the world. Default 1 when Slots >= 4,
	// otherwise none. Negative: none.
	DynamicSlots int
	// PoolTiles is the size of the world-wide tile pool from which about half
	// of the content slots are drawn, with Zipf(1) popularity. Default
	// max(8, Nodes/4).
	PoolTiles int
	// Skew is the Zipf exponent of the per-subspace code law used for all
	// random content (frame, pool, unique and per-visit tiles). Default 1.
	Skew float64

	// Noise is the per-coordinate substitution rate: each observed code is
	// replaced, with this probability, by a uniform value in [0,K) (which
	// may equal the original). In [0,1]. Default 0.01. Negative: none.
	Noise float64
	// ActionProbs are the probabilities of the actions (nil: the default
	// set of six, DefaultActionProbs). They must be positive and sum to 1.
	ActionProbs []float64
	// ActionShifts are the content rotations of each action, in content
	// slots: observed content slot c shows latent content slot
	// (c+shift) mod C. Nil with nil ActionProbs: the default shifts; nil
	// with ActionProbs set: no shifts. Otherwise one per action.
	ActionShifts []int

	// Ideal asks for Result.IdealBitsPerState, the exact code length of the
	// generated data under the generator's own law (forward filtering over
	// the hidden nodes). It costs about Nodes*Slots*Subspaces comparisons
	// per episode plus Degree*Slots*Subspaces per step while the node is
	// identifiable from the codes, as it is in the default world.
	Ideal bool

	// Obs asks for float observation vectors besides the codes.
	Obs bool
	// ObsDim is the dimension of one slot vector; a multiple of Subspaces.
	// Default 512.
	ObsDim int
	// ObsSigma is the standard deviation of the Gaussian noise added to
	// each observation dimension; prototype entries have unit variance.
	// Default 0.1. Negative: none.
	ObsSigma float64
}

// ErrInvalidConfig is wrapped by every error Generate returns for a Config
// it rejects; the concrete error is a *ConfigError.
var ErrInvalidConfig = errors.New("graphworld: invalid config")

// ConfigError reports a rejected Config field.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	return "graphworld: invalid Config." + e.Field + ": " + e.Reason
}

// Unwrap lets errors.Is(err, ErrInvalidConfig) succeed.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

func bad(field, format string, args ...any) error {
	return &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// params is a Config with defaults applied and derived sizes computed.
type params struct {
	Config
	frame, frameGlobal, dynamic, content int
	shifts                               []int // reduced mod content
	noise, obsSigma                      float64
	T                                    int
}

// resolve applies defaults and validates. It never mutates cfg's slices.
func resolve(cfg Config) (*params, error) {
	p := &params{Config: cfg}
	c := &p.Config
	if c.Family == "" {
		c.Family = DefaultFamily
	}
	known := false
	for _, f := range Families {
		known = known || f == c.Family
	}
	if !known {
		return nil, bad("Family", "unknown family %q (want one of %v)", c.Family, Families)
	}
	if c.Nodes == 0 {
		c.Nodes = DefaultNodes
	}
	if c.Nodes < 4 || c.Nodes > MaxNodes {
		return nil, bad("Nodes", "%d not in [4, %d]", c.Nodes, MaxNodes)
	}
	if c.Degree == 0 {
		c.Degree = min(DefaultDegree, c.Nodes-1)
	}
	if c.Degree < 2 || c.Degree >= c.Nodes {
		return nil, bad("Degree", "%d not in [2, Nodes-1=%d]", c.Degree, c.Nodes-1)
	}
	if c.Communities == 0 {
		c.Communities = max(2, int(math.Round(math.Sqrt(float64(c.Nodes))/2)))
	}
	if c.Communities < 1 || c.Communities > c.Nodes/2 {
		return nil, bad("Communities", "%d not in [1, Nodes/2=%d]", c.Communities, c.Nodes/2)
	}
	if c.Episodes == 0 {
		c.Episodes = DefaultEpisodes
	}
	if c.Steps == 0 {
		c.Steps = DefaultSteps
	}
	if c.Episodes < 0 {
		return nil, bad("Episodes", "%d is negative", c.Episodes)
	}
	if c.Steps < 0 {
		return nil, bad("Steps", "%d is negative", c.Steps)
	}
	if c.Slots == 0 {
		c.Slots = DefaultSlots
	}
	if c.Subspaces == 0 {
		c.Subspaces = DefaultSubs
	}
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.Slots < 1 {
		return nil, bad("Slots", "%d < 1", c.Slots)
	}
	if c.Subspaces < 1 {
		return nil, bad("Subspaces", "%d < 1", c.Subspaces)
	}
	if int64(c.Slots)*int64(c.Subspaces) > MaxCoords {
		return nil, bad("Slots", "Slots*Subspaces = %d exceeds %d", int64(c.Slots)*int64(c.Subspaces), MaxCoords)
	}
	if c.K < 2 || c.K > MaxAlphabet {
		return nil, bad("K", "%d not in [2, %d]", c.K, MaxAlphabet)
	}
	N := int64(c.Slots) * int64(c.Subspaces)
	T := int64(c.Episodes) * int64(c.Steps)
	if T*N > MaxElements {
		return nil, bad("Steps", "Episodes*Steps*Slots*Subspaces = %d exceeds %d", T*N, int64(MaxElements))
	}
	if int64(c.Nodes)*N > MaxElements {
		return nil, bad("Nodes", "Nodes*Slots*Subspaces = %d exceeds %d", int64(c.Nodes)*N, int64(MaxElements))
	}
	p.T = int(T)

	switch {
	case c.FrameSlots == 0:
		p.frame = c.Slots / 8
	case c.FrameSlots > 0:
		p.frame = c.FrameSlots
	}
	p.frameGlobal = (p.frame + 1) / 2
	switch {
	case c.DynamicSlots == 0 && c.Slots >= 4:
		p.dynamic = 1
	case c.DynamicSlots > 0:
		p.dynamic = c.DynamicSlots
	}
	p.content = c.Slots - p.frame - p.dynamic
	if p.content < 1 {
		return nil, bad("FrameSlots", "frame %d + dynamic %d slots leave no content slot of %d", p.frame, p.dynamic, c.Slots)
	}
	if c.PoolTiles == 0 {
		c.PoolTiles = max(8, c.Nodes/4)
	}
	if c.PoolTiles < 1 || c.PoolTiles > 1<<20 {
		return nil, bad("PoolTiles", "%d not in [1, %d]", c.PoolTiles, 1<<20)
	}
	if c.Skew == 0 {
		c.Skew = DefaultSkew
	}
	if !(c.Skew >= 0 && c.Skew <= 8) { // also rejects NaN
		return nil, bad("Skew", "%v not in [0, 8]", c.Skew)
	}

	switch {
	case c.Noise == 0:
		p.noise = DefaultNoise
	case c.Noise < 0:
		p.noise = 0
	case c.Noise <= 1:
		p.noise = c.Noise
	default: // > 1 or NaN
		return nil, bad("Noise", "%v not in [0, 1]", c.Noise)
	}

	probs, shifts := c.ActionProbs, c.ActionShifts
	if probs == nil {
		if shifts != nil {
			return nil, bad("ActionShifts", "set without ActionProbs")
		}
		probs = DefaultActionProbs
		row := max(1, c.Slots/8)
		shifts = make([]int, len(probs))
		for a := range shifts {
			shifts[a] = defaultShiftsInRows[a]*row + defaultShiftsExtra[a]
		}
	}
	if len(probs) < 1 || len(probs) > MaxActions {
		return nil, bad("ActionProbs", "%d actions not in [1, %d]", len(probs), MaxActions)
	}
	sum := 0.0
	for a, q := range probs {
		if !(q > 0 && q <= 1) {
			return nil, bad("ActionProbs", "probability %v of action %d not in (0, 1]", q, a)
		}
		sum += q
	}
	if math.Abs(sum-1) > 1e-9 {
		return nil, bad("ActionProbs", "probabilities sum to %v, want 1", sum)
	}
	if shifts != nil && len(shifts) != len(probs) {
		return nil, bad("ActionShifts", "%d shifts for %d actions", len(shifts), len(probs))
	}
	c.ActionProbs = append([]float64(nil), probs...)
	p.shifts = make([]int, len(probs))
	for a := range p.shifts {
		if shifts != nil {
			p.shifts[a] = ((shifts[a] % p.content) + p.content) % p.content
		}
	}

	if c.ObsDim == 0 {
		c.ObsDim = DefaultObsDim
	}
	if c.ObsDim < 1 || c.ObsDim%c.Subspaces != 0 || c.ObsDim > 1<<14 {
		return nil, bad("ObsDim", "%d is not a positive multiple of Subspaces=%d up to %d", c.ObsDim, c.Subspaces, 1<<14)
	}
	if c.Obs && int64(c.Subspaces)*int64(c.K)*int64(c.ObsDim) > 1<<26 {
		return nil, bad("ObsDim", "Subspaces*K*ObsDim = %d prototype values exceed %d", int64(c.Subspaces)*int64(c.K)*int64(c.ObsDim), 1<<26)
	}
	if c.Obs && T*int64(c.Slots)*int64(c.ObsDim) > MaxElements {
		return nil, bad("ObsDim", "Episodes*Steps*Slots*ObsDim = %d exceeds %d", T*int64(c.Slots)*int64(c.ObsDim), int64(MaxElements))
	}
	switch {
	case c.ObsSigma == 0:
		p.obsSigma = DefaultObsSigma
	case c.ObsSigma < 0:
		p.obsSigma = 0
	case c.ObsSigma <= 1e6:
		p.obsSigma = c.ObsSigma
	default:
		return nil, bad("ObsSigma", "%v is not a finite standard deviation", c.ObsSigma)
	}
	return p, nil
}
