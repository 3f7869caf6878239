//go:build ignore

// Command decode_coverage checks that the conformance vectors reach the
// decode path: it reads a coverage profile of
//
//	go test ./internal/format -run Conformance -coverpkg=./internal/wm,./internal/gate,./internal/rans,./internal/format,./internal/fixed -coverprofile=c.out
//
// and reports, for each file of the decode path, the share of the
// statements of its decode-path functions (listed below) that ran. It
// exits non-zero if a file leaves more statements unreached than the
// known ones counted in unreachable, or if the decode path as a whole
// falls below -min percent: a new decode-path statement needs a vector
// that reaches it. With -v it lists the statements that did not run.
//
//	go run scripts/decode_coverage.go -profile c.out [-min 95] [-v]
//
// The list names, for every file, the functions a decoder runs (reading
// and checking a file, the model and the gate section, the world model's
// inference, the retention rule, the rANS decoder and Quantize), not the
// writer's or training's. The whole files' figures are printed beside it.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const module = "github.com/wmzip/wmzip/"

// decodePath lists the decode-path functions of each file ("*": every
// function of the file; a name with a dot is a method, Type.Name).
var decodePath = map[string][]string{
	"internal/wm/predictor.go":  {"*", "-Predictor.bestTile", "-Model.PredictorBytes", "-Predictor.Model", "-Predictor.Precision"},
	"internal/wm/history.go":    {"*"},
	"internal/wm/stats.go":      {"*"},
	"internal/wm/groups.go":     {"*"},
	"internal/wm/episode.go":    {"*"},
	"internal/wm/dicthyp.go":    {"*"},
	"internal/wm/successors.go": {"*"},
	"internal/wm/succany.go":    {"*"},
	"internal/wm/rows.go":       {"*"},
	"internal/wm/model.go": {"Model.ID", "Model.Section", "reader.need", "reader.u16", "reader.u32", "UnmarshalModel", "UnmarshalModelLimit", "modelMemory",
		"Model.readV2", "readRows", "Model.readFallV3", "Model.checkFall", "Model.checkStarts", "Model.checkCounts", "Model.readStoreRaw", "Model.tableLens", "Model.setOffPrior", "Geometry.Validate", "Model.derive", "spikes", "defaultContNext", "bucketOf", "codeBytes"},
	"internal/wm/index.go":  {"*"},
	"internal/wm/bundle.go": {"IsBundle", "UnmarshalBundle"},
	"internal/wm/fast.go":   {"*", "-Predictor.SlotSymbol", "-Predictor.SlotCandidate", "-Predictor.CopySlot", "-Model.WithLevel", "-Model.Level"},
	"internal/wm/copy.go":   {"*"},
	"internal/wm/store.go": {"prob.update", "newStoreModel", "storeModel.opCtx", "storeModel.litIdx", "storeDecoder.bit", "storeDecoder.tree", "decodeStore", "storeDecoder.values", "storeDecoder.init", "storeDecoder.decode", "storeDecoder.close",
		"storeDecoder.underflow", "storeDecoder.step", "adapt", "storeDecoder.literalTile", "storeDecoder.literalFast", "litTree"},
	"internal/wm/fallrows.go":     {"fallCounts", "fallbackRows", "Model.storeNovel", "Model.deriveFallback"},
	"internal/gate/rule.go":       {"twoStepH", "Params.impact", "Params.binErr", "Params.weight", "keep", "Params.Rule", "Rule.Retain", "Rule.retain", "Rule.decide"},
	"internal/gate/params.go":     {"Params.Prepare", "meanRow", "Params.validate", "Parse", "cutField", "FromModel"},
	"internal/gate/fill.go":       {"rowFill", "Params.spreadFill", "Rule.NewDecider", "Decider.Decide", "keepWeak", "fillWith"},
	"internal/gate/memo.go":       {"Params.rowFillsOf", "rowFills.add", "rowFills.set", "fillTag"},
	"internal/gate/dot.go":        {"dotRows", "dotRowsGo"},
	"internal/rans/decoder.go":    {"NewDecoder", "Decoder.Reset", "Decoder.Err", "Decoder.Close", "Decoder.Decode", "Decoder.advance", "Decoder.DecodeBinary", "Decoder.fail", "searchGo"},
	"internal/rans/rans_amd64.go": {"search", "step64", "products", "quantizeProducts", "quantizeMax", "quantizeSteps", "addFrom", "firstOf", "rowWeights", "narrow", "mode"},
	"internal/rans/table.go":      {"checkPrecision", "Freq", "QuantizeTrusted", "quantizeSpread", "QuantizeProducts", "quantizeProductsGo", "productsGo", "QuantizeMax", "quantizeMaxGo", "firstOfGo", "addFromGo", "quantizeGo", "RowWeights", "rowWeightsGo", "Narrow", "narrowGo", "Mode", "modeGo"},
	"internal/format/reader.go":   {"*"},
	"internal/format/layout.go": {"crc", "Header.Lossless", "Header.levelBytes", "Header.BodyStart", "Header.lambdas", "checkLevels", "parseLevels",
		"parseHeader", "Header.memory", "parseTrailer", "index.marshal", "Report.marshal", "parseReport", "parseIndex", "indexReport", "ceilDiv", "episodeRef.chunkOf", "crc32Update"},
	"internal/format/coder.go": {"retention.deciders", "retention.gateRules", "chunkCoder.use", "useGate", "modeOf", "parseChunkMode", "newChunkCoder", "chunkCoder.begin", "chunkCoder.levelSymbols",
		"chunkCoder.getCode", "chunkCoder.get", "chunkCoder.getSlot", "chunkCoder.decodeState", "chunkCoder.commitOmitted",
		"putCodes", "chunkCoder.decodeChunk", "chunkCoder.startChunk", "chunkCoder.decodeStates", "chunkCoder.endChunk"},
	"internal/format/actions.go": {"newActionModel", "actionModel.reset", "actionModel.table", "actionModel.update", "countTable", "countUpdate", "unzigzag", "escapeBits"},
	"internal/format/levels.go":  {"*"},
	"internal/format/model.go":   {"*"},

	"internal/fixed/fixed.go": {"Lg", "W", "InitCost", "Cost"},
}

// unreachable counts, per file, the decode-path statements no input
// reaches, and why. A change that makes one reachable should lower its
// count (and add a vector); one that adds such statements must say why.
var unreachable = map[string]struct {
	n   int
	why string
}{
	"internal/wm/fast.go":       {11, "SlotTable, Predict, Commit, CommitOmitted and DecodeSlot out of order (misuse, panics); a caller that codes no slot event, or asks for a candidate beyond those SlotTable offered; bestTile (the fast level has no groups, and copies are found by the slot event) (never the container, which codes one before every slot and asks only for the candidates it was given)"},
	"internal/wm/copy.go":       {7, "as fast.go: Predict, CommitOmitted and SlotTable out of order (misuse, panics); a Predict of a slot no slot event started; a candidate beyond those offered"},
	"internal/wm/predictor.go":  {12, "Predict, Commit and CommitOmitted out of order (misuse, panics); a stamp wrapping after 2^32 coordinates, slots or states (nextStamp); the full level's slot-event methods (SlotTable, SlotSymbol, SlotCandidate, CommitSlot, DecodeSlot, bestTile: the full level codes no slot events, the container never calls them); Precision, which the decoder never asks (it reads P from the header)"},
	"internal/wm/model.go":      {2, "a header shorter than 24 bytes, rejected before; a declared store above the caller's memory cap (an implementation limit, not the format's: format.TestEmbeddedModelMemory)"},
	"internal/wm/index.go":      {2, "the key index's generation wrapping after 2^32 uses"},
	"internal/gate/rule.go":     {3, "F = 2^P (R = 0) and H = 0: a prediction has 1 ≤ F < 2^P, and then H ≥ 1; the mean distance of parameters not prepared (Parse prepares them)"},
	"internal/gate/params.go":   {10, "validate's checks that Parse makes first; FromModel without a section (the container checks first)"},
	"internal/gate/fill.go":     {3, "NewDecider on parameters not prepared (Parse prepares them)"},
	"internal/rans/decoder.go":  {10, "a lane, precision or table the container never passes (NewDecoder, fail, Decode's and DecodeBinary's argument checks); Close after an error (chunk decoders stop at the first error; the model store has its own decoder)"},
	"internal/rans/table.go":    {1, "checkPrecision's error: the container passes only precisions it has validated"},
	"internal/format/coder.go":  {7, "the custom retention rule (WithRetainRule, outside the format); NewDecoder's error; a symbol out of range after a failed stream"},
	"internal/format/layout.go": {2, "a level table of 1 or more than 16 levels, rejected before"},
	"internal/format/model.go":  {1, "an embedded model above the caller's memory cap (an implementation limit: TestEmbeddedModelMemory)"},
	"internal/format/reader.go": {14, "more than 2^24 episodes or 2^48 states (beyond any test file); an episode's end met twice (more is cleared with cur); a keyed reader's ten signature statements (its stream, prefix, record, index and signature-record checks; SPEC.md 6.16: no conformance vector is signed yet; signature_test.go runs them)"},

	"internal/fixed/fixed.go": {1, "W(d) of a negative d (maxL is the largest log-weight)"},
}

type block struct {
	file               string
	l0, c0, l1, c1, ns int
	hit                bool
}

type fn struct {
	name   string
	l0, l1 int
}

func main() {
	profile := flag.String("profile", "c.out", "coverage profile")
	min := flag.Float64("min", 95, "least coverage, percent, of the whole decode path")
	verbose := flag.Bool("v", false, "list the statements that did not run")
	flag.Parse()
	blocks, err := readProfile(*profile)
	if err != nil {
		fail(err)
	}
	root, err := repoRoot()
	if err != nil {
		fail(err)
	}
	files := make([]string, 0, len(decodePath))
	for f := range decodePath {
		files = append(files, f)
	}
	sort.Strings(files)
	ok := true
	var allN, allHit int
	fmt.Printf("%-24s %14s %14s\n", "file", "decode path", "whole file")
	for _, f := range files {
		fns, err := funcs(filepath.Join(root, f))
		if err != nil {
			fail(err)
		}
		sel := selected(fns, decodePath[f])
		var n, hit, wn, whit int
		var missed []string
		for _, b := range blocks[f] {
			wn += b.ns
			if b.hit {
				whit += b.ns
			}
			name, in := sel(b.l0)
			if !in {
				continue
			}
			n += b.ns
			if b.hit {
				hit += b.ns
			} else {
				missed = append(missed, fmt.Sprintf("    %s:%d.%d-%d.%d (%s, %d statements)", f, b.l0, b.c0, b.l1, b.c1, name, b.ns))
			}
		}
		if n == 0 {
			fmt.Printf("%-24s %14s (is its package in -coverpkg?)\n", f, "not in profile")
			ok = false
			continue
		}
		allN += n
		allHit += hit
		p := 100 * float64(hit) / float64(n)
		mark := ""
		if u := unreachable[f]; n-hit > u.n {
			mark, ok = fmt.Sprintf("  %d statements unreached, %d known", n-hit, u.n), false
		} else if n-hit < u.n {
			mark = fmt.Sprintf("  (%d known unreachable statements now reached: lower the count)", u.n-(n-hit))
		}
		fmt.Printf("%-24s %6.1f%% %3d/%-3d %6.1f%% %4d/%-4d%s\n", f, p, hit, n, 100*float64(whit)/float64(wn), whit, wn, mark)
		if *verbose {
			if u := unreachable[f]; u.n > 0 {
				fmt.Printf("    known unreachable: %s\n", u.why)
			}
			for _, m := range missed {
				fmt.Println(m)
			}
		}
	}
	total := 100 * float64(allHit) / float64(allN)
	fmt.Printf("%-24s %6.1f%% %d/%d\n", "decode path", total, allHit, allN)
	if total < *min {
		ok = false
	}
	if !ok {
		fmt.Printf("the conformance vectors leave decode-path statements unreached (or cover less than %.0f%%): add a vector that reaches them (go run scripts/decode_coverage.go -v lists them)\n", *min)
		os.Exit(1)
	}
}

// readProfile returns the blocks of a coverage profile by file (relative
// to the module), a block counted as hit if any test binary ran it.
func readProfile(path string) (map[string][]*block, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]*block{}
	seen := map[string]*block{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		// name.go:l0.c0,l1.c1 numStmt count
		colon := strings.LastIndex(line, ":")
		fields := strings.Fields(line[colon+1:])
		if colon < 0 || len(fields) != 3 {
			return nil, fmt.Errorf("bad profile line %q", line)
		}
		file := strings.TrimPrefix(line[:colon], module)
		var b block
		b.file = file
		if _, err := fmt.Sscanf(fields[0], "%d.%d,%d.%d", &b.l0, &b.c0, &b.l1, &b.c1); err != nil {
			return nil, fmt.Errorf("bad profile line %q: %v", line, err)
		}
		b.ns, _ = strconv.Atoi(fields[1])
		cnt, _ := strconv.Atoi(fields[2])
		key := file + ":" + fields[0]
		if p := seen[key]; p != nil {
			p.hit = p.hit || cnt > 0
			continue
		}
		b.hit = cnt > 0
		seen[key] = &b
		out[file] = append(out[file], &b)
	}
	return out, sc.Err()
}

// funcs returns the functions of a Go file with their line ranges.
func funcs(path string) ([]fn, error) {
	fs := token.NewFileSet()
	f, err := parser.ParseFile(fs, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []fn
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			t := fd.Recv.List[0].Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			if id, ok := t.(*ast.Ident); ok {
				name = id.Name + "." + name
			}
		}
		out = append(out, fn{name, fs.Position(fd.Pos()).Line, fs.Position(fd.End()).Line})
	}
	return out, nil
}

// selected returns a function telling whether a line lies in one of the
// listed functions, and which.
func selected(fns []fn, list []string) func(line int) (string, bool) {
	all := false
	want, drop := map[string]bool{}, map[string]bool{}
	for _, n := range list {
		switch {
		case n == "*":
			all = true
		case strings.HasPrefix(n, "-"):
			drop[n[1:]] = true
		default:
			want[n] = true
		}
	}
	for n := range want {
		found := false
		for _, f := range fns {
			found = found || f.name == n
		}
		if !found {
			fail(fmt.Errorf("decode path names %s, which the file does not define", n))
		}
	}
	return func(line int) (string, bool) {
		for _, f := range fns {
			if line >= f.l0 && line <= f.l1 {
				return f.name, (all || want[f.name]) && !drop[f.name]
			}
		}
		return "", false
	}
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "decode_coverage:", err)
	os.Exit(2)
}
