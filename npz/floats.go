package npz

import "fmt"

// ReadFloats reads a .npy file of float32 or float64 numbers, any shape,
// as float64.
func ReadFloats(path string) ([]float64, error) {
	a, err := ReadNPY(path)
	if err != nil {
		return nil, err
	}
	switch d := a.Data.(type) {
	case []float64:
		return d, nil
	case []float32:
		w := make([]float64, len(d))
		for i, v := range d {
			w[i] = float64(v)
		}
		return w, nil
	}
	return nil, fmt.Errorf("%s: want float32 or float64 numbers, not %s", path, a.Dtype)
}
