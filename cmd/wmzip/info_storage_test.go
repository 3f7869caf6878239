package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestInfoStorage: with the model, info accounts for it (total storage
// per state at the file's horizon) and, with --baselines, gives the
// break-evens against the general-purpose compressors.
func TestInfoStorage(t *testing.T) {
	t.Parallel()
	p := smallSet(t)
	mustRun(t, "encode", "-q", "-m", p("m.wmm"), "-o", p("ll.wmz"), p("test.npz"))
	out := mustRun(t, "info", "--json", "--baselines", "-m", p("m.wmm"), p("ll.wmz"))
	var info struct {
		States     int64   `json:"states"`
		Bits       float64 `json:"bits_per_state"`
		Model      int64   `json:"shared_model_bytes"`
		Total      float64 `json:"total_bits_per_state"`
		BreakEvens []struct {
			Larger, Smaller string
		} `json:"break_evens"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if want := float64(8*info.Model)/float64(info.States) + info.Bits; info.Model == 0 || info.Total != want {
		t.Fatalf("total %v, want %v (model %d bytes)", info.Total, want, info.Model)
	}
	if len(info.BreakEvens) == 0 || info.BreakEvens[0].Smaller != "zstd best" && info.BreakEvens[0].Larger != "zstd best" {
		t.Fatalf("break-evens %+v", info.BreakEvens)
	}
	if txt := mustRun(t, "info", "-m", p("m.wmm"), p("ll.wmz")); !strings.Contains(txt, "storage ") {
		t.Fatalf("no storage line:\n%s", txt)
	}
	mustFail(t, "", "--baselines needs the model", "info", "--baselines", p("ll.wmz"))
}
