package objstore_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/objstore"
	"github.com/wmzip/wmzip/objstore/s3test"
)

// The benchmarks read one .wmz file from a local file and from the
// loopback server, side by side: WMZIP_BENCH_WMZ and WMZIP_BENCH_WMM name
// the file and its model (default: the test episodes). They report
// states/s and, for the store, requests and bytes moved per operation
// (docs/results-objstore.md).

// benchFile returns the benchmark's file, its codec, and its key in the
// bucket, uploaded once.
func benchFile(b *testing.B) ([]byte, *wmzip.Codec, string, *objstore.Store) {
	srv := s3test.Shared(b)
	s := srv.Store(b)
	var data []byte
	var c *wmzip.Codec
	if p := os.Getenv("WMZIP_BENCH_WMZ"); p != "" {
		var err error
		if data, err = os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
		if m := os.Getenv("WMZIP_BENCH_WMM"); m != "" {
			if c, err = wmzip.LoadCodec(m); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		data = memFile(b, 16)
		c, _ = fixture()
	}
	key := "bench/file.wmz"
	if o, err := s.Open(context.Background(), s3test.Bucket, key, objstore.ReadOptions{}); err != nil || o.Size() != int64(len(data)) {
		put(b, s, key, data)
	}
	return data, c, key, s
}

func decodeAll(b *testing.B, f *wmzip.File) int64 {
	var n int64
	for e := range f.Episodes() {
		ep, err := f.Episode(e)
		if err != nil {
			b.Fatal(err)
		}
		n += int64(len(ep.Actions))
	}
	return n
}

// BenchmarkWholeFile decodes every episode: from a local file (through
// the same io.ReaderAt interface), from the store at random access with
// read-ahead, and from the store in one streaming GET.
func BenchmarkWholeFile(b *testing.B) {
	data, c, key, s := benchFile(b)
	path := b.TempDir() + "/file.wmz"
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	report := func(b *testing.B, states int64, st objstore.Stats) {
		b.ReportMetric(float64(states)*float64(b.N)/b.Elapsed().Seconds(), "states/s")
		b.ReportMetric(float64(st.Requests)/float64(b.N), "requests/op")
		b.ReportMetric(float64(st.Bytes)/float64(b.N), "bytes-moved/op")
		b.SetBytes(int64(len(data)))
	}
	b.Run("local", func(b *testing.B) {
		var states int64
		for b.Loop() {
			fh, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			f, err := wmzip.NewFile(fh, int64(len(data)), c)
			if err != nil {
				b.Fatal(err)
			}
			states = decodeAll(b, f)
			fh.Close()
		}
		report(b, states, objstore.Stats{})
	})
	b.Run("bucket", func(b *testing.B) {
		var states int64
		var st objstore.Stats
		for b.Loop() {
			f, err := s.OpenFile(ctx, s3test.Bucket, key, c, objstore.ReadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			states = decodeAll(b, f.File)
			x := f.Object.Stats()
			st.Requests += x.Requests
			st.Bytes += x.Bytes
			f.Close()
		}
		report(b, states, st)
	})
	b.Run("stream", func(b *testing.B) {
		var states int64
		var st objstore.Stats
		for b.Loop() {
			r, sr, err := s.NewReader(ctx, s3test.Bucket, key, c)
			if err != nil {
				b.Fatal(err)
			}
			states = 0
			for {
				if _, err := r.NextEpisode(); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
				for {
					if _, _, err := r.ReadState(nil); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
					states++
				}
			}
			x := sr.Stats()
			st.Requests += x.Requests
			st.Bytes += x.Bytes
			sr.Close()
		}
		report(b, states, st)
	})
}

// BenchmarkRandomState reads one state at random per operation through
// a freshly opened file, so that nothing is cached: the cost of a cold
// random read, opening aside.
func BenchmarkRandomState(b *testing.B) {
	data, c, key, s := benchFile(b)
	ctx := context.Background()
	recs, states := chunks(b, data)
	type pick struct{ e, t, chunk int }
	rng := rand.New(rand.NewPCG(3, 4))
	var picks []pick
	ci := 0
	for e := range states {
		t := 0
		for k, n := range states[e] {
			picks = append(picks, pick{e, t + rng.IntN(n), ci + k})
			t += n
		}
		ci += len(states[e])
	}
	rng.Shuffle(len(picks), func(i, j int) { picks[i], picks[j] = picks[j], picks[i] })
	b.Run("local", func(b *testing.B) {
		i := 0
		for b.Loop() {
			p := picks[i%len(picks)]
			i++
			f, err := wmzip.NewFile(bytes.NewReader(data), int64(len(data)), c)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := f.State(p.e, p.t, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bucket", func(b *testing.B) {
		var req, moved, chunkBytes, open int64
		i := 0
		for b.Loop() {
			p := picks[i%len(picks)]
			i++
			f, err := s.OpenFile(ctx, s3test.Bucket, key, c, objstore.ReadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			o := f.Object.Stats()
			if _, _, err := f.State(p.e, p.t, nil); err != nil {
				b.Fatal(err)
			}
			x := f.Object.Stats()
			open += o.Requests
			req += x.Requests - o.Requests
			moved += x.Bytes - o.Bytes
			chunkBytes += recs[p.chunk][1]
		}
		b.ReportMetric(float64(open)/float64(b.N), "open-requests/op")
		b.ReportMetric(float64(req)/float64(b.N), "requests/op")
		b.ReportMetric(float64(moved)/float64(chunkBytes), "moved/chunk")
	})
}

// BenchmarkEpisode decodes one episode at random per operation through a
// freshly opened file: the cost of reading one memory's episode cold,
// opening aside. moved/episode is the bytes moved over the bytes of the
// episode's chunks.
func BenchmarkEpisode(b *testing.B) {
	data, c, key, s := benchFile(b)
	ctx := context.Background()
	recs, states := chunks(b, data)
	epBytes := make([]int64, len(states))
	ci := 0
	for e := range states {
		for range states[e] {
			epBytes[e] += recs[ci][1]
			ci++
		}
	}
	order := rand.New(rand.NewPCG(5, 6)).Perm(len(states))
	b.Run("local", func(b *testing.B) {
		var n int64
		i := 0
		for b.Loop() {
			e := order[i%len(order)]
			i++
			f, err := wmzip.NewFile(bytes.NewReader(data), int64(len(data)), c)
			if err != nil {
				b.Fatal(err)
			}
			ep, err := f.Episode(e)
			if err != nil {
				b.Fatal(err)
			}
			n += int64(len(ep.Actions))
		}
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "states/s")
	})
	b.Run("bucket", func(b *testing.B) {
		var req, moved, want, n int64
		i := 0
		for b.Loop() {
			e := order[i%len(order)]
			i++
			f, err := s.OpenFile(ctx, s3test.Bucket, key, c, objstore.ReadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			o := f.Object.Stats()
			ep, err := f.Episode(e)
			if err != nil {
				b.Fatal(err)
			}
			x := f.Object.Stats()
			req += x.Requests - o.Requests
			moved += x.Bytes - o.Bytes
			want += epBytes[e]
			n += int64(len(ep.Actions))
			f.Close()
		}
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "states/s")
		b.ReportMetric(float64(req)/float64(b.N), "requests/op")
		b.ReportMetric(float64(moved)/float64(want), "moved/episode")
	})
}
