package wm

import "testing"

// TestOffsetLawExample is issue 25, point 2: SPEC.md 3.2 computed the
// offset law's spikes and floor on "entries" without saying whether those
// were the stored values or the frequencies. Its worked example, on the
// frequencies (stored values plus 1), must be what the model derives.
func TestOffsetLawExample(t *testing.T) {
	stored := []uint16{9999, 29999, 4999, 9999, 5000, 5534}
	row := make([]uint16, len(stored))
	for i, v := range stored {
		row[i] = v + 1
	}
	o := spikes(row)
	wantD, wantE := []uint16{1, 0, 3, 5}, []uint32{25000, 5000, 5000, 535}
	if o.floor != 5000 || o.n != 4 {
		t.Fatalf("floor %d, %d spikes; SPEC.md 3.2 says 5000, 4", o.floor, o.n)
	}
	for k := range o.n {
		if o.d[k] != wantD[k] || o.e[k] != wantE[k] {
			t.Fatalf("spike %d at %d, excess %d; SPEC.md 3.2 says %d, %d", k, o.d[k], o.e[k], wantD[k], wantE[k])
		}
	}
}
