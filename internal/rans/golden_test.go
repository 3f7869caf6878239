package rans

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the test vectors testdata/conformance/rans-*.json")

// vector is one conformance vector: symbol i is coded on lane i mod Lanes
// with the table Quantize(Weights[Table[i]], Precision).
type vector struct {
	Comment   string     `json:"comment"`
	Precision uint       `json:"precision"`
	Lanes     int        `json:"lanes"`
	Weights   [][]uint32 `json:"weights"`
	Cums      [][]uint16 `json:"cums"` // Quantize's output, checked too
	Table     []int      `json:"table"`
	Symbols   []uint16   `json:"symbols"`
	Stream    string     `json:"stream"` // hex
}

func makeVectors() map[string]*vector {
	ex := &vector{
		Comment:   "worked example of SPEC.md, Entropy coding",
		Precision: 12, Lanes: 2,
		Weights: [][]uint32{{60, 30, 9, 1}, {1, 1, 0, 98}},
		Table:   []int{1, 1, 0, 1, 1, 0, 1, 1},
		Symbols: []uint16{2, 0, 3, 2, 1, 1, 2, 3},
	}
	r := rand.New(rand.NewPCG(2026, 11))
	rnd := &vector{
		Comment:   "64-symbol tables, 8 lanes, P=16, 3000 symbols",
		Precision: 16, Lanes: 8,
	}
	const nt, k = 40, 64
	w := make([]uint32, 0, k)
	for i := 0; i < nt; i++ {
		w = confidentWeights(r, k, 0.01+0.3*float64(i%3), w)
		rnd.Weights = append(rnd.Weights, append([]uint32(nil), w...))
	}
	for i := 0; i < 3000; i++ {
		rnd.Table = append(rnd.Table, r.IntN(nt))
	}
	for _, v := range []*vector{ex, rnd} {
		for _, w := range v.Weights {
			c := make([]uint16, len(w))
			if err := Quantize(w, v.Precision, c); err != nil {
				panic(err)
			}
			v.Cums = append(v.Cums, c)
		}
		if v == rnd {
			for _, tb := range v.Table {
				v.Symbols = append(v.Symbols, sample(r, v.Cums[tb], v.Precision))
			}
		}
	}
	return map[string]*vector{"example": ex, "random": rnd}
}

func TestVectors(t *testing.T) {
	for name, v := range makeVectors() {
		e, _ := NewEncoder(v.Lanes, v.Precision)
		for i, s := range v.Symbols {
			putSymbol(e, i%v.Lanes, v.Cums[v.Table[i]], int(s))
		}
		stream, err := e.Finish(nil)
		if err != nil {
			t.Fatal(err)
		}
		v.Stream = hex.EncodeToString(stream)
		path := filepath.Join("..", "..", "testdata", "conformance", "rans-"+name+".json")
		if *update {
			b, _ := json.Marshal(v)
			if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var want vector
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		// Quantize, the encoder and the decoder, each against the file.
		for j, w := range want.Weights {
			c := make([]uint16, len(w))
			if err := Quantize(w, want.Precision, c); err != nil || !equal16(c, want.Cums[j]) {
				t.Fatalf("%s: Quantize(weights[%d]) = %v, file has %v", name, j, c, want.Cums[j])
			}
		}
		e, _ = NewEncoder(want.Lanes, want.Precision)
		for i, s := range want.Symbols {
			putSymbol(e, i%want.Lanes, want.Cums[want.Table[i]], int(s))
		}
		got, _ := e.Finish(nil)
		if hex.EncodeToString(got) != want.Stream {
			t.Fatalf("%s: stream\n%x\nfile has\n%s", name, got, want.Stream)
		}
		wantStream, _ := hex.DecodeString(want.Stream)
		d, _ := NewDecoder(want.Lanes, want.Precision)
		if err := d.Reset(wantStream); err != nil {
			t.Fatal(err)
		}
		for i, s := range want.Symbols {
			if g := d.Decode(i%want.Lanes, want.Cums[want.Table[i]]); g != int(s) {
				t.Fatalf("%s: symbol %d decoded as %d, want %d", name, i, g, s)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// TestExampleTrace prints the encoder's steps of the worked example (go test
// -run ExampleTrace -v), from which SPEC.md's table is written.
func TestExampleTrace(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("trace only with -v")
	}
	v := makeVectors()["example"]
	x := [2]uint32{stateLow, stateLow}
	var out []byte
	for i := len(v.Symbols) - 1; i >= 0; i-- {
		l := i % 2
		start, freq := Symbol(v.Cums[v.Table[i]], int(v.Symbols[i]), v.Precision)
		s := x[l]
		var emitted []byte
		for s>>(32-v.Precision) >= freq {
			emitted = append(emitted, byte(s))
			s >>= 8
		}
		out = append(out, emitted...)
		x[l] = (s/freq)<<v.Precision + s%freq + start
		t.Logf("i=%d lane %d sym %d start %d freq %d: emit % x, x %#x -> %#x", i, l, v.Symbols[i], start, freq, emitted, s, x[l])
	}
	t.Logf("cums %v final %#x %#x emitted % x", v.Cums, x[0], x[1], out)
}
