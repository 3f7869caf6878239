// Command retrieval_faiss is the wmzip side of scripts/retrieval_faiss.py:
// it reads a quantizer, codes and queries the script dumped from faiss
// (an .npz of rot [d,d], cent [M,K,d/M], codes [n,M], queries [q,d],
// tile), answers the queries with package search (flat ADC scan, one
// goroutine) and prints one JSON object: the top-k of each query and the
// scan's vectors/s over the codes tiled `tile` times.
//
//	go run ./scripts/retrieval_faiss -k 10 dump.npz
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/search"
)

func main() {
	k := flag.Int("k", 10, "neighbours")
	repeat := flag.Int("repeat", 3, "timed repeats (the median is reported)")
	flag.Parse()
	if err := run(flag.Arg(0), *k, *repeat); err != nil {
		fmt.Fprintln(os.Stderr, "retrieval_faiss:", err)
		os.Exit(1)
	}
}

func run(path string, k, repeat int) error {
	arrs, err := npz.ReadNPZ(path)
	if err != nil {
		return err
	}
	get := map[string]npz.Array{}
	for _, a := range arrs {
		get[a.Name] = a
	}
	rot, cent := get["rot"], get["cent"]
	d, m, kk := rot.Shape[0], cent.Shape[0], cent.Shape[1]
	q, err := opq.New(d, m, kk, [][]float32{rot.Data.([]float32)}, [][]float32{cent.Data.([]float32)})
	if err != nil {
		return err
	}
	c8 := get["codes"].Data.([]uint8)
	codes := make([]uint16, len(c8))
	for i, v := range c8 {
		codes[i] = uint16(v)
	}
	n := len(codes) / m
	mem, err := search.NewCodesMemory(q, 1, []int{n}, codes)
	if err != nil {
		return err
	}
	qa := get["queries"].Data.([]float32)
	var qs []search.Query
	for i := 0; i < len(qa); i += d {
		qs = append(qs, search.Query{Vectors: qa[i : i+d]})
	}
	res, err := mem.Search(context.Background(), qs, search.Options{K: k, Threads: 1})
	if err != nil {
		return err
	}
	ids := make([][]int, len(res))
	dist := make([][]float64, len(res))
	for i, rs := range res {
		for _, r := range rs {
			ids[i] = append(ids[i], r.Step)
			dist[i] = append(dist[i], r.Distance)
		}
	}
	// Throughput: the codes tiled to the size of faiss's timed index.
	tile := int(get["tile"].Data.([]int64)[0])
	big := make([]uint16, 0, len(codes)*tile)
	for range tile {
		big = append(big, codes...)
	}
	bm, err := search.NewCodesMemory(q, 1, []int{n * tile}, big)
	if err != nil {
		return err
	}
	var times []float64
	for range repeat {
		t0 := time.Now()
		if _, err := bm.Search(context.Background(), qs, search.Options{K: k, Threads: 1}); err != nil {
			return err
		}
		times = append(times, time.Since(t0).Seconds())
	}
	med := median(times)
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"ids": ids, "distances": dist,
		"scan_vectors_per_s": float64(n*tile) * float64(len(qs)) / med,
		"scan_seconds":       med,
	})
}

func median(v []float64) float64 {
	for i := range v {
		for j := i + 1; j < len(v); j++ {
			if v[j] < v[i] {
				v[i], v[j] = v[j], v[i]
			}
		}
	}
	return v[len(v)/2]
}
