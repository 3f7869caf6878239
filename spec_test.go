package wmzip_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// conformanceDir is the folder SPEC.md and it alone must suffice for: a
// decoder written from the text needs no other file.
const conformanceDir = "testdata/conformance"

// TestSpecSelfContained is issue 25, point 5: SPEC.md named tables and
// vectors outside the conformance folder. Every testdata path it names
// must lie in testdata/conformance and exist, and every file of that
// folder must be named by SPEC.md or by the vector lists it describes, so
// that the folder holds what the text calls normative and nothing else.
func TestSpecSelfContained(t *testing.T) {
	spec, err := os.ReadFile("SPEC.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(spec)
	for _, m := range regexp.MustCompile("testdata[^\\s`'\",;:)]*").FindAllString(text, -1) {
		m = strings.TrimRight(m, ".")
		if m != conformanceDir && !strings.HasPrefix(m, conformanceDir+"/") {
			t.Errorf("SPEC.md names %s, outside %s", m, conformanceDir)
			continue
		}
		if _, err := os.Stat(m); err != nil {
			t.Errorf("SPEC.md names %s: %v", m, err)
		}
	}

	named := map[string]bool{}
	var vectors []struct{ File, Input, Model string }
	var rejects []struct{ Base, Model string }
	for name, dst := range map[string]any{"vectors.json": &vectors, "reject.json": &rejects} {
		b, err := os.ReadFile(filepath.Join(conformanceDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, dst); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, v := range vectors {
		named[v.File], named[v.Input], named[v.Model] = true, true, true
	}
	for _, r := range rejects {
		named[r.Base], named[r.Model] = true, true
	}
	files, err := os.ReadDir(conformanceDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		n := f.Name()
		if !named[n] && !strings.Contains(text, "`"+n+"`") && !strings.Contains(text, conformanceDir+"/"+n) {
			t.Errorf("%s/%s is named neither by SPEC.md nor by vectors.json or reject.json", conformanceDir, n)
		}
	}
}
