package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/search"
)

func init() {
	register("search", "k nearest states or slot vectors of a query in .wmz memories", runSearch)
}

func runSearch(args []string) error {
	fs := newFlags("search", "[-m model.wmm] --query q.npy|q.npz [--k 10] [--slot|--state] [--nprobe N] [--episodes A:B] [--steps A:B] [--json] memory.wmz|s3://bucket/prefix/...")
	modelPath := fs.String("m", "", "model file (default: the model embedded in the first file)")
	queryPath := fs.String("query", "", "queries (required): a .npy of floats ([d] or [n,d] slot vectors, [S,d] or [n,S,d] states) or of codes, or an .npz with an obs or codes array")
	k := fs.Int("k", 10, "neighbours per query")
	checkInt("k", k, 1, 1<<20, "a count from 1 to 1048576")
	slot := fs.Bool("slot", false, "slot queries: each query is one slot vector (the default for [d] and [n,d])")
	state := fs.Bool("state", false, "state queries: each query is a whole state of S slot vectors, distances summed over slots (the default for [n,S,d])")
	nprobe := fs.Int("nprobe", 0, "state queries: scan only the N cells of each file's partition nearest the query (0: every state)")
	checkInt("nprobe", nprobe, 0, 1<<16, "a cell count ≥ 0")
	episodes := fs.String("episodes", "", "search only episodes A to B-1 (A:B, A: or :B; numbered across the files in the order given, a prefix's memories in key order)")
	steps := fs.String("steps", "", "search only steps A to B-1 of each episode (A:B, A: or :B)")
	asJSON := fs.Bool("json", false, `print {"results": [[{"episode", "step", "slot", "distance"}, ...], ...]}, one list per query, nearest first`)
	quiet := fs.Bool("q", false, "no progress output or notes")
	threads := threadsFlag(fs, "searching or building a missing index")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *queryPath == "":
		return errors.New("missing --query q.npy")
	case len(pos) == 0:
		return errors.New("want one or more .wmz files")
	case *slot && *state:
		return errors.New("--slot and --state exclude each other")
	case *nprobe > 0 && *slot:
		return errors.New("--nprobe needs state queries: the partition groups states")
	}
	// Memories in a store are read where they are: a prefix stands for
	// the .wmz files under it, in key order.
	pos, mems, err := expandMemories(pos)
	if err != nil {
		return err
	}
	ins := []*string{modelPath, queryPath}
	for i := range pos {
		if mems[pos[i]] == nil {
			ins = append(ins, &pos[i])
		}
	}
	if err := checkFiles(ins); err != nil {
		return err
	}
	opt := search.Options{K: *k, NProbe: *nprobe, Threads: threads()}
	if opt.Episodes, err = rangeFlag("--episodes", *episodes); err != nil {
		return err
	}
	if opt.Steps, err = rangeFlag("--steps", *steps); err != nil {
		return err
	}
	var c *wmzlib.Codec
	if *modelPath != "" {
		if c, err = loadCodec(*modelPath); err != nil {
			return err
		}
	} else {
		f, fh, err := openWMZ(pos[0], "")
		if err != nil {
			return err
		}
		c = f.Codec()
		fh.Close()
	}
	if c.Quantizer() == nil {
		return errors.New("the model has no quantizer, so codes have no distances: search needs a model trained on float obs")
	}
	// Queries are read before the files are opened (a bad query fails
	// first), and again with the member that wrote them for a bundle,
	// whose members take code queries of their own shapes.
	var kind *bool // by the shape
	if *slot || *state {
		kind = state
	}
	qs, states, qerr := search.ReadQueries(*queryPath, c, kind)
	bundle := len(c.Members()) > 1
	if qerr != nil && !bundle {
		return qerr
	}
	ctx := context.Background()
	if len(mems) > 0 {
		s3Indexes(ctx, mems, c, search.BuildOptions{Threads: threads()})
	}
	var idx []*search.Index
	for _, p := range pos {
		var ix *search.Index
		var why error
		if r := mems[p]; r != nil {
			if r.Err != nil {
				return wmzError(p, r.Err, *modelPath)
			}
			ix, why = r.Index, r.Stale
		} else {
			bar := stages(*quiet)
			ix, why, err = search.Open(ctx, p, c, search.BuildOptions{Threads: threads(), Progress: func(stage string, done, total int64) { bar(stage, int(done), int(total)) }})
			if err != nil {
				return wmzError(p, err, *modelPath)
			}
		}
		if why != nil && !*quiet {
			reason := "no index"
			if !errors.Is(why, os.ErrNotExist) {
				reason = why.Error()
			}
			fmt.Fprintf(os.Stderr, "note: %s: %s; decoded it for this search (run 'wmzip index' to keep an index)\n", p, reason)
		}
		idx = append(idx, ix)
	}
	if len(mems) > 0 && !*quiet {
		// Every request of the run: listings, opens, index objects,
		// decodes (and the model or queries, when in the store).
		st, _ := s3Store()
		d := st.Stats()
		fmt.Fprintf(os.Stderr, "read %d memories from the store, %d at a time: %d requests, %d bytes\n", len(mems), s3AtOnce, d.Requests, d.Bytes)
	}
	mem, err := search.NewMemory(c, idx...)
	if err != nil {
		return err
	}
	if bundle {
		if qs, states, err = search.ReadQueries(*queryPath, mem.Codec(), kind); err != nil {
			return err
		}
	}
	opt.States = states
	if opt.NProbe > 0 && !states {
		return errors.New("--nprobe needs state queries: the partition groups states")
	}
	t0 := time.Now()
	res, err := mem.Search(ctx, qs, opt)
	if err != nil {
		return err
	}
	if !*quiet {
		how := "every state"
		if opt.NProbe > 0 {
			how = fmt.Sprintf("%d cells of each partition", opt.NProbe)
		}
		fmt.Fprintf(os.Stderr, "searched %d states (%s) for %d queries in %.3f ms\n", mem.States(), how, len(qs), float64(time.Since(t0).Microseconds())/1000)
	}
	if *asJSON {
		return printJSON(searchJSON(res))
	}
	printResults(mem, pos, res, states)
	return nil
}

// rangeFlag parses A:B, A: or :B into [A, B) (B 0: no bound).
func rangeFlag(name, v string) ([2]int, error) {
	if v == "" {
		return [2]int{}, nil
	}
	a, b, err := stepRange(v)
	if err != nil {
		return [2]int{}, fmt.Errorf("%s %q: want A:B, from A to B-1 (A: to the end, :B from the start)", name, v)
	}
	return [2]int{a, max(b, 0)}, nil
}

type searchHit struct {
	Episode  int     `json:"episode"`
	Step     int     `json:"step"`
	Slot     *int    `json:"slot,omitempty"`
	Distance float64 `json:"distance"`
}

func searchJSON(res [][]search.Result) any {
	out := make([][]searchHit, len(res))
	for i, rs := range res {
		out[i] = make([]searchHit, len(rs))
		for j, r := range rs {
			h := searchHit{Episode: r.Episode, Step: r.Step, Distance: r.Distance}
			if r.Slot >= 0 {
				s := r.Slot
				h.Slot = &s
			}
			out[i][j] = h
		}
	}
	return struct {
		Results [][]searchHit `json:"results"`
	}{out}
}

// printResults prints one table per query.
func printResults(mem *search.Memory, files []string, res [][]search.Result, states bool) {
	kind := "slot vector"
	if states {
		kind = "state"
	}
	for i, rs := range res {
		if i > 0 {
			fmt.Println()
		}
		fmt.Printf("query %d (%s): %d nearest\n", i, kind, len(rs))
		tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := "rank\tepisode\tstep\t"
		if !states {
			head += "slot\t"
		}
		head += "distance\t"
		if len(files) > 1 {
			head += "file\tits episode\t"
		}
		fmt.Fprintln(tw, head)
		for j, r := range rs {
			line := fmt.Sprintf("%d\t%d\t%d\t", j+1, r.Episode, r.Step)
			if !states {
				line += fmt.Sprintf("%d\t", r.Slot)
			}
			line += fmt.Sprintf("%.6g\t", r.Distance)
			if len(files) > 1 {
				f, e := mem.Locate(r.Episode)
				line += fmt.Sprintf("%s\t%d\t", files[f], e)
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
	}
}
