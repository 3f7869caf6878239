package format

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/wm"
)

// BenchmarkReadFiles decodes, whole and in order, the .wmz files listed in
// WMZIP_BENCH_FILES (comma-separated "model.wmm:file.wmz" pairs), one
// sub-benchmark each: the decode loop on real data, for profiles
// (go test -run - -bench ReadFiles -cpuprofile cpu.out). Skipped when
// the variable is unset.
func BenchmarkReadFiles(b *testing.B) {
	list := os.Getenv("WMZIP_BENCH_FILES")
	if list == "" {
		b.Skip("WMZIP_BENCH_FILES not set")
	}
	for _, pair := range strings.Split(list, ",") {
		mp, fp, ok := strings.Cut(pair, ":")
		if !ok {
			b.Fatalf("WMZIP_BENCH_FILES: %q is not model.wmm:file.wmz", pair)
		}
		mb, err := os.ReadFile(mp)
		if err != nil {
			b.Fatal(err)
		}
		m, err := wm.UnmarshalModel(mb)
		if err != nil {
			b.Fatal(err)
		}
		file, err := os.ReadFile(fp)
		if err != nil {
			b.Fatal(err)
		}
		eps, err := readAll(file, m)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, e := range eps {
			n += len(e.Actions)
		}
		b.Run(filepath.Base(fp), func(b *testing.B) {
			benchRead(b, m, file, n)
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "states/s")
		})
	}
}
