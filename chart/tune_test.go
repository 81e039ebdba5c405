package chart

import (
	"math"
	"testing"

	"github.com/kovara/desktop/plans/planstest"
)

// TestTuneChartsIntervalBesideTheDots: at 8 users the second setting's
// interval (+45 % to +55 % on 120 tok/s) is a vertical line from 174 to
// 186, drawn right of that setting's dots (it was on them, in their
// colour, and could not be seen).
func TestTuneChartsIntervalBesideTheDots(t *testing.T) {
	t.Parallel()
	r := planstest.Tune(false)
	specs := TuneCharts(r, 8, Light())
	if len(specs) != 1 {
		t.Fatalf("%d charts, want 1 (output tok/s)", len(specs))
	}
	var dots, lines []Series
	for _, s := range specs[0].Series {
		switch s.Kind {
		case Scatter:
			dots = append(dots, s)
		case Line:
			lines = append(lines, s)
		}
	}
	if len(dots) != 2 || len(lines) != 1 {
		t.Fatalf("%d dot series and %d lines, want 2 and 1", len(dots), len(lines))
	}
	l := lines[0]
	if l.X[0] != l.X[1] || math.Abs(l.Y[0]-174) > 1e-9 || math.Abs(l.Y[1]-186) > 1e-9 {
		t.Errorf("interval line %v × %v, want a vertical line from 174 to 186", l.X, l.Y)
	}
	if x := dots[1].X[0]; l.X[0] <= x || l.X[0] >= x+0.5 || l.Color != dots[1].Color {
		t.Errorf("interval at x %.2f, the setting's dots at %.2f: want it just right of them, in their colour", l.X[0], x)
	}
}

// TestTuneChartsSayWhatIsDrawn: the axis promises the interval's line
// only where one is drawn; an interval too wide to draw (two rounds give
// such: -93 % … +856 % against llama-server) leaves it to the table.
func TestTuneChartsSayWhatIsDrawn(t *testing.T) {
	t.Parallel()
	drawn := TuneCharts(planstest.Tune(false), 8, Light())
	wide := planstest.Tune(false)
	for i := range wide.Verdicts {
		wide.Verdicts[i].Low, wide.Verdicts[i].High = -0.936, 8.559
	}
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"drawn", drawn[0], "setting (dots: its rounds; line: its change's interval)"},
		{"too wide", TuneCharts(wide, 8, Light())[0], "setting (dots: its rounds; the intervals are too wide to draw: the table has them)"},
	}
	for _, tt := range tests {
		if got := tt.spec.XLabel; got != tt.want {
			t.Errorf("%s: axis %q, want %q", tt.name, got, tt.want)
		}
	}
}
