package opq

import (
	"math"
	"testing"

	"github.com/wmzip/wmzip/internal/testkit"
)

// TestQueryTableIsADC checks the query helpers against Encode, Decode and
// Rotate: the table summed over a vector's own codes is its squared
// distance to its reconstruction, each code is (within rounding) the
// nearest centroid of the table, and a codes query's table is zero at its
// own codes.
func TestQueryTableIsADC(t *testing.T) {
	for _, perSlot := range []bool{false, true} {
		cfg := smallConfig()
		cfg.PerSlot, cfg.Slots = perSlot, 2
		x, _ := testkit.Planted(3, 40, cfg.Dim*2, cfg.M, cfg.K, 0.1, true)
		q, err := fitted(x, cfg)
		if err != nil {
			t.Fatal(err)
		}
		codes := make([]uint16, len(x)/cfg.Dim*cfg.M)
		if err := q.Encode(x, codes); err != nil {
			t.Fatal(err)
		}
		rec := make([]float32, len(x))
		if err := q.Decode(codes, rec); err != nil {
			t.Fatal(err)
		}
		rot, err := q.Rotate(x)
		if err != nil {
			t.Fatal(err)
		}
		var y, tab, yc []float64
		for v := range len(x) / cfg.Dim {
			s := v % 2
			xv, cv := x[v*cfg.Dim:(v+1)*cfg.Dim], codes[v*cfg.M:(v+1)*cfg.M]
			if y, err = q.RotateQuery(y, xv, s); err != nil {
				t.Fatal(err)
			}
			for i, r := range rot[v*cfg.Dim : (v+1)*cfg.Dim] {
				if math.Abs(y[i]-float64(r)) > 1e-4 {
					t.Fatalf("RotateQuery[%d] = %v, Rotate %v", i, y[i], r)
				}
			}
			if tab, err = q.QueryTable(tab, y, s); err != nil {
				t.Fatal(err)
			}
			var adc, want float64
			for m, c := range cv {
				adc += tab[m*cfg.K+int(c)]
				best := math.Inf(1)
				for k := range cfg.K {
					best = min(best, tab[m*cfg.K+k])
				}
				if tab[m*cfg.K+int(c)] > best+1e-4 {
					t.Fatalf("vector %d subspace %d: code %d is not the nearest centroid", v, m, c)
				}
			}
			for i := range xv {
				d := float64(xv[i]) - float64(rec[v*cfg.Dim+i])
				want += d * d
			}
			if math.Abs(adc-want) > 1e-4*(1+want) {
				t.Fatalf("vector %d: ADC %v, decoded distance %v", v, adc, want)
			}
			if yc, err = q.RotatedCentroids(yc, cv, s); err != nil {
				t.Fatal(err)
			}
			if tab, err = q.QueryTable(tab, yc, s); err != nil {
				t.Fatal(err)
			}
			for m, c := range cv {
				if tab[m*cfg.K+int(c)] != 0 {
					t.Fatalf("codes query: distance %v to itself", tab[m*cfg.K+int(c)])
				}
			}
		}
		if _, err := q.RotateQuery(nil, x[:cfg.Dim-1], 0); err == nil {
			t.Error("RotateQuery accepted a short vector")
		}
		if _, err := q.QueryTable(nil, y[:3], 0); err == nil {
			t.Error("QueryTable accepted a short vector")
		}
		if _, err := q.RotatedCentroids(nil, []uint16{0, 1, 2, uint16(cfg.K)}, 0); err == nil {
			t.Error("RotatedCentroids accepted a code >= K")
		}
		if _, err := q.RotateQuery(nil, x[:cfg.Dim], -1); err == nil {
			t.Error("RotateQuery accepted slot -1")
		}
		if _, err := q.RotateQuery(nil, x[:cfg.Dim], 2); perSlot && err == nil {
			t.Error("RotateQuery accepted slot 2 of 2")
		}
	}
}
