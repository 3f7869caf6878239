package gate

// QuantizerTag is the model-file section holding the opq quantizer whose
// codebooks define embedding-space distances. The gate itself never reads
// it: calibration (in the CLI) turns it into the GATE section's integer
// distance tables, so the decode path does not depend on the quantizer.
const QuantizerTag = "OPQ "

// HoldoutEpisodes is the default number of training episodes held out to
// calibrate the gate: one in eight, at least one, none with fewer than two.
func HoldoutEpisodes(total int) int {
	if total < 2 {
		return 0
	}
	return max(1, total/8)
}
