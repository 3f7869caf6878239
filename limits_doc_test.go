package wmzip

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/format"
)

// TestDocumentedLimits: the limits the options' doc comments state are
// the ones their code enforces, at both ends.
func TestDocumentedLimits(t *testing.T) {
	src, err := os.ReadFile("options.go")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(src), "\n// ", " ")
	num := func(pattern string) int {
		m := regexp.MustCompile(pattern).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("options.go: no match for %q", pattern)
		}
		n, err := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	refused := func(o WriterOption) bool { return o.applyWriter(&writerConfig{}) != nil }

	g := num(`chunk, 1 to ([0-9,]+) \(default`)
	def := num(`chunk, 1 to [0-9,]+ \(default ([0-9,]+)\)`)
	if g != format.MaxKeyframeInterval || def != format.DefaultKeyframeInterval {
		t.Errorf("WithKeyframeInterval documents 1..%d (default %d); the container's limit is %d (default %d)", g, def, format.MaxKeyframeInterval, format.DefaultKeyframeInterval)
	}
	if refused(WithKeyframeInterval(g)) || !refused(WithKeyframeInterval(g+1)) || !refused(WithKeyframeInterval(0)) {
		t.Errorf("WithKeyframeInterval does not enforce 1..%d", g)
	}

	lo, hi := num(`lossless\), ([0-9]+) to [0-9]+ of them`), num(`lossless\), [0-9]+ to ([0-9]+) of them`)
	if hi != format.MaxLevels {
		t.Errorf("WithLevels documents at most %d levels; the container's limit is %d", hi, format.MaxLevels)
	}
	levels := func(n int) []float64 {
		l := make([]float64, n)
		for i := range l {
			l[i] = float64(i + 1)
		}
		return l
	}
	if refused(WithLevels(levels(lo)...)) || refused(WithLevels(levels(hi)...)) || !refused(WithLevels(levels(lo-1)...)) || !refused(WithLevels(levels(hi+1)...)) {
		t.Errorf("WithLevels does not enforce %d..%d levels", lo, hi)
	}
}
