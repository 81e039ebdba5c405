//go:build race

package engine

// raceEnabled: the race detector slows every goroutine, so timing checks
// skip themselves under it (make test-truth runs them without it).
const raceEnabled = true
