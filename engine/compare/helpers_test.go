package compare

import (
	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
)

func ptr[T any](v T) *T { return &v }

// dist builds a distribution; a negative p95 or p99 is left out, as a small
// sample leaves it out.
func dist(n int, mean, p50, p95, p99 float64) *results.Dist {
	d := &results.Dist{N: n, Mean: mean, Min: p50 / 2, P50: p50, Max: p50 * 3}
	if p95 >= 0 {
		d.P95 = ptr(p95)
	}
	if p99 >= 0 {
		d.P99 = ptr(p99)
	}
	return d
}

// baseRun is a complete hardware record at one concurrency level
// (comparetest.BaseRun). Every pointer is freshly allocated, so editing
// one record never touches another.
func baseRun(c int) results.Run { return comparetest.BaseRun(c) }

// session builds a complete results file with one record per level
// (comparetest.Session); each edit is applied to every record.
func session(levels []int, edits ...func(*results.Run)) *results.File {
	return comparetest.Session(levels, edits...)
}

// atLevel limits an edit to the record at one concurrency level.
func atLevel(c int, edit func(*results.Run)) func(*results.Run) {
	return func(r *results.Run) {
		if r.Concurrency == c {
			edit(r)
		}
	}
}

var std = []int{1, 8, 32}
