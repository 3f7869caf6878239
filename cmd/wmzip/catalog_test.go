package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogVerb (issue 40): wmzip catalog writes the manifest of a
// folder, keeps what did not change, reads a replaced memory again, and
// --dry-run writes nothing.
func TestCatalogVerb(t *testing.T) {
	d := t.TempDir()
	p := func(n string) string { return filepath.Join(d, n) }
	gen := []string{"gen", "graphworld", "--nodes", "30", "--graph-seed", "3", "--episodes", "2", "--steps", "30", "-q"}
	mustRun(t, append(gen, "--seed", "1", "-o", p("train.npz"))...)
	mustRun(t, "train", "-q", "-o", p("m.wmm"), p("train.npz"))
	mem := filepath.Join(d, "fleet")
	os.Mkdir(mem, 0o755)
	for i, seed := range []string{"2", "3"} {
		mustRun(t, append(gen, "--seed", seed, "-o", p("t.npz"))...)
		mustRun(t, "encode", "-q", "-m", p("m.wmm"), "-o", filepath.Join(mem, []string{"a.wmz", "b.wmz"}[i]), p("t.npz"))
	}
	_, errs, ok := wmzip(t, "catalog", mem)
	if !ok || !strings.Contains(errs, "2 memories") || !strings.Contains(errs, "2 added") {
		t.Fatalf("catalog: %v %s", ok, errs)
	}
	var cat struct {
		Format   string `json:"format"`
		Memories []struct {
			Key, Fingerprint string
			States           int64
		} `json:"memories"`
	}
	b, err := os.ReadFile(filepath.Join(mem, "wmzip-catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cat); err != nil || cat.Format != "wmzip-catalog" || len(cat.Memories) != 2 || cat.Memories[1].Key != "b.wmz" || cat.Memories[0].States != 60 {
		t.Fatalf("manifest: %v %+v", err, cat)
	}
	mustRun(t, append(gen, "--seed", "9", "--episodes", "3", "-o", p("t.npz"))...)
	mustRun(t, "encode", "-q", "-m", p("m.wmm"), "-o", filepath.Join(mem, "a.wmz"), p("t.npz"))
	_, errs, ok = wmzip(t, "catalog", "--dry-run", mem)
	if !ok || !strings.Contains(errs, "1 kept, 1 refreshed") || !strings.Contains(errs, "not written") {
		t.Fatalf("catalog --dry-run: %v %s", ok, errs)
	}
	after, _ := os.ReadFile(filepath.Join(mem, "wmzip-catalog.json"))
	if string(after) != string(b) {
		t.Fatal("--dry-run changed the manifest")
	}
	out := mustRun(t, "catalog", "-q", "--json", mem)
	if err := json.Unmarshal([]byte(out), &cat); err != nil || cat.Memories[0].States != 90 {
		t.Fatalf("catalog --json: %v %+v", err, cat)
	}
	mustFail(t, "", "want one", "catalog")
}
