//go:build unix

package format

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used, user and system: on a
// shared machine it tells the work a benchmark did from the time it waited.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
