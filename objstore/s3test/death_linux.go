package s3test

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the server killed if the test process dies first
// (a test that times out does not run its cleanups).
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
