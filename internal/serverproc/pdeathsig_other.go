//go:build unix && !linux

package serverproc

import "syscall"

// setParentDeathSignal: without a parent-death signal the supervisor
// notices the app is gone by its parent changing (supervise).
func setParentDeathSignal(*syscall.SysProcAttr) {}

func setServerDeathSignal(*syscall.SysProcAttr) {}
