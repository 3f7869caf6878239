package format

// A Measure gives the distortion of a reconstructed slot vector, for the
// writer's account and report and the distortion search (SearchLambda):
// the writer calls Slot for every slot of a state in which an omitted
// coordinate took a value other than the state's code. Slot is called
// from the goroutines that code chunks, so it must be safe for concurrent
// use; it must not keep its arguments.
//
// Without a Measure the writer uses the model's gate: the summed distance
// of the slot's wrong values over the mean squared norm of a slot vector
// (gate.Params.SlotNorm), or, under uniform distances, the fraction of the
// slot's values that are wrong.
type Measure interface {
	// Slot returns the distortion that reconstructing slot s of state t
	// of episode e (counted from the first written, t in the episode) as
	// recon adds over its lossless reconstruction truth (M codes each).
	Slot(e, t, s int, truth, recon []uint16) float64
}

// A Measure whose slots each hold several slot vectors (a quantizer's
// vectors side by side in a slot of the world model, SPEC.md 3.6) says how
// many with a method SlotVectors() int; its Slot then returns the sum of
// their distortions, and the report counts slot vectors.
type slotVectorer interface{ SlotVectors() int }

// slotVectors returns the slot vectors of one slot under measure m.
func slotVectors(m Measure) int {
	if v, ok := m.(slotVectorer); ok && v.SlotVectors() > 0 {
		return v.SlotVectors()
	}
	return 1
}

// WithMeasure sets the Writer's distortion measure (see Measure).
func WithMeasure(m Measure) Option {
	return func(c *config) error { c.measure = m; return nil }
}

// WithSource makes a Writer, or SearchLambda, hand fn the reconstruction
// of the states it places, in file order, a chunk at a time (states·N
// codes, a slice fn must not keep), on the caller's goroutine; fn returns
// what the comparison of those states with the floats they were quantized
// from adds to the file's report (its SourceSlots, Source and Cosine).
func WithSource(fn func(recon []uint16) Report) Option {
	return func(c *config) error { c.source = fn; return nil }
}
