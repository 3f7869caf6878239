package wmzip_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/wm"
)

// specText is SPEC.md, which TestSpecChecklist and TestSpecVectorTable
// read section by section.
type specText struct {
	text     string
	sections map[string]string // "6.2" → its text, subsections included
}

// headingRe matches every heading; the numbered ones name sections.
var headingRe = regexp.MustCompile(`(?m)^(#{1,4}) (?:(\d+(?:\.\d+)*)\.? )?`)

func readSpec(t *testing.T) specText {
	t.Helper()
	b, err := os.ReadFile("SPEC.md")
	if err != nil {
		t.Fatal(err)
	}
	s := specText{text: string(b), sections: map[string]string{}}
	hs := headingRe.FindAllStringSubmatchIndex(s.text, -1)
	for i, h := range hs {
		if h[4] < 0 {
			continue
		}
		level, num := h[3]-h[2], s.text[h[4]:h[5]]
		end := len(s.text)
		for _, n := range hs[i+1:] {
			if n[3]-n[2] <= level {
				end = n[0]
				break
			}
		}
		s.sections[num] = s.text[h[0]:end]
	}
	if len(s.sections) < 50 {
		t.Fatalf("SPEC.md: %d numbered sections", len(s.sections))
	}
	return s
}

// section returns the text of the section numbered num (its subsections
// included).
func (s specText) section(t *testing.T, num string) string {
	t.Helper()
	x, ok := s.sections[num]
	if !ok {
		t.Fatalf("SPEC.md has no section %s", num)
	}
	return x
}

// between returns the text from the line starting with from up to the
// next line starting with to.
func between(t *testing.T, text, from, to string) string {
	t.Helper()
	i := strings.Index(text, from)
	if i < 0 {
		t.Fatalf("SPEC.md: no %q", from)
	}
	j := strings.Index(text[i+len(from):], to)
	if j < 0 {
		t.Fatalf("SPEC.md: no %q after %q", to, from)
	}
	return text[i : i+len(from)+j]
}

// versionList reads the versions a phrase names: "3 or 4", "1, 2, 3 and
// 4", "1 to 4", "1".
func versionList(t *testing.T, phrase string) []int {
	t.Helper()
	if m := regexp.MustCompile(`^(\d+) to (\d+)$`).FindStringSubmatch(phrase); m != nil {
		lo, _ := strconv.Atoi(m[1])
		hi, _ := strconv.Atoi(m[2])
		var vs []int
		for v := lo; v <= hi; v++ {
			vs = append(vs, v)
		}
		return vs
	}
	var vs []int
	for _, f := range regexp.MustCompile(`\d+`).FindAllString(phrase, -1) {
		v, _ := strconv.Atoi(f)
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		t.Fatalf("no versions in %q", phrase)
	}
	return vs
}

// find returns the first submatch of re in text, failing the test if
// there is none.
func find(t *testing.T, text, where string, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%s: no match for %s", where, re)
	}
	return m[1]
}

// checklistItems returns the numbered items of section 7, each its text.
func checklistItems(t *testing.T, s specText) []string {
	t.Helper()
	sec := s.section(t, "7")
	var items []string
	heading := false // within a bold line that groups the items after it
	for _, line := range strings.Split(sec, "\n") {
		heading = strings.HasPrefix(line, "**") || heading && strings.TrimSpace(line) != ""
		if heading {
			continue
		}
		if m := regexp.MustCompile(`^(\d+)\. `).FindStringSubmatch(line); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != len(items)+1 {
				t.Fatalf("checklist item %d follows item %d", n, len(items))
			}
			items = append(items, line)
			continue
		}
		if len(items) > 0 && strings.HasPrefix(line, "   ") {
			items[len(items)-1] += "\n" + line
		} else if len(items) > 0 && strings.TrimSpace(line) != "" {
			t.Fatalf("checklist: line %q belongs to no item", line)
		}
	}
	if len(items) < 20 {
		t.Fatalf("the checklist has %d items", len(items))
	}
	return items
}

var (
	codeSpanRe = regexp.MustCompile("`[^`]*`")
	citeRe     = regexp.MustCompile(`\b\d+\.\d+(?:\.\d+)?\b`)
	// An operation or function a checklist item names: Predict(j),
	// Finish(), CommitOmitted.
	operationRe = regexp.MustCompile("^`([A-Z][A-Za-z0-9]+)(?:\\(.*\\))?`$")
)

// TestSpecChecklist checks the decoder checklist (SPEC.md section 7)
// against the sections it summarizes, so that the two cannot drift
// apart (issue 42: the checklist accepted one container version where
// 6.2 accepted two): every item cites sections that exist, every
// operation it names is in one of the sections it cites, and the
// versions it accepts are those of the sections, of the preamble and of
// the reference decoder.
func TestSpecChecklist(t *testing.T) {
	s := readSpec(t)
	items := checklistItems(t, s)
	for i, item := range items {
		prose := codeSpanRe.ReplaceAllString(item, "")
		cited := citeRe.FindAllString(prose, -1)
		if len(cited) == 0 {
			t.Errorf("checklist item %d cites no section", i+1)
		}
		var text strings.Builder
		for _, c := range cited {
			x, ok := s.sections[c]
			if !ok {
				t.Errorf("checklist item %d cites section %s, which SPEC.md does not have", i+1, c)
			}
			text.WriteString(x)
		}
		for _, span := range codeSpanRe.FindAllString(item, -1) {
			if m := operationRe.FindStringSubmatch(span); m != nil && !strings.Contains(text.String(), m[1]) {
				t.Errorf("checklist item %d names %s, which none of the sections it cites (%v) has", i+1, m[1], cited)
			}
		}
	}

	intro := s.text[:strings.Index(s.text, "## 1.")]
	check := func(what string, want []int, sources map[string]string) {
		for where, phrase := range sources {
			if got := versionList(t, phrase); !slices.Equal(got, want) {
				t.Errorf("%s versions: %s says %v (%q), the reference decoder reads %v", what, where, got, phrase, want)
			}
		}
	}
	var container []int
	for v := format.MinVersion; v <= format.Version; v++ {
		container = append(container, v)
	}
	sec62 := s.section(t, "6.2")
	check("container", container, map[string]string{
		"checklist item 1":    find(t, items[0], "item 1", `version ([\d, ]+(?:or|and) \d+|\d+), else \*unsupported\*`),
		"6.2, header table":   find(t, sec62, "6.2", "\\| 8 \\| u16 \\| version \\| ([^|]+?) \\|"),
		"6.2, the checks":     find(t, sec62, "6.2", `version \(a value\s+other than ([\d, ]+and \d+) is \*unsupported\*`),
		"the preamble":        find(t, intro, "preamble", `Container versions ([\d, ]+and \d+|\d+ to \d+)`),
		"the heading of 6":    find(t, s.section(t, "6"), "6", `^## 6\. Container \(\.wmz\), versions ([\d, ]+and \d+)`),
		"the decoding of 6.3": find(t, s.section(t, "6.3"), "6.3", `version\s+(3 or 4) that does not parse`),
	})
	var model []int
	for v := 1; v <= wm.ModelVersion; v++ {
		model = append(model, v)
	}
	sec31 := s.section(t, "3.1")
	check("model file", model, map[string]string{
		"checklist item 3":  find(t, items[2], "item 3", `version ([\d, ]+or \d+),`),
		"3.1, header table": find(t, sec31, "3.1", "\\| 4 \\| u16 \\| version \\| ([^|]+?) \\|"),
		"3.1, the checks":   find(t, sec31, "3.1", `a version other than ([\d, ]+and \d+) is \*unsupported\*`),
		"the preamble":      find(t, intro, "preamble", `model file versions (\d+ to \d+)`),
	})
	sec36 := s.section(t, "3.6")
	check("bundle", []int{wm.BundleVersion}, map[string]string{
		"checklist item 4":   find(t, items[3], "item 4", `version (\d+), else \*unsupported\*`),
		"3.6, bundle header": find(t, sec36[strings.Index(sec36, "`WMZB`"):], "3.6", "\\| 4 \\| u16 \\| version \\| ([^|]+?) \\|"),
		"the preamble":       find(t, intro, "preamble", `bundle version (\d+)`),
	})
}

// TestSpecVectorTable checks the table of SPEC.md 8.3 against
// testdata/conformance/vectors.json (issue 42: the table had left out
// four vectors): it lists every vector, and nothing else, with the model
// the vector names. And every rejection vector names a section that
// exists.
func TestSpecVectorTable(t *testing.T) {
	s := readSpec(t)
	raw, err := os.ReadFile(filepath.Join(conformanceDir, "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct{ File, Model string }
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	table := between(t, s.section(t, "8.3"), "| file | model | what it exercises |", "\n\n")
	rows := map[string]string{} // file → its row's model cell
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(line, "|")
		if len(cells) != 5 {
			t.Fatalf("8.3: row %q has %d cells", line, len(cells)-2)
		}
		files := regexp.MustCompile("`([^`]+\\.wmz)`").FindAllStringSubmatch(cells[1], -1)
		if len(files) == 0 {
			t.Errorf("8.3: row %q names no file", line)
		}
		for _, f := range files {
			if _, dup := rows[f[1]]; dup {
				t.Errorf("8.3 lists %s twice", f[1])
			}
			rows[f[1]] = cells[2]
		}
	}
	for _, v := range vectors {
		cell, ok := rows[v.File]
		if !ok {
			t.Errorf("vectors.json has %s, which the table of 8.3 does not list", v.File)
			continue
		}
		if !strings.Contains(cell, "`"+v.Model+"`") {
			t.Errorf("8.3 gives %s the model %s, vectors.json %s", v.File, strings.TrimSpace(cell), v.Model)
		}
		delete(rows, v.File)
	}
	for f := range rows {
		t.Errorf("the table of 8.3 lists %s, which vectors.json does not have", f)
	}

	raw, err = os.ReadFile(filepath.Join(conformanceDir, "reject.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rejects []struct{ Name, Section string }
	if err := json.Unmarshal(raw, &rejects); err != nil {
		t.Fatal(err)
	}
	for _, r := range rejects {
		if _, ok := s.sections[r.Section]; !ok {
			t.Errorf("rejection vector %q names section %s, which SPEC.md does not have", r.Name, r.Section)
		}
	}
	t.Logf("8.3: %d vectors, %d rejection vectors", len(vectors), len(rejects))
}

// TestSpecGlossary checks that the glossary gives each symbol one row
// (issue 42: PB, ec and CT had two meanings each) and cites sections
// that exist.
func TestSpecGlossary(t *testing.T) {
	s := readSpec(t)
	i := strings.Index(s.text, "\n## Glossary\n")
	if i < 0 {
		t.Fatal("SPEC.md has no glossary")
	}
	rows := map[string]string{} // symbol → the row that defines it
	n := 0
	for _, line := range strings.Split(s.text[i:], "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || strings.HasPrefix(line, "|---") || strings.TrimSpace(cells[1]) == "symbol" {
			continue
		}
		n++
		for _, sym := range codeSpanRe.FindAllString(cells[1], -1) {
			if prev, dup := rows[sym]; dup {
				t.Errorf("glossary: %s has two rows:\n%s\n%s", sym, prev, line)
			}
			rows[sym] = line
		}
		for _, c := range citeRe.FindAllString(cells[3], -1) {
			if _, ok := s.sections[c]; !ok {
				t.Errorf("glossary: %s cites section %s, which SPEC.md does not have", strings.TrimSpace(cells[1]), c)
			}
		}
	}
	if n < 100 {
		t.Fatalf("the glossary has %d rows", n)
	}
}
