package format

// testRetain is an integer-only retention rule for lossy tests, standing in
// for package gate: it omits a coordinate whose table gives its modal value
// a probability of at least 1/2, except every fifth coordinate.
func testRetain(prec uint) retainFunc {
	return func(j int, cum []uint16) bool {
		if j%5 == 0 {
			return true
		}
		return freq(cum, int(modal(cum, prec)), prec) < 1<<(prec-1)
	}
}
