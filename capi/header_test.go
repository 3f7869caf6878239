//go:build cgo

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestHeaderExports: wmzip.h declares exactly the functions the library
// exports (cgo checks each export's prototype against the header's; this
// checks that none is declared and missing, or exported and undocumented).
func TestHeaderExports(t *testing.T) {
	h, err := os.ReadFile("wmzip.h")
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, m := range regexp.MustCompile(`(?m)^[a-z][a-z_ ]*\*?(wmz_[a-z_]+)\(`).FindAllSubmatch(h, -1) {
		declared = append(declared, string(m[1]))
	}
	exported := []string{"wmz_errmsg"} // errmsg.c's
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?m)^//export (wmz_[a-z_]+)$`).FindAllSubmatch(b, -1) {
			exported = append(exported, string(m[1]))
		}
	}
	slices.Sort(declared)
	slices.Sort(exported)
	if len(declared) < 30 || !slices.Equal(declared, exported) {
		t.Errorf("wmzip.h declares\n\t%v\nthe library exports\n\t%v", declared, exported)
	}
}
