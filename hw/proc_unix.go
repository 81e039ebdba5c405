//go:build unix

package hw

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// prepare puts the child in its own process group so that cancelling kills
// everything it started (a shell's children, ssh's helpers), not only the
// leader.
func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	cmd.WaitDelay = waitDelay
}

// killGroup kills whatever is left of the child's process group once the
// leader has been waited for: a leader that exits on its own may leave
// children behind.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
