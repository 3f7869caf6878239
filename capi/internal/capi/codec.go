package capi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/wm"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/train"
)

// Codec is the object of a codec handle.
type Codec struct{ c *wmzip.Codec }

func newCodec(c *wmzip.Codec) Handle { return add(&Codec{c}) }

func codecOf(h Handle) (*wmzip.Codec, error) {
	c, err := lookup[*Codec](h, "codec")
	if err != nil {
		return nil, err
	}
	return c.c, nil
}

// codecOrNil returns the codec of h, or nil for handle 0 (a file's
// embedded model).
func codecOrNil(h Handle) (*wmzip.Codec, error) {
	if h == 0 {
		return nil, nil
	}
	return codecOf(h)
}

// LoadCodec reads a codec from a model file (.wmm).
func LoadCodec(path string) (Handle, error) {
	c, err := wmzip.LoadCodec(path)
	if err != nil {
		return 0, err
	}
	return newCodec(c), nil
}

// ReadCodec reads a codec from the bytes of a model file, which it
// copies: the codec keeps no reference to b.
func ReadCodec(b []byte) (Handle, error) {
	c, err := wmzip.UnmarshalCodec(bytes.Clone(b))
	if err != nil {
		return 0, err
	}
	return newCodec(c), nil
}

// CodecBytes returns the bytes of the codec's model file.
func CodecBytes(h Handle) ([]byte, error) {
	c, err := codecOf(h)
	if err != nil {
		return nil, err
	}
	return c.MarshalBinary()
}

// SaveCodec writes the codec's model file at path, atomically.
func SaveCodec(h Handle, path string) error {
	b, err := CodecBytes(h)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b)
}

// FreeCodec releases a codec handle; files and writers opened with it keep
// working.
func FreeCodec(h Handle) error {
	_, _, err := release[*Codec](h, "codec")
	return err
}

// CodecInfo describes a codec.
type CodecInfo struct {
	Slots     int // S: slot vectors a state
	Subspaces int // M: codes a slot vector
	Alphabet  int // K: codes are below it
	Dim       int // floats a slot vector; 0 without a quantizer
	HasGate   bool
	ModelID   string
	// The quantizer's mean relative squared error and cosine on the
	// observations held out of its training (Vectors of them; 0 when the
	// model records none).
	QuantizerVectors    int64
	QuantizerDistortion float64
	QuantizerCosine     float64
}

// InfoOfCodec describes the codec of h.
func InfoOfCodec(h Handle) (CodecInfo, error) {
	c, err := codecOf(h)
	if err != nil {
		return CodecInfo{}, err
	}
	return codecInfo(c), nil
}

func codecInfo(c *wmzip.Codec) CodecInfo {
	m, g := c.Model(), c.Geometry()
	in := CodecInfo{Slots: g.S, Subspaces: g.M, Alphabet: g.K, ModelID: m.ID().String()}
	if q := c.Quantizer(); q != nil {
		in.Dim = q.Dim()
	}
	_, err := gate.FromModel(m)
	in.HasGate = err == nil
	if q, ok := train.QuantizerQuality(c); ok {
		in.QuantizerVectors, in.QuantizerDistortion, in.QuantizerCosine = q.Vectors, q.Distortion(), q.Cosine()
	}
	return in
}

// CodecMembers returns the number of members of the codec of h (a
// bundle's, coarsest first; 1 for a codec of one model, its own member)
// and, when they are at most room, a new handle to each; none otherwise,
// so that a caller can ask for the number first.
func CodecMembers(h Handle, room int) (n int, members []Handle, err error) {
	c, err := codecOf(h)
	if err != nil {
		return 0, nil, err
	}
	ms := c.Members()
	if len(ms) > room {
		return len(ms), nil, nil
	}
	members = make([]Handle, len(ms))
	for i, m := range ms {
		members[i] = newCodec(m)
	}
	return len(ms), members, nil
}

// codecJSON is what CodecSummary returns.
type codecJSON struct {
	ModelID   string `json:"model_id"`
	Slots     int    `json:"slots"`     // S: slot vectors a state, as users see it
	Subspaces int    `json:"subspaces"` // M: codes a slot vector
	Alphabet  int    `json:"alphabet"`  // K
	Dim       *int   `json:"dim"`       // floats a slot vector; null: codes only
	HasGate   bool   `json:"has_gate"`
	// ModelGeometry is the world model's own shape of a state, which
	// differs from slots × subspaces when it sees several slot vectors as
	// one of its slots (the same codes: S·M of either).
	ModelGeometry geometryJSON `json:"model_geometry"`
	// Members are the model IDs of a bundle's members, coarsest first (the
	// last is the finest, whose ID is the bundle's), or the codec's own.
	Members []string `json:"members"`
	// Quantizer is how its quantizer did on observations held out of its
	// training, or null when the model records none.
	Quantizer *qualityJSON `json:"quantizer"`
	// Calibration is a codec of one model's coding by rate and distortion
	// measured on episodes held out of its training, by decreasing λ;
	// empty for a bundle (see its members) or a codec trained without one.
	Calibration []ratePointJSON `json:"calibration"`
}

type geometryJSON struct {
	Slots     int `json:"slots"`
	Subspaces int `json:"subspaces"`
	Alphabet  int `json:"alphabet"`
}

type qualityJSON struct {
	Vectors    int64   `json:"vectors"`
	Distortion float64 `json:"distortion"`
	Cosine     float64 `json:"cosine"`
}

// ratePointJSON is a wmzip.RatePoint; a λ of null is +Inf (the
// quantizer's own codes).
type ratePointJSON struct {
	Lambda       *float64 `json:"lambda"`
	Distortion   float64  `json:"distortion"`
	BitsPerState float64  `json:"bits_per_state"`
}

// CodecSummary returns what the codec of h is as a JSON object: model_id,
// slots, subspaces, alphabet, dim, has_gate, model_geometry, members,
// quantizer and calibration (codecJSON).
func CodecSummary(h Handle) ([]byte, error) {
	c, err := codecOf(h)
	if err != nil {
		return nil, err
	}
	in := codecInfo(c)
	g := c.Model().Geom
	j := codecJSON{ModelID: in.ModelID, Slots: in.Slots, Subspaces: in.Subspaces, Alphabet: in.Alphabet,
		HasGate: in.HasGate, ModelGeometry: geometryJSON{g.S, g.M, g.K}, Members: []string{},
		Calibration: []ratePointJSON{}}
	if in.Dim > 0 {
		j.Dim = &in.Dim
	}
	if in.QuantizerVectors > 0 {
		j.Quantizer = &qualityJSON{in.QuantizerVectors, in.QuantizerDistortion, in.QuantizerCosine}
	}
	for _, m := range c.Members() {
		j.Members = append(j.Members, m.Model().ID().String())
	}
	for _, p := range c.Calibration() {
		j.Calibration = append(j.Calibration, ratePointJSON{finite(p.Lambda), p.Distortion, p.BitsPerState})
	}
	return json.Marshal(j)
}

// Quantize writes the codes of observations obs (whole states) to dst,
// which must hold them.
func Quantize(h Handle, obs []float32, dst Codes) error {
	c, err := codecOf(h)
	if err != nil {
		return err
	}
	q := c.Quantizer()
	if q == nil {
		_, err := c.Quantize(nil, nil) // the codec's own error
		return err
	}
	g := c.Geometry()
	per := g.S * q.Dim()
	if len(obs)%per != 0 {
		return Inputf("%d observation values are not whole states of %d slots × %d", len(obs), g.S, q.Dim())
	}
	n := len(obs) / per * g.N()
	if err := fits(dst, n, "codes", g.K); err != nil {
		return err
	}
	codes, err := c.Quantize(dst.dst(nil, n)[:0], obs)
	if err != nil {
		return err
	}
	dst.put(codes)
	return nil
}

// Reconstruct writes the slot vectors of codes (whole states) to dst,
// which must hold them.
func Reconstruct(h Handle, codes Codes, dst []float32) error {
	c, err := codecOf(h)
	if err != nil {
		return err
	}
	q := c.Quantizer()
	if q == nil {
		_, err := c.Reconstruct(nil, nil)
		return err
	}
	g := c.Geometry()
	if codes.Len()%g.N() != 0 {
		return Inputf("%d codes are not whole states of %d", codes.Len(), g.N())
	}
	n := codes.Len() / g.N() * g.S * q.Dim()
	if len(dst) < n {
		return Inputf("an array of %d floats cannot hold the %d of %d states", len(dst), n, codes.Len()/g.N())
	}
	_, err = c.Reconstruct(dst[:0:n], codes.wide(nil))
	return err
}

// fits checks that dst holds n codes below k.
func fits(dst Codes, n int, what string, k int) error {
	if dst.Len() < n {
		return Inputf("an array of %d %s cannot hold %d", dst.Len(), what, n)
	}
	return dst.fits8(k)
}

// Trajectory is the training input of Train, as a trajectory .npz holds
// it (docs/cli.md).
type Trajectory struct {
	States int       // T
	Slots  int       // S
	Obs    []float32 // T×S×Dim, or nil
	Dim    int
	Codes  Codes // T×S×Subspaces, or none
	// Subspaces is M, the codes of a slot vector.
	Subspaces    int
	Actions      []int64 // T, or nil: none known (-1)
	EpisodeStart []int64 // ascending offsets from 0, or nil: one episode
}

// trainOptions are Train's JSON options, named and defaulted as the
// flags of `wmzip train`.
type trainOptions struct {
	Quantizer       string   `json:"quantizer"`
	Subspaces       *int     `json:"subspaces"`
	Centroids       *int     `json:"centroids"`
	Seed            *uint64  `json:"seed"`
	QuantizerIters  int      `json:"quantizer_iters"`
	QuantizerSample int      `json:"quantizer_sample"`
	CodesOnly       bool     `json:"codes_only"`
	Alphabet        int      `json:"alphabet"`
	Precision       *uint    `json:"precision"`
	MaxRef          *int     `json:"max_ref"`
	Capacity        *float64 `json:"capacity"`
	GateHoldout     *int     `json:"gate_holdout"`
	GateBins        string   `json:"gate_bins"`
	GateFor         string   `json:"gate_for"`
	Level           string   `json:"level"`
	MaxStates       *int     `json:"max_states"`
}

// Train builds a codec from a trajectory, as `wmzip train` does from the
// same arrays and options (a JSON object: quantizer, subspaces, centroids, seed,
// quantizer_iters, quantizer_sample, codes_only, alphabet, precision,
// max_ref, capacity, gate_holdout, gate_bins, gate_for, level,
// max_states). It keeps no
// reference to the trajectory's arrays. ctx stops it between stages.
func Train(ctx context.Context, t Trajectory, options []byte) (Handle, error) {
	o := trainOptions{}
	if err := decodeOptions(options, &o); err != nil {
		return 0, err
	}
	val := func(p *int, def int) int {
		if p != nil {
			return *p
		}
		return def
	}
	seed := uint64(1)
	if o.Seed != nil {
		seed = *o.Seed
	}
	prec, capacity := uint(wm.DefaultPrecision), 1.0
	if o.Precision != nil {
		prec = *o.Precision
	}
	if o.Capacity != nil {
		capacity = *o.Capacity
	}
	var gopt gate.CalibOptions
	switch o.GateBins {
	case "", "modal":
	case "entropy":
		gopt.EntropyBins = true
	default:
		return 0, Inputf("gate_bins %q: want modal or entropy", o.GateBins)
	}
	switch o.GateFor {
	case "", "distortion":
	case "search":
		gopt.Marginal, gopt.SearchFill = true, true
	default:
		return 0, Inputf("gate_for %q: want distortion or search", o.GateFor)
	}
	level := wm.LevelCopy
	if o.Level != "" {
		var ok bool
		if level, ok = wm.ParseLevel(o.Level); !ok {
			return 0, Inputf("level %q: want copy, full or fast", o.Level)
		}
	}
	single := o.Subspaces != nil || o.Centroids != nil || o.QuantizerIters != 0
	switch o.Quantizer {
	case "", "family":
		if o.Quantizer != "" && single {
			return 0, Inputf("quantizer family chooses its own geometries: drop subspaces, centroids and quantizer_iters, or use quantizer single")
		}
	case "single":
		single = true
	default:
		return 0, Inputf("quantizer %q: want family or single", o.Quantizer)
	}
	qopt := train.WithFamily(seed)
	if single {
		qopt = train.WithQuantizer(opq.Config{M: val(o.Subspaces, 32), K: val(o.Centroids, 64), Seed: seed, OPQIters: o.QuantizerIters, Sample: o.QuantizerSample})
	}
	opts := []train.Option{
		qopt,
		train.WithAlphabet(o.Alphabet),
		train.WithModel(wm.TrainOptions{Precision: prec, MaxRefStates: val(o.MaxRef, 65536), Capacity: capacity, Level: level}),
		train.WithGate(val(o.GateHoldout, -1), gopt),
		train.WithMaxStates(val(o.MaxStates, train.DefaultMaxStates)),
	}
	if o.CodesOnly {
		opts = append(opts, train.WithCodesOnly())
	}
	tr, err := t.npz()
	if err != nil {
		return 0, err
	}
	c, err := train.Codec(ctx, train.SplitTrajectory(tr, !o.CodesOnly), opts...)
	if err != nil {
		if Code(err) == ErrOther {
			// The trainers' own checks (opq's of the quantizer's shape) wrap
			// no sentinel: they are of the arguments.
			err = fmt.Errorf("%w: %w", wmzip.ErrInput, err)
		}
		return 0, err
	}
	return newCodec(c), nil
}

// npz returns t as a checked trajectory, sharing its arrays (8-bit codes
// are widened).
func (t Trajectory) npz() (*npz.Trajectory, error) {
	tr := &npz.Trajectory{T: t.States, HasActions: true}
	if t.States < 0 || t.Slots <= 0 {
		return nil, Inputf("a trajectory of %d states of %d slots", t.States, t.Slots)
	}
	if t.Obs != nil {
		tr.Obs, tr.ObsS, tr.ObsD = t.Obs, t.Slots, t.Dim
	}
	if !t.Codes.None() {
		tr.Codes, tr.S, tr.M = t.Codes.wide(nil), t.Slots, t.Subspaces
	}
	if tr.Actions = t.Actions; tr.Actions == nil {
		tr.Actions = make([]int64, t.States)
		for i := range tr.Actions {
			tr.Actions[i] = npz.NoAction
		}
	}
	tr.EpisodeStart = t.EpisodeStart
	if err := tr.Validate(); err != nil {
		return nil, err
	}
	return tr, nil
}

// decodeOptions reads a JSON object of options into o; empty is none,
// and an unknown name is an error.
func decodeOptions(b []byte, o any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(o); err != nil {
		return Inputf("options %s: %v", b, err)
	}
	if d.More() {
		return Inputf("options %s: more than one JSON value", b)
	}
	return nil
}
