package wmzip

// Episode is one trajectory: a state per action. A state is Slots slot
// vectors of floats (Obs) or their codes (Codes, Slots × M values). A
// Writer quantizes Obs when Codes is nil, or when both are given and the
// codec has a quantizer; DecodeAll and File.Episode fill Codes, and Obs
// when the codec has a quantizer.
type Episode struct {
	Actions []int64   // Actions[t] leads into state t; the first is ignored
	Obs     []float32 // len(Actions) × Slots × dim, time-major; or nil
	Codes   []uint16  // len(Actions) × Slots × M, time-major; or nil
	Slots   int       // slot vectors per state (0 means 1)
	Meta    []byte    // JSON kept with the episode, or nil
}

func (e *Episode) slots() int { return max(e.Slots, 1) }
