package compare

import (
	"slices"
	"time"
)

// OldestBaseline asks Order for the default baseline: the oldest run.
const OldestBaseline = -1

// Order is the order runs are shown in a comparison, as indexes into the
// runs given: the baseline first, then the others oldest to newest. The
// first run is what every change is measured against (Table), so the
// default baseline is the oldest run: a later run then reads as "+12 %"
// against what came before it, never the reverse.
//
// created are the runs' created_at times (RFC 3339), in the order the runs
// were given; baseline is the index of the run the person chose, or
// OldestBaseline (any index out of range counts as that). A time that
// cannot be read sorts after every time that can; runs made at the same
// time keep the order they were given in.
func Order(created []string, baseline int) []int {
	type stamp struct {
		t  time.Time
		ok bool
	}
	stamps := make([]stamp, len(created))
	for i, s := range created {
		t, err := time.Parse(time.RFC3339, s)
		stamps[i] = stamp{t, err == nil}
	}
	order := make([]int, len(created))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		sa, sb := stamps[a], stamps[b]
		switch {
		case sa.ok && sb.ok:
			return sa.t.Compare(sb.t)
		case sa.ok:
			return -1
		case sb.ok:
			return 1
		}
		return 0
	})
	if baseline < 0 || baseline >= len(created) {
		return order
	}
	i := slices.Index(order, baseline)
	return append([]int{baseline}, slices.Delete(order, i, i+1)...)
}

// Arrange returns xs in the order Order gave.
func Arrange[T any](xs []T, order []int) []T {
	out := make([]T, len(order))
	for j, i := range order {
		out[j] = xs[i]
	}
	return out
}
