//go:build !unix

package main

import (
	"context"
	"os"
	"os/signal"
	"time"
)

func signalNotify() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

func cpuTime() time.Duration { return 0 }

func peakRSSMiB() float64 { return 0 }
