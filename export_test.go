package wmzip

// SetRDSample makes the distortion search of coding by rate and
// distortion sample files of more than 2n states (n in runs of run), for
// tests; the returned function restores the defaults.
func SetRDSample(n, run int) func() {
	n0, r0 := rdSampleStates, rdSampleRun
	rdSampleStates, rdSampleRun = n, run
	return func() { rdSampleStates, rdSampleRun = n0, r0 }
}
