//go:build !unix && !windows

package main

import (
	"time"
)

func cpuTime() time.Duration { return 0 }

func peakRSSMiB() float64 { return 0 }

func contextSwitches() int64 { return 0 }
