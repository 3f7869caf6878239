// Command retrieval_partition measures partitioned state search against
// the flat scan on a large memory held as codes (a trajectory .npz with
// codes: a million states of web-pgdocs tiled, say): it builds the index
// in memory (search.FromCodes, the partition Build would make), answers
// state queries (float observations of another trajectory, spread evenly
// over it) by a flat scan and at each --nprobe on one goroutine, and prints
// one JSON object: partition build seconds, seconds per query, and the
// recall@k of the partitioned results against the flat scan's (strict,
// and counting any result within the flat scan's K-th distance).
//
//	go run ./scripts/retrieval_partition -m model.wmm -queries train.npz tiled.npz
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/npz"
	"github.com/wmzip/wmzip/search"
)

func main() {
	model := flag.String("m", "", "model (.wmm) with a quantizer")
	queries := flag.String("queries", "", "trajectory .npz whose float obs are the state queries")
	nq := flag.Int("n", 50, "state queries")
	k := flag.Int("k", 10, "neighbours")
	cells := flag.Int("cells", 0, "cells of the partition (0: search.DefaultCells)")
	probes := flag.String("nprobe", "1,2,4,8,16,32,64", "comma-separated nprobe values")
	threads := flag.Int("threads", 1, "goroutines of the searches (the partition build uses every core)")
	flag.Parse()
	if err := run(*model, *queries, flag.Arg(0), *nq, *k, *cells, *probes, *threads); err != nil {
		fmt.Fprintln(os.Stderr, "retrieval_partition:", err)
		os.Exit(1)
	}
}

func run(model, queries, memPath string, nq, k, cells int, probes string, threads int) error {
	c, err := wmzip.LoadCodec(model)
	if err != nil {
		return err
	}
	mt, err := npz.ReadTrajectory(memPath, npz.WithMaxBytes(1<<34))
	if err != nil {
		return err
	}
	var lens []int
	for _, e := range mt.Episodes() {
		lens = append(lens, e[1]-e[0])
	}
	t0 := time.Now()
	ix, err := search.FromCodes(c, lens, mt.Codes, cells)
	if err != nil {
		return err
	}
	build := time.Since(t0).Seconds()
	mt.Codes = nil
	mem, err := search.NewMemory(c, ix)
	if err != nil {
		return err
	}
	qt, err := npz.ReadTrajectory(queries)
	if err != nil {
		return err
	}
	if qt.Obs == nil {
		return fmt.Errorf("%s: no float obs", queries)
	}
	per := qt.ObsS * qt.ObsD
	var qs []search.Query
	for i := range nq {
		t := i * qt.T / nq
		qs = append(qs, search.Query{Vectors: qt.Obs[t*per : (t+1)*per]})
	}
	ctx := context.Background()
	timed := func(np int) ([][]search.Result, float64, error) {
		t0 := time.Now()
		r, err := mem.Search(ctx, qs, search.Options{K: k, States: true, NProbe: np, Threads: threads})
		return r, time.Since(t0).Seconds() / float64(len(qs)), err
	}
	flat, flatS, err := timed(0)
	if err != nil {
		return err
	}
	type row struct {
		NProbe       int     `json:"nprobe"`
		SecondsPerQ  float64 `json:"seconds_per_query"`
		TimeVsFlat   float64 `json:"time_vs_flat"`
		RecallVsFlat float64 `json:"recall_vs_flat"`
		// A result also counts when its distance is at most the flat
		// scan's K-th: among near-copies (a tiled memory) any K serve.
		RecallTies     float64 `json:"recall_vs_flat_ties"`
		StatesSearched float64 `json:"fraction_of_cells"`
	}
	var rows []row
	for _, f := range strings.Split(probes, ",") {
		np, err := strconv.Atoi(f)
		if err != nil || np < 1 {
			return fmt.Errorf("--nprobe %q", f)
		}
		res, sec, err := timed(np)
		if err != nil {
			return err
		}
		hit, ties := 0, 0
		for i, rs := range res {
			kth := flat[i][len(flat[i])-1].Distance
			want := map[[2]int]bool{}
			for _, r := range flat[i] {
				want[[2]int{r.Episode, r.Step}] = true
			}
			for _, r := range rs {
				if want[[2]int{r.Episode, r.Step}] {
					hit++
				}
				if r.Distance <= kth {
					ties++
				}
			}
		}
		rows = append(rows, row{np, sec, sec / flatS, float64(hit) / float64(len(qs)*k), float64(ties) / float64(len(qs)*k), float64(np) / float64(ix.Cells())})
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	return enc.Encode(map[string]any{
		"states": ix.States(), "cells": ix.Cells(), "index_bytes": ix.Bytes(),
		"build_seconds_from_codes": build, "queries": len(qs), "k": k, "threads": threads,
		"flat_seconds_per_query": flatS, "partitioned": rows,
	})
}
