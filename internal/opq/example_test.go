package opq_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/train"
)

func Example() {
	// 2,000 vectors of 64 values.
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 2000*64)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	q, err := train.Quantizer(x, opq.Config{Dim: 64, M: 8, K: 16, Seed: 1})
	if err != nil {
		panic(err)
	}
	codes := make([]uint16, 2000*q.M())
	if err := q.Encode(x, codes); err != nil {
		panic(err)
	}
	rec := make([]float32, len(x))
	if err := q.Decode(codes, rec); err != nil {
		panic(err)
	}
	b, _ := q.MarshalBinary()
	fmt.Println(q.Dim(), q.M(), q.K(), len(codes), len(b))
	// Output: 64 8 16 16000 20508
}
