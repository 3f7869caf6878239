package search

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/npz"
)

// ReadQueries reads the queries of the file at path for codec c (which
// needs a quantizer): a .npy of float vectors or codes, or an .npz whose
// obs (else codes) array holds them. Float queries have the quantizer's
// dimension d, code queries its M codes per slot vector; slot queries
// are [d] or [n,d], state queries [S,d] or [n,S,d] with the model's S
// slots (codes also [n,S*M]). With states nil the shape decides ([d] and
// [n,d] are slot vectors, [n,S,d] states); else *states does. It reports
// whether the queries are states.
func ReadQueries(path string, c *wmzip.Codec, states *bool) ([]Query, bool, error) {
	slot, state := states != nil && !*states, states != nil && *states
	if c.Quantizer() == nil {
		return nil, false, errors.New("search: the model has no quantizer, so codes have no distances")
	}
	g, dim := c.Geometry(), c.Quantizer().Dim()
	var a npz.Array
	if strings.EqualFold(filepath.Ext(path), ".npz") {
		arrs, err := npz.ReadNPZ(path)
		if err != nil {
			return nil, false, err
		}
		found := false
		for _, name := range []string{npz.NameObs, npz.NameCodes} {
			for _, x := range arrs {
				if x.Name == name && !found {
					a, found = x, true
				}
			}
		}
		if !found {
			return nil, false, fmt.Errorf("%s: no `obs` or `codes` array", path)
		}
	} else {
		var err error
		if a, err = npz.ReadNPY(path); err != nil {
			return nil, false, err
		}
	}
	var floats []float32
	var codes []uint16
	width := dim
	switch d := a.Data.(type) {
	case []float32:
		floats = d
	case []float64:
		floats = make([]float32, len(d))
		for i, v := range d {
			floats[i] = float32(v)
		}
	case []uint8:
		codes = make([]uint16, len(d))
		for i, v := range d {
			codes[i] = uint16(v)
		}
		width = g.M
	case []uint16:
		codes, width = d, g.M
	default:
		return nil, false, fmt.Errorf("%s: queries of dtype %s: want floats or codes (uint8, uint16)", path, a.Dtype)
	}
	shape := a.Shape
	// Codes may come as [.., N] for a state: read them as [.., S, M].
	if codes != nil && len(shape) >= 1 && shape[len(shape)-1] == g.N() && g.S > 1 && !slot {
		shape = append(append([]int(nil), shape[:len(shape)-1]...), g.S, g.M)
	}
	what := "slot vectors of"
	if codes != nil {
		what = "codes per slot vector,"
	}
	if len(shape) == 0 || len(shape) > 3 || shape[len(shape)-1] != width {
		return nil, false, fmt.Errorf("%s: shape %v: want [d], [n,d], [S,d] or [n,S,d] with %s %d values (the model's)", path, a.Shape, what, width)
	}
	isState := state || len(shape) == 3 && !slot
	per := width
	if isState {
		if len(shape) < 2 || shape[len(shape)-2] != g.S {
			return nil, false, fmt.Errorf("%s: shape %v: state queries are [S,d] or [n,S,d] with S = %d slots (the model's)", path, a.Shape, g.S)
		}
		per = g.S * width
	}
	n := max(len(floats), len(codes)) / per
	if n == 0 {
		return nil, false, fmt.Errorf("%s: no queries", path)
	}
	qs := make([]Query, n)
	for i := range qs {
		if floats != nil {
			qs[i].Vectors = floats[i*per : (i+1)*per]
		} else {
			qs[i].Codes = codes[i*per : (i+1)*per]
		}
	}
	return qs, isState, nil
}
