package engine

import "syscall"

// clockError is the kernel's own bound on the system clock's error, µs,
// and whether the clock is synchronised (NTP or chrony steering it): a
// read-only adjtimex, which needs no privilege and works in a container.
func clockError() (maxErrUs int64, synced bool) {
	var tx syscall.Timex
	state, err := syscall.Adjtimex(&tx)
	const timeError, staUnsync = 5, 0x40 // TIME_ERROR, STA_UNSYNC (adjtimex(2))
	if err != nil || state == timeError || tx.Status&staUnsync != 0 {
		return 0, false
	}
	return tx.Maxerror, true
}
