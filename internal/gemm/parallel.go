package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallel runs fn(worker, task) for task in [0, tasks) on up to threads
// goroutines. Tasks are taken dynamically, so fn must write only to outputs
// owned by its task; results then do not depend on scheduling.
func Parallel(threads, tasks int, fn func(worker, task int)) {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	threads = min(threads, tasks)
	if threads <= 1 {
		for t := 0; t < tasks; t++ {
			fn(0, t)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t := int(next.Add(1) - 1)
				if t >= tasks {
					return
				}
				fn(w, t)
			}
		}()
	}
	wg.Wait()
}

// Progress reports progress from several goroutines through one
// callback, serialized, with a monotone done count.
type Progress struct {
	mu    sync.Mutex
	fn    func(stage string, done, total int)
	stage string
	done  int
	total int
}

func NewProgress(fn func(string, int, int), stage string, total int) *Progress {
	p := &Progress{fn: fn, stage: stage, total: total}
	if fn != nil {
		fn(stage, 0, total)
	}
	return p
}

func (p *Progress) Add(n int) {
	if p == nil || p.fn == nil {
		return
	}
	p.mu.Lock()
	p.done += n
	p.fn(p.stage, p.done, p.total)
	p.mu.Unlock()
}
