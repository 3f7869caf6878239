package format

import (
	"bytes"
	"os"
	"syscall"
	"testing"

	"github.com/wmzip/wmzip/wm"
)

func zzEnv(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

func BenchmarkZZWebDecode(b *testing.B) {
	mb, err := os.ReadFile(zzEnv("ZZM", "/tmp/w/m.wmm"))
	if err != nil {
		b.Skip(err)
	}
	m, err := wm.UnmarshalModel(mb)
	if err != nil {
		b.Fatal(err)
	}
	file, _ := os.ReadFile(zzEnv("ZZF", "/tmp/w/t3.wmz"))
	f, err := Open(bytes.NewReader(file), int64(len(file)), m)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	for b.Loop() {
		for e := 0; e < f.Episodes(); e++ {
			if _, _, err := f.DecodeEpisode(e); err != nil {
				b.Fatal(err)
			}
		}
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := (ru1.Utime.Sec-ru0.Utime.Sec)*1e9 + (ru1.Utime.Usec-ru0.Utime.Usec)*1e3
	b.ReportMetric(float64(cpu)/float64(b.N)/float64(f.Info().States), "cpu-ns/state")
}
