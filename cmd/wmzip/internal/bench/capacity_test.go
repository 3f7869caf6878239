package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestBreakEvenOf(t *testing.T) {
	small := StorageCoder{Name: "small", ModelBytes: 1000, BitsPerState: 200}
	large := StorageCoder{Name: "large", ModelBytes: 11000, BitsPerState: 100}
	for _, be := range []BreakEven{BreakEvenOf(small, large), BreakEvenOf(large, small)} {
		// 8·10,000 bytes of model against 100 bits a state.
		if be.Larger != "large" || be.Smaller != "small" || be.Never || be.States != 800 {
			t.Fatalf("%+v", be)
		}
	}
	if at := large.Total(800); math.Abs(at-small.Total(800)) > 1e-9 {
		t.Fatalf("totals differ at the break-even: %v %v", at, small.Total(800))
	}
	worse := StorageCoder{Name: "worse", ModelBytes: 5000, BitsPerState: 300}
	if be := BreakEvenOf(worse, small); !be.Never || be.Larger != "worse" {
		t.Fatalf("%+v", be)
	}
}

func TestCapacityReport(t *testing.T) {
	r := &CapacityReport{Name: "t", Horizons: []int64{10, 1000, 1e6}, Coders: []StorageCoder{
		{Name: "c=0.5", Capacity: 0.5, ModelBytes: 100, BitsPerState: 50},
		{Name: "c=1", Capacity: 1, ModelBytes: 10000, BitsPerState: 10},
		{Name: "xz", BitsPerState: 100},
	}}
	r.derive()
	if want := []string{"xz", "c=0.5", "c=1"}; strings.Join(r.Best, ",") != strings.Join(want, ",") {
		t.Fatalf("best %v, want %v", r.Best, want)
	}
	if want := []float64{0.5, 0.5, 1}; r.BestCapacity[0] != want[0] || r.BestCapacity[2] != want[2] {
		t.Fatalf("best capacity %v, want %v", r.BestCapacity, want)
	}
	if len(r.BreakEvens) != 3 {
		t.Fatalf("%d break-evens, want 3 (none between two general compressors)", len(r.BreakEvens))
	}
	var txt, js, png bytes.Buffer
	if err := r.WriteText(&txt); err != nil || !strings.Contains(txt.String(), "c=1 vs c=0.5: 1980") {
		t.Fatalf("%v\n%s", err, txt.String())
	}
	if err := r.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"best_capacity"`) {
		t.Fatal(err)
	}
	if err := r.WritePNG(&png); err != nil || !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")) {
		t.Fatal(err)
	}
}
