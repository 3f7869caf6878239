package wm

// Predictor runs the model over one stream of states. The writer and the
// reader each drive their own Predictor through the same calls with the same
// reconstructed values, so both see the same tables.
//
// Call sequence for every state:
//
//	p.Begin(action)
//	for j := 0; j < N; j++ { tab := p.Table(j); ...; p.Commit(j, v) }
//
// Reset forgets the history (keyframe or episode start); the next state is
// then predicted without history ("intra"), and its action is ignored.
// A Predictor is not safe for concurrent use.
type Predictor struct {
	m     *Model
	cum   []uint16
	w     []uint32
	fresh bool
}

// NewPredictor returns a Predictor with empty history.
func (m *Model) NewPredictor() *Predictor {
	return &Predictor{m: m, cum: make([]uint16, m.Geom.K), w: make([]uint32, m.Geom.K), fresh: true}
}

// Model returns the model the predictor runs.
func (p *Predictor) Model() *Model { return p.m }

// Reset forgets all history.
func (p *Predictor) Reset() { p.fresh = true }

// Begin starts the next state, led into by action (ignored after Reset).
func (p *Predictor) Begin(action int64) {}

// Table returns the cumulative frequency table of coordinate j of the
// current state: K entries, cum[0] = 0, strictly increasing, the frequency
// of the last symbol being 2^Precision - cum[K-1]. The slice is owned by the
// Predictor and valid until the next call.
func (p *Predictor) Table(j int) []uint16 {
	k := p.m.Geom.K
	copy(p.w, p.m.counts[j*k:(j+1)*k])
	quantizePlaceholder(p.w, p.m.Precision, p.cum)
	return p.cum
}

// Commit records the reconstructed value of coordinate j.
func (p *Predictor) Commit(j int, v uint16) {}

// quantizePlaceholder is a stand-in until rans.Quantize exists.
func quantizePlaceholder(w []uint32, prec uint, cum []uint16) {
	total := uint64(0)
	for _, x := range w {
		total += uint64(x)
	}
	k := uint64(len(w))
	avail := uint64(1)<<prec - k
	var acc uint64
	for i, x := range w {
		cum[i] = uint16(acc)
		acc += 1 + uint64(x)*avail/total
	}
	// give the rounding remainder to the last symbol implicitly
}
