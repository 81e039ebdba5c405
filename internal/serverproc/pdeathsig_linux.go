package serverproc

import "syscall"

// setParentDeathSignal has the kernel send the supervisor SIGTERM when the
// app dies, however it dies.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }

// setServerDeathSignal has the kernel kill the server when its supervisor
// dies without ending it (killed itself).
func setServerDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
