package rans

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/fse"
	"github.com/klauspost/compress/huff0"
)

// Benchmarks. Throughput (SetBytes) counts one byte per symbol, so MB/s is
// millions of symbols per second. Extra metrics: bits/sym (coded, framing
// included), ideal-bits/sym (code length under the coder's own tables; for fse
// and huff0 the empirical order-0 entropy), framing-B (fixed flush bytes per
// stream). Compare implementations with
//
//	go test -run '^$' -bench . -benchtime 20x ./rans

const (
	benchBlock  = 1 << 16 // symbols per stream / per fse and huff0 block
	benchBlocks = 16      // 1,048,576 symbols in all
)

// withImpl runs f once with the pure-Go kernels and, when available, once
// with the assembly.
func withImpl(b *testing.B, f func(b *testing.B)) {
	saved := useAsm
	defer func() { useAsm = saved }()
	useAsm = false
	b.Run("go", f)
	if saved {
		useAsm = true
		b.Run("asm", f)
	}
}

// skewedStatic returns a 64-symbol table with p(s) proportional to 0.8^s and
// n symbols drawn from it.
func skewedStatic(n int) (cum, syms []uint16, ideal float64) {
	w := make([]uint32, 64)
	for s := range w {
		w[s] = uint32(1e6 * math.Pow(0.8, float64(s)))
	}
	cum = make([]uint16, 64)
	if err := Quantize(w, DefaultPrecision, cum); err != nil {
		panic(err)
	}
	r := rand.New(rand.NewPCG(1, 64))
	syms = make([]uint16, n)
	for i := range syms {
		syms[i] = sample(r, cum, DefaultPrecision)
		ideal += idealBits(cum, int(syms[i]), DefaultPrecision)
	}
	return cum, syms, ideal
}

func entropyBits(in []byte) float64 {
	var h [256]int
	for _, c := range in {
		h[c]++
	}
	bits := 0.0
	for _, c := range h {
		if c > 0 {
			bits -= float64(c) * math.Log2(float64(c)/float64(len(in)))
		}
	}
	return bits
}

func reportSize(b *testing.B, size int, ideal float64, n int) {
	b.ReportMetric(float64(8*size)/float64(n), "bits/sym")
	b.ReportMetric(float64(8*size)/ideal, "x-ideal")
	b.ReportMetric(ideal/float64(n), "ideal-bits/sym")
	b.ReportMetric(float64(size), "B")
}

// BenchmarkStatic is benchmark (a): one skewed 64-symbol distribution, rANS
// beside klauspost/compress fse and huff0 on the same symbols.
func BenchmarkStatic(b *testing.B) {
	const n = benchBlock * benchBlocks
	cum, syms, ideal := skewedStatic(n)
	raw := make([]byte, n)
	for i, v := range syms {
		raw[i] = byte(v)
	}
	rawIdeal := entropyBits(raw)

	e, _ := NewEncoder(DefaultLanes, DefaultPrecision)
	encodeRANS := func(streams [][]byte) int {
		size := 0
		for j := range streams {
			e.Reset()
			putN(e, 0, syms[j*benchBlock:(j+1)*benchBlock], cum, 64)
			streams[j], _ = e.Finish(streams[j][:0])
			size += len(streams[j])
		}
		return size
	}
	streams := make([][]byte, benchBlocks)
	size := encodeRANS(streams)

	b.Run("rans/encode", func(b *testing.B) {
		withImpl(b, func(b *testing.B) {
			b.SetBytes(n)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				encodeRANS(streams)
			}
			reportSize(b, size, ideal, n)
		})
	})
	d, _ := NewDecoder(DefaultLanes, DefaultPrecision)
	out := make([]uint16, benchBlock)
	b.Run("rans/decode", func(b *testing.B) {
		withImpl(b, func(b *testing.B) {
			b.SetBytes(n)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for _, s := range streams {
					d.Reset(s)
					for k := range out {
						out[k] = uint16(d.Decode(k%DefaultLanes, cum))
					}
					if err := d.Close(); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportSize(b, size, ideal, n)
		})
	})

	var fs fse.Scratch
	fseOut := make([][]byte, benchBlocks)
	fseSize := 0
	for j := range fseOut {
		c, err := fse.Compress(raw[j*benchBlock:(j+1)*benchBlock], &fs)
		if err != nil {
			b.Fatal(err)
		}
		fseOut[j] = append([]byte(nil), c...)
		fseSize += len(c)
	}
	b.Run("fse/encode", func(b *testing.B) {
		b.SetBytes(n)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for j := 0; j < benchBlocks; j++ {
				fse.Compress(raw[j*benchBlock:(j+1)*benchBlock], &fs)
			}
		}
		reportSize(b, fseSize, rawIdeal, n)
	})
	b.Run("fse/decode", func(b *testing.B) {
		b.SetBytes(n)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for _, c := range fseOut {
				if _, err := fse.Decompress(c, &fs); err != nil {
					b.Fatal(err)
				}
			}
		}
		reportSize(b, fseSize, rawIdeal, n)
	})

	var hs huff0.Scratch
	hOut := make([][]byte, benchBlocks)
	hSize := 0
	for j := range hOut {
		c, _, err := huff0.Compress4X(raw[j*benchBlock:(j+1)*benchBlock], &hs)
		if err != nil {
			b.Fatal(err)
		}
		hOut[j] = append([]byte(nil), c...)
		hSize += len(c)
	}
	b.Run("huff0/encode", func(b *testing.B) {
		b.SetBytes(n)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for j := 0; j < benchBlocks; j++ {
				huff0.Compress4X(raw[j*benchBlock:(j+1)*benchBlock], &hs)
			}
		}
		reportSize(b, hSize, rawIdeal, n)
	})
	b.Run("huff0/decode", func(b *testing.B) {
		dst := make([]byte, benchBlock)
		var rs huff0.Scratch
		b.SetBytes(n)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for _, c := range hOut {
				s, rem, err := huff0.ReadTable(c, &rs)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Decoder().Decompress4X(dst, rem); err != nil {
					b.Fatal(err)
				}
			}
		}
		reportSize(b, hSize, rawIdeal, n)
	})
}

// BenchmarkCycled is benchmark (b): 1,024 distinct 64-symbol tables cycled
// symbol by symbol, symbol i on lane i mod lanes, as the container codes a
// chunk of 1,024-coordinate states.
func BenchmarkCycled(b *testing.B) {
	const n, nt, k = benchBlock * benchBlocks, 1024, 64
	r := rand.New(rand.NewPCG(4, 4))
	cums := randomTables(r, nt, k, DefaultPrecision)
	syms := make([]uint16, n)
	ideal := 0.0
	for i := range syms {
		c := cums[(i%nt)*k : (i%nt+1)*k]
		syms[i] = sample(r, c, DefaultPrecision)
		ideal += idealBits(c, int(syms[i]), DefaultPrecision)
	}
	for _, lanes := range []int{1, 4, 8, 16, 32} {
		e, _ := NewEncoder(lanes, DefaultPrecision)
		encodeAll := func() []byte {
			e.Reset()
			for s := 0; s < n; s += nt {
				putN(e, 0, syms[s:s+nt], cums, k)
			}
			stream, _ := e.Finish(nil)
			return stream
		}
		stream := encodeAll()
		name := fmt.Sprintf("lanes=%d", lanes)
		b.Run(name+"/encode", func(b *testing.B) {
			buf := make([]byte, 0, len(stream))
			withImpl(b, func(b *testing.B) {
				b.SetBytes(n)
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					e.Reset()
					for s := 0; s < n; s += nt {
						putN(e, 0, syms[s:s+nt], cums, k)
					}
					e.Finish(buf[:0])
				}
				reportSize(b, len(stream), ideal, n)
				b.ReportMetric(float64(4*lanes), "framing-B")
			})
		})
		d, _ := NewDecoder(lanes, DefaultPrecision)
		out := make([]uint16, nt)
		b.Run(name+"/decode", func(b *testing.B) {
			withImpl(b, func(b *testing.B) {
				b.SetBytes(n)
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					d.Reset(stream)
					for s := 0; s < n; s += nt {
						for j := range out {
							out[j] = uint16(d.Decode(j%lanes, cums[j*k:(j+1)*k]))
						}
					}
					if err := d.Close(); err != nil {
						b.Fatal(err)
					}
				}
				reportSize(b, len(stream), ideal, n)
			})
		})
	}
}

// BenchmarkQuantize measures Quantize on 64 weights.
func BenchmarkQuantize(b *testing.B) {
	r := rand.New(rand.NewPCG(8, 8))
	ws := make([][]uint32, 256)
	for i := range ws {
		ws[i] = confidentWeights(r, 64, 0.01, nil)
	}
	cum := make([]uint16, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Quantize(ws[i&255], DefaultPrecision, cum)
	}
}
