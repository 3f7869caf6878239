package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/search"
)

func init() {
	register("index", "build the search index (.wmzi) beside .wmz files", runIndex)
}

func runIndex(args []string) error {
	fs := newFlags("index", "[-m model.wmm] [--cells N] memory.wmz|s3://bucket/prefix/...")
	modelPath := fs.String("m", "", "model file (default: the model embedded in each file)")
	cells := fs.Int("cells", 0, "cells of the coarse partition that --nprobe searches (0: about √states, none below 20,000 states; -1: none)")
	checkInt("cells", cells, -1, 1<<16-1, "a cell count from -1 (none) to 65535")
	quiet := fs.Bool("q", false, "no progress or summary output")
	threads := threadsFlag(fs, "decoding and partitioning")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return errors.New("want one or more .wmz files")
	}
	// Memories in a store: a prefix stands for the .wmz files under it,
	// each read by ranged GETs, its index uploaded beside it.
	pos, mems, err := expandMemories(pos)
	if err != nil {
		return err
	}
	outs := make([]string, len(pos))
	var os []output
	for i, p := range pos {
		outs[i] = search.IndexPath(p)
		os = append(os, output{flag: "index of " + p, path: &outs[i]})
	}
	ins := []*string{modelPath}
	for i := range pos {
		if mems[pos[i]] == nil {
			ins = append(ins, &pos[i])
		}
	}
	if err := checkFiles(ins, os...); err != nil {
		return err
	}
	var c *wmzlib.Codec
	if *modelPath != "" {
		if c, err = loadCodec(*modelPath); err != nil {
			return err
		}
	}
	streamingGC()
	for i, p := range pos {
		t0 := time.Now()
		bar := stages(*quiet)
		opt := search.BuildOptions{Threads: threads(), Cells: *cells, Progress: func(stage string, done, total int64) { bar(stage, int(done), int(total)) }}
		var ix *search.Index
		if mems[p] != nil {
			o := s3Objects[p]
			ix, err = search.BuildAt(context.Background(), o, o.Size(), c, opt)
		} else {
			ix, err = search.Build(context.Background(), p, c, opt)
		}
		if err != nil {
			return wmzError(p, err, *modelPath)
		}
		if err := ix.Save(outs[i]); err != nil {
			return err
		}
		if !*quiet {
			part := "no partition (flat scan)"
			if ix.Cells() > 0 {
				part = fmt.Sprintf("%d cells", ix.Cells())
			}
			fmt.Printf("wrote %s: %d states, %s, %d bytes (regenerable, not counted as storage) in %.1fs\n",
				outs[i], ix.States(), part, ix.Bytes(), time.Since(t0).Seconds())
		}
	}
	return nil
}
