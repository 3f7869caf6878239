//go:build linux || darwin || freebsd || netbsd || openbsd

package bench

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time, user and system, of this process and of its
// children that have been waited for (the exec'd compressors).
func cpuTime() time.Duration {
	var t time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) != nil {
			return 0
		}
		t += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return t
}
