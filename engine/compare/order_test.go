package compare

import (
	"reflect"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

func TestOrder(t *testing.T) {
	t.Parallel()
	const (
		jan = "2026-01-02T03:04:05Z"
		feb = "2026-02-01T10:00:00Z"
		mar = "2026-03-01T10:00:00.25+01:00"
		apr = "2026-04-01T10:00:00Z"
	)
	tests := []struct {
		name     string
		created  []string
		baseline int
		want     []int
	}{
		{"newer given first: the older is the baseline", []string{feb, jan}, OldestBaseline, []int{1, 0}},
		{"already oldest first", []string{jan, feb}, OldestBaseline, []int{0, 1}},
		{"four, shuffled", []string{mar, jan, apr, feb}, OldestBaseline, []int{1, 3, 0, 2}},
		{"a chosen baseline, then the others oldest to newest", []string{mar, jan, apr, feb}, 2, []int{2, 1, 3, 0}},
		{"the newest chosen of two", []string{jan, feb}, 1, []int{1, 0}},
		{"the oldest chosen is the default", []string{feb, jan}, 1, []int{1, 0}},
		{"a baseline out of range is the default", []string{feb, jan}, 5, []int{1, 0}},
		{"an unreadable time goes last", []string{"", feb, "yesterday", jan}, OldestBaseline, []int{3, 1, 0, 2}},
		{"equal times keep the order given", []string{jan, jan, jan}, OldestBaseline, []int{0, 1, 2}},
		{"time zones are read", []string{"2026-03-01T10:00:00+01:00", "2026-03-01T09:30:00Z"}, OldestBaseline, []int{0, 1}},
		{"nothing", nil, OldestBaseline, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Order(tt.created, tt.baseline); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Order(%q, %d) = %v, want %v", tt.created, tt.baseline, got, tt.want)
			}
		})
	}
}

// TestOrderMakesTheOlderTheBaseline: files given newest first come out
// oldest first, so the table's changes are the newer run's against the
// older (a faster newer run shows "+", not the older one "−").
func TestOrderMakesTheOlderTheBaseline(t *testing.T) {
	t.Parallel()
	older := session(std)
	newer := session(std, func(r *results.Run) { r.Metrics.OutputThroughput *= 2 })
	newer.CreatedAt = "2026-05-01T00:00:00Z"
	files := []*results.File{newer, older}
	labels := []string{"newer", "older"}
	order := Order([]string{newer.CreatedAt, older.CreatedAt}, OldestBaseline)
	rows := Table(Arrange(files, order), Arrange(labels, order))
	r := rows[0]
	if r.Metric.ID != "output_throughput" {
		t.Fatalf("first row is %s", r.Metric.ID)
	}
	if got, want := r.Cells[0].Label, "older"; got != want {
		t.Errorf("baseline column %q, want %q", got, want)
	}
	if got, want := FormatDelta(r.Cells[1]), "+100.0 %"; got != want {
		t.Errorf("the newer run's change %q, want %q", got, want)
	}
}
