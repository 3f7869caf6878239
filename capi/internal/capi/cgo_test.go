package capi

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyCAPIUsesCgo: the C library (capi/) is the one package of the
// repository that imports "C"; the Go library builds without a C compiler.
func TestOnlyCAPIUsesCgo(t *testing.T) {
	root := filepath.Join("..", "..", "..") // the repository
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == "C" {
				rel, _ := filepath.Rel(root, path)
				found = append(found, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatal("no file imports \"C\": the walk missed capi/")
	}
	for _, f := range found {
		if filepath.Dir(f) != "capi" {
			t.Errorf("%s imports \"C\": only the C library (capi/) may use cgo", f)
		}
	}
}
