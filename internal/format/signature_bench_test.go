package format

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSignedState reads one state at random from a signed file with
// its public key, beside the same file unsigned: warm, from an opened File
// (one chunk record hashed per read), and cold, opening the file for each
// read (the signature verified each time).
func BenchmarkSignedState(b *testing.B) {
	k := testKey(b, 1)
	for _, c := range benchCorpora(b) {
		signed := signBytes(b, c.file, k)
		for _, read := range []string{"warm", "cold"} {
			for _, s := range []struct {
				name string
				file []byte
				opts []Option
			}{
				{"unsigned", c.file, nil},
				{"signed", signed, []Option{WithPublicKey(k.Public())}},
			} {
				b.Run(fmt.Sprintf("corpus=%s/read=%s/file=%s", c.name, read, s.name), func(b *testing.B) {
					opts := append([]Option{WithCacheBytes(0)}, s.opts...)
					open := func() *File {
						f, err := Open(bytes.NewReader(s.file), int64(len(s.file)), c.m, opts...)
						if err != nil {
							b.Fatal(err)
						}
						return f
					}
					f := open()
					rng := rand.New(rand.NewPCG(75, 76))
					dst := make([]uint16, c.m.Geom.N())
					b.ReportAllocs()
					for b.Loop() {
						if read == "cold" {
							f = open()
						}
						e := rng.IntN(len(c.eps))
						if _, _, err := f.ReadState(e, rng.IntN(len(c.eps[e].Actions)), dst); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/state")
				})
			}
		}
	}
}
