//go:build !unix

package hw

import "os/exec"

// prepare relies on exec's default cancel (kill the process) where process
// groups do not exist.
func prepare(cmd *exec.Cmd) {
	cmd.WaitDelay = waitDelay
}

func killGroup(*exec.Cmd) {}
