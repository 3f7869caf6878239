package format

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/wmzip/wmzip/wm"
)

// benchFile is 64 states of 32×32 coordinates (K=64) in one episode.
func benchFile(b *testing.B) ([]episode, *wm.Model, []byte) {
	g := wm.Geometry{S: 32, M: 32, K: 64}
	eps := genEpisodes(rand.New(rand.NewPCG(31, 32)), g, []int{64})
	m := trainModel(g, 15, eps)
	return eps, m, encode(b, m, eps)
}

func BenchmarkWrite(b *testing.B) {
	eps, m, _ := benchFile(b)
	b.SetBytes(int64(2 * len(eps[0].codes)))
	b.ReportAllocs()
	for b.Loop() {
		encode(b, m, eps)
	}
}

func BenchmarkRead(b *testing.B) {
	eps, m, file := benchFile(b)
	b.SetBytes(int64(2 * len(eps[0].codes)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readAll(file, m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkState(b *testing.B) {
	_, m, file := benchFile(b)
	f, err := Open(bytes.NewReader(file), int64(len(file)), m)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := f.State(0, i%64); err != nil {
			b.Fatal(err)
		}
	}
}
