// Command opqbench trains an opq.Quantizer on the slot vectors of a
// trajectory .npz and prints the figures scripts/faiss_compare.sh sets beside
// faiss's: relative MSE on the training and held-out vectors, training
// seconds and encode throughput. It prints one JSON object on stdout.
//
//	opqbench -train train.npz -test test.npz [-M 32 -bits 6 -sample 0 -threads 2]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"codeberg.org/sbinet/npyio/npz"
	"github.com/wmzip/wmzip/cmd/wmzip/internal/progress"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/train"
)

func main() {
	var (
		trainPath = flag.String("train", "", "training trajectory .npz (array obs)")
		testPath  = flag.String("test", "", "held-out trajectory .npz (array obs)")
		m         = flag.Int("M", 32, "subspaces")
		bits      = flag.Int("bits", 6, "bits per code (K = 2^bits)")
		sample    = flag.Int("sample", 0, "training vectors, vector i*n/sample for i < sample (0 = all)")
		threads   = flag.Int("threads", 2, "threads for training and encoding")
		repeats   = flag.Int("repeats", 5, "encode timing repeats (median reported)")
		iters     = flag.Int("iters", 0, "final Lloyd iterations (0 = default)")
		opqIters  = flag.Int("opq-iters", 0, "rotation updates (0 = default, -1 = none)")
		seed      = flag.Uint64("seed", 1, "training seed")
		quiet     = flag.Bool("quiet", false, "no progress bars")
		cpuprof   = flag.String("cpuprofile", "", "write a CPU profile of training to this file")
		save      = flag.String("save", "", "write the trained quantizer to this file (+ .json with the training time)")
		load      = flag.String("load", "", "skip training: read a quantizer written by -save")
	)
	flag.Parse()
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "opqbench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "opqbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if *trainPath == "" || *testPath == "" {
		fmt.Fprintln(os.Stderr, "opqbench: -train and -test are required")
		os.Exit(2)
	}
	if err := run(*trainPath, *testPath, *m, *bits, *sample, *threads, *repeats, *iters, *opqIters, *seed, *quiet, *save, *load); err != nil {
		fmt.Fprintln(os.Stderr, "opqbench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

type split struct {
	RelMSE  float64 `json:"rel_mse"`
	MSE     float64 `json:"mse"`
	EncodeS float64 `json:"encode_vectors_per_s"`
}

func run(trainPath, testPath string, m, bits, sample, threads, repeats, iters, opqIters int, seed uint64, quiet bool, save, load string) error {
	xtrain, dim, err := loadObs(trainPath)
	if err != nil {
		return err
	}
	xtest, dim2, err := loadObs(testPath)
	if err != nil {
		return err
	}
	if dim != dim2 {
		return fmt.Errorf("dimension %d in %s, %d in %s", dim, trainPath, dim2, testPath)
	}
	if sample <= 0 {
		sample = -1
	}
	progress := progress.Terminal(os.Stderr, quiet)
	cfg := opq.Config{Dim: dim, M: m, K: 1 << bits, Sample: sample, Seed: seed, Threads: threads,
		Iters: iters, OPQIters: opqIters, Progress: progress}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	var q *opq.Quantizer
	var trainS float64
	if load != "" {
		b, err := os.ReadFile(load)
		if err != nil {
			return err
		}
		if q, err = opq.UnmarshalQuantizer(b); err != nil {
			return err
		}
		var meta struct {
			TrainSeconds float64 `json:"train_seconds"`
		}
		if b, err := os.ReadFile(load + ".json"); err == nil {
			_ = json.Unmarshal(b, &meta)
		}
		trainS = meta.TrainSeconds
	} else {
		start := time.Now()
		var err error
		if q, err = train.Quantizer(xtrain, cfg); err != nil {
			return err
		}
		trainS = time.Since(start).Seconds()
	}
	runtime.ReadMemStats(&ms1)
	if save != "" {
		b, err := q.MarshalBinary()
		if err != nil {
			return err
		}
		meta, _ := json.Marshal(map[string]float64{"train_seconds": trainS})
		if err := os.WriteFile(save, b, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(save+".json", meta, 0o644); err != nil {
			return err
		}
	}
	q.SetThreads(threads)
	ntrain := len(xtrain) / dim
	if sample > 0 && sample < ntrain {
		ntrain = sample
	}
	out := map[string]any{
		"impl":               "wmzip/opq",
		"M":                  m,
		"nbits":              bits,
		"threads":            threads,
		"train_vectors":      ntrain,
		"train_seconds":      trainS,
		"train_alloc_mib":    float64(ms1.TotalAlloc-ms0.TotalAlloc) / (1 << 20),
		"train_heap_sys_mib": float64(ms1.HeapSys) / (1 << 20),
		"go_version":         runtime.Version(),
		"gomaxprocs":         runtime.GOMAXPROCS(0),
		"opq_iters":          opqIters,
		"final_lloyd_iters":  iters,
		"train":              nil,
		"test":               nil,
	}
	for _, s := range []struct {
		name string
		x    []float32
	}{{"train", xtrain}, {"test", xtest}} {
		r, err := evaluate(q, s.x, repeats)
		if err != nil {
			return err
		}
		out[s.name] = r
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	return enc.Encode(out)
}

func evaluate(q *opq.Quantizer, x []float32, repeats int) (split, error) {
	n := len(x) / q.Dim()
	codes := make([]uint16, n*q.M())
	var times []float64
	for r := 0; r < max(repeats, 1); r++ {
		start := time.Now()
		if err := q.Encode(x, codes); err != nil {
			return split{}, err
		}
		times = append(times, time.Since(start).Seconds())
	}
	slices.Sort(times)
	rec := make([]float32, len(x))
	if err := q.Decode(codes, rec); err != nil {
		return split{}, err
	}
	var errSum, normSum float64
	for i, v := range x {
		d := float64(rec[i]) - float64(v)
		errSum += d * d
		normSum += float64(v) * float64(v)
	}
	return split{RelMSE: errSum / normSum, MSE: errSum / float64(n), EncodeS: float64(n) / times[len(times)/2]}, nil
}

// loadObs reads the float32 array obs of shape [T,S,d] or [T,d] and returns
// it flattened to slot vectors with their dimension d.
func loadObs(path string) ([]float32, int, error) {
	r, err := npz.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	name := "obs.npy"
	if !slices.Contains(r.Keys(), name) {
		name = "obs"
	}
	h := r.Header(name)
	if h == nil {
		return nil, 0, fmt.Errorf("%s: no array obs", path)
	}
	shape := h.Descr.Shape
	if len(shape) < 2 {
		return nil, 0, fmt.Errorf("%s: obs has shape %v, want [T,S,d] or [T,d]", path, shape)
	}
	var x []float32
	if err := r.Read(name, &x); err != nil {
		return nil, 0, fmt.Errorf("%s: obs: %w", path, err)
	}
	return x, shape[len(shape)-1], nil
}
