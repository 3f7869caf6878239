// Command gobench times the Go side of the Python package's benchmark
// (python/bench/run.py): random reads of one state through File.State
// and File.Obs, and a Writer of a trajectory's states one at a time, on
// the inputs that bench.py times the Python package on. It prints one
// JSON object of nanoseconds: wall time, and CPU time (of the reading
// thread for a read, of the process for a write), which a loaded machine
// disturbs less.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/npz"
)

func main() {
	model := flag.String("model", "", "model file (.wmm)")
	file := flag.String("file", "", "with -keys: the .wmz file read at random")
	keys := flag.String("keys", "", "the reads: one \"episode step\" a line")
	trajPath := flag.String("traj", "", "with -out: the trajectory .npz written")
	out := flag.String("out", "", "the .wmz file written")
	obs := flag.Bool("obs", false, "read and write float observations, not codes")
	flag.Parse()
	log.SetFlags(0)
	runtime.LockOSThread() // the reads' thread CPU time is this thread's
	c, err := wmzip.LoadCodec(*model)
	if err != nil {
		log.Fatal(err)
	}
	res := map[string]any{}
	if *keys != "" {
		res["read_ns"], res["read_cpu_ns"] = reads(c, *file, *keys, *obs)
	}
	if *out != "" {
		res["write_ns"], res["write_cpu_ns"] = write(c, *trajPath, *out, *obs)
	}
	json.NewEncoder(os.Stdout).Encode(res)
}

// threadCPU is the CPU time of the calling thread.
func threadCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		log.Fatal(err)
	}
	return ts.Nano()
}

// processCPU is the CPU time of the process, user and system.
func processCPU() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		log.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reads times each read of the keys, the file open and the codec loaded.
func reads(c *wmzip.Codec, path, keys string, obs bool) (wall, cpu []int64) {
	f, err := wmzip.Open(path, c)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	kf, err := os.Open(keys)
	if err != nil {
		log.Fatal(err)
	}
	defer kf.Close()
	var ks [][2]int
	sc := bufio.NewScanner(kf)
	for sc.Scan() {
		var e, t int
		if _, err := fmt.Sscan(sc.Text(), &e, &t); err != nil {
			log.Fatal(err)
		}
		ks = append(ks, [2]int{e, t})
	}
	wall, cpu = make([]int64, len(ks)), make([]int64, len(ks))
	var codes []uint16
	var floats []float32
	for i, k := range ks {
		c0, t0 := threadCPU(), time.Now()
		if obs {
			_, floats, err = f.Obs(k[0], k[1], floats)
		} else {
			_, codes, err = f.State(k[0], k[1], codes)
		}
		wall[i], cpu[i] = int64(time.Since(t0)), threadCPU()-c0
		if err != nil {
			log.Fatal(err)
		}
	}
	return wall, cpu
}

// write times writing the trajectory's states one at a time, from
// creating the file to closing it.
func write(c *wmzip.Codec, path, out string, obs bool) (wall, cpu int64) {
	tr, err := npz.ReadTrajectory(path)
	if err != nil {
		log.Fatal(err)
	}
	eps := tr.Episodes()
	c0, t0 := processCPU(), time.Now()
	w, err := wmzip.Create(out, c)
	if err != nil {
		log.Fatal(err)
	}
	n, d := tr.S*tr.M, tr.ObsS*tr.ObsD
	for _, ep := range eps {
		if err := w.WriteEpisode(nil); err != nil {
			log.Fatal(err)
		}
		for t := ep[0]; t < ep[1]; t++ {
			if obs {
				err = w.WriteObs(tr.Actions[t], tr.Obs[t*d:(t+1)*d])
			} else {
				err = w.WriteCodes(tr.Actions[t], tr.Codes[t*n:(t+1)*n])
			}
			if err != nil {
				log.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	return int64(time.Since(t0)), processCPU() - c0
}
