package wmzip_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMECompiles is issue 15, point 8: the README's library snippet did
// not compile against the API it showed, ignored errors and panicked when
// training failed. Every ```go block of README.md must now be a run of lines
// of a function in an example_test.go file (a helper whole, or an excerpt of
// an Example's body), which go test compiles and runs.
func TestREADMECompiles(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlocks(string(readme))
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```go block")
	}
	funcs := exampleFuncs(t)
	for i, b := range blocks {
		found := false
		for _, f := range funcs {
			if contains(f, b) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README.md go block %d is not in any example_test.go:\n%s", i+1, strings.Join(b, "\n"))
		}
	}
}

// goBlocks returns the lines of every ```go block, without their common
// indentation and blank lines at either end.
func goBlocks(md string) [][]string {
	var out [][]string
	var cur []string
	in := false
	for _, l := range strings.Split(md, "\n") {
		switch {
		case !in && strings.TrimSpace(l) == "```go":
			in, cur = true, nil
		case in && strings.TrimSpace(l) == "```":
			in = false
			out = append(out, dedent(cur))
		case in:
			cur = append(cur, strings.TrimRight(l, " \t"))
		}
	}
	return out
}

// exampleFuncs returns the source lines of every function declared in the
// repository's example_test.go files, dedented: each whole, and each body
// without its braces.
func exampleFuncs(t *testing.T) [][]string {
	var out [][]string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "example_test.go" {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start := fd.Pos()
			if fd.Doc != nil {
				start = fd.Doc.Pos()
			}
			whole := string(src[fset.Position(start).Offset:fset.Position(fd.End()).Offset])
			body := string(src[fset.Position(fd.Body.Lbrace).Offset+1 : fset.Position(fd.Body.Rbrace).Offset])
			out = append(out, dedent(strings.Split(whole, "\n")), dedent(strings.Split(body, "\n")))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dedent drops blank lines at either end and the indentation common to
// the other lines.
func dedent(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return unindent(lines)
}

// unindent removes the indentation common to the non-blank lines.
func unindent(lines []string) []string {
	prefix, first := "", true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = ind, false
		}
		for !strings.HasPrefix(ind, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(strings.TrimPrefix(l, prefix), " \t")
	}
	return out
}

// contains reports whether sub is a contiguous run of lines of f, up to
// their common indentation.
func contains(f, sub []string) bool {
	for i := 0; i+len(sub) <= len(f); i++ {
		w := unindent(f[i : i+len(sub)])
		ok := true
		for j := range sub {
			if w[j] != sub[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
