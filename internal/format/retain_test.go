package format

import (
	"github.com/wmzip/wmzip/internal/rans"
	"github.com/wmzip/wmzip/internal/wm"
)

// testRetain is an integer-only retention rule for lossy tests, standing in
// for package gate: it omits a coordinate whose prediction gives its modal
// value a probability of at least 1/2, except every fifth coordinate.
func testRetain(prec uint) retainFunc {
	return func(j int, pr *wm.Predictor) bool {
		if j%5 == 0 {
			return true
		}
		if _, hit := pr.Prediction(); hit > 0 {
			return hit < 1<<(prec-1)
		}
		return rans.Freq(pr.Table(), int(pr.Modal()), prec) < 1<<(prec-1)
	}
}
