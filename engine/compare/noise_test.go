package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/stats"
)

// judgedIDs are the metrics that get an interval.
var judgedIDs = []string{"output_throughput", "per_user_throughput", "request_throughput", "ttft_p50", "ttft_p95", "ttft_p99",
	"itl_p50", "itl_p95", "itl_p99", "latency_p50", "latency_p99", "tpot_p50"}

func TestStudentT(t *testing.T) {
	t.Parallel()
	// Quantiles from published tables of Student's t.
	tests := []struct{ p, df, want float64 }{
		{0.975, 1, 12.7062},
		{0.975, 10, 2.2281},
		{0.995, 5, 4.0321},
		{0.9995, 20, 3.8495},
		{0.99, 2, 6.9646},
		{0.975, 1e6, 1.9600},
		{0.5, 7, 0},
	}
	for _, tt := range tests {
		if got := studentT(tt.p, tt.df); math.Abs(got-tt.want) > 5e-4 {
			t.Errorf("t(%v, df %v) = %.5f, want %.4f", tt.p, tt.df, got, tt.want)
		}
	}
	if got := studentT(0.99, 0); !math.IsInf(got, 1) {
		t.Errorf("t with no degrees of freedom = %v, want +Inf", got)
	}
}

// A resample's quantiles are those of the sample written out with each
// block's values repeated as often as the block was drawn.
func TestWeightedQuantilesAreType7(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{2, 17, 100, 5000} {
		nb := max(1, n/7)
		xs := make([]tagged, n)
		for i := range xs {
			xs[i] = tagged{math.Round(rng.ExpFloat64() * 1000), int32(rng.IntN(nb)), int32(i)}
		}
		ws := newWeighted(slices.Clone(xs), nb)
		qs := []float64{0, 0.1, 0.5, 0.5, 0.95, 0.99, 1}
		for round := range 20 {
			w := make([]int32, nb)
			for k := range w {
				w[k] = int32(rng.IntN(3))
			}
			w[0] = 1 // never an empty draw
			var written []float64
			for _, x := range xs {
				for range w[x.b] {
					written = append(written, x.v)
				}
			}
			slices.Sort(written)
			got := make([]float64, len(qs))
			if !ws.quantiles(w, qs, got) {
				t.Fatalf("n %d round %d: no quantiles", n, round)
			}
			for j, q := range qs {
				if want := stats.Quantile(written, q); math.Abs(got[j]-want) > 1e-9 {
					t.Errorf("n %d round %d: q%v = %v, want %v", n, round, q, got[j], want)
				}
			}
		}
	}
	ws := newWeighted([]tagged{{1, 0, 0}}, 2)
	if ws.quantiles([]int32{0, 3}, []float64{0.5}, make([]float64, 1)) {
		t.Error("a draw without values gave a quantile")
	}
}

// Replaying a level's requests in the order they ran gives its window
// back, so the throughputs of a resample rest on the level's own shape.
func TestReplayGivesTheLevelBack(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []int{1, 8, 32} {
		ls := comparetest.Typical(c, 100, 32).Level(rng, 1_000_000)
		lv, err := newLevelSample(ls)
		if err != nil {
			t.Fatal(err)
		}
		order := make([]int32, len(lv.blocks))
		for i := range order {
			order[i] = int32(i)
		}
		if got, want := lv.replay(order), ls.EndUs-ls.StartUs; got != want {
			t.Errorf("c%d: replay lasts %d µs, the level %d µs", c, got, want)
		}
	}
}

// judged lists a table's cells of run i that were judged, as
// "c8 output tok/s −12.0 % [...] beyond noise".
func judged(rows []Row, i int, noise Noise) []string {
	var out []string
	for _, r := range rows {
		if c := r.Cells[i]; c.Noise == noise {
			out = append(out, fmt.Sprintf("c%d %s %s [%s]", r.Concurrency, r.Metric.Label, FormatDelta(c), FormatInterval(c)))
		}
	}
	return out
}

// A run compared with itself drawn again (what a second try with
// nothing changed could give) differs on no metric beyond noise, and
// every metric with an interval is judged.
func TestNoiseItselfResampled(t *testing.T) {
	t.Parallel()
	base := comparetest.SynthFile(11, std, comparetest.Typical(0, 100, 64))
	for seed := range uint64(8) {
		again := comparetest.Resampled(base, seed)
		v, rows := Compared([]*results.File{base, again}, nil)
		if b := judged(rows, 1, BeyondNoise); len(b) > 0 {
			t.Errorf("resample %d: beyond noise: %q", seed, b)
		}
		for _, r := range rows {
			c := r.Cells[1]
			if slices.Contains(judgedIDs, r.Metric.ID) && c.HasDelta && c.Noise == NoiseUnknown {
				t.Errorf("resample %d: %s at %d not judged", seed, r.Metric.ID, r.Concurrency)
			}
			if c.Better != 0 {
				t.Errorf("resample %d: %s at %d coloured (%+v)", seed, r.Metric.ID, r.Concurrency, c)
			}
		}
		if want := []string{"Run 2 does not differ from the baseline beyond noise."}; !slices.Equal(v.Changes, want) {
			t.Errorf("resample %d: changes %q, want %q", seed, v.Changes, want)
		}
	}

	// The very same run: no change at all, every interval around zero.
	_, rows := Compared([]*results.File{base, base}, nil)
	for _, r := range rows {
		if c := r.Cells[1]; c.Noise == BeyondNoise || (c.Noise == WithinNoise && !(c.Low <= 0 && c.High >= 0)) {
			t.Errorf("the same run: %s at %d %+v", r.Metric.ID, r.Concurrency, c)
		}
	}
}

// Two runs of the same server, drawn independently, differ by a few
// percent here and there, which the old flat rule coloured; none of it
// is called a change.
func TestNoiseSameSettings(t *testing.T) {
	t.Parallel()
	s := comparetest.Typical(0, 100, 64)
	flatRuleWouldColour := 0
	for seed := uint64(1); seed <= 20; seed++ {
		a, b := comparetest.SynthFile(seed, std, s), comparetest.SynthFile(seed+1000, std, s)
		v, rows := Compared([]*results.File{a, b}, []string{"a", "b"})
		if got := judged(rows, 1, BeyondNoise); len(got) > 0 {
			t.Errorf("seed %d: beyond noise: %q", seed, got)
		}
		for _, r := range rows {
			c := r.Cells[1]
			if c.Noise == WithinNoise && math.Abs(c.Delta) >= SameWithin {
				flatRuleWouldColour++
				if c.Better != 0 {
					t.Errorf("seed %d: %s at %d within noise but coloured", seed, r.Metric.ID, r.Concurrency)
				}
			}
		}
		if !slices.Equal(v.Changes, []string{"Run 2 does not differ from the baseline beyond noise."}) {
			t.Errorf("seed %d: changes %q", seed, v.Changes)
		}
	}
	if flatRuleWouldColour < 100 {
		t.Errorf("only %d differences of 0.5 %% or more: the test needs noisy runs", flatRuleWouldColour)
	}
}

// A server 10 % slower, 100 requests a level: the throughputs and the
// times are called slower; 10 % faster, faster.
func TestNoiseSlowdown(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 3; seed++ {
		for _, tt := range []struct {
			slow   float64
			better int
			word   string
		}{{1.1, -1, "slower"}, {1 / 1.1, 1, "faster"}} {
			s := comparetest.Typical(0, 100, 64)
			a := comparetest.SynthFile(seed, std, s)
			s.Slow = tt.slow
			b := comparetest.SynthFile(seed+1000, std, s)
			v, rows := Compared([]*results.File{a, b}, nil)
			// Means (throughputs over the level, the pooled gaps' median)
			// are called at every level where 100 requests bound them
			// tightly; at 32 users each user sends about 3 requests, and
			// the level's total throughput rests on its slowest users.
			// Medians of 100 requests rest on fewer degrees of freedom:
			// they must be called at two levels of three at least.
			must := map[int][]string{
				1:  {"output_throughput", "request_throughput", "per_user_throughput", "itl_p50"},
				8:  {"output_throughput", "request_throughput", "per_user_throughput", "itl_p50"},
				32: {"per_user_throughput", "itl_p50"},
			}
			medians := map[string]int{}
			for _, r := range rows {
				c := r.Cells[1]
				called := c.Noise == BeyondNoise && c.Better == tt.better
				if c.Noise == BeyondNoise && c.Better != tt.better {
					t.Errorf("seed %d ×%.3f: %s at %d called %+d", seed, tt.slow, r.Metric.ID, r.Concurrency, c.Better)
				}
				if slices.Contains(must[r.Concurrency], r.Metric.ID) && !called {
					t.Errorf("seed %d ×%.3f: %s at %d %v (%s, %s), want %s", seed, tt.slow, r.Metric.ID, r.Concurrency,
						c.Noise, FormatDelta(c), FormatInterval(c), tt.word)
				}
				if called {
					medians[r.Metric.ID]++
				}
			}
			for _, id := range []string{"latency_p50", "tpot_p50"} {
				if medians[id] < 2 {
					t.Errorf("seed %d ×%.3f: %s called %s at %d levels of 3, want 2 at least", seed, tt.slow, id, tt.word, medians[id])
				}
			}
			if len(v.Changes) != 2 || !strings.HasPrefix(v.Changes[0], "Run 2 is "+tt.word+" at concurrency 1: output tok/s ") || v.Changes[1] != singleRunsLine {
				t.Errorf("seed %d ×%.3f: changes %q, want the run's changes and the caution on single runs", seed, tt.slow, v.Changes)
			}
		}
	}
}

// Drift inside a run widens its interval: the same requests, once in a
// steady order and once slowing down along the level, resample in
// blocks of neighbours, so the drifting run's spread is wider.
func TestNoiseDriftWidens(t *testing.T) {
	t.Parallel()
	const n = 100
	perm := rand.New(rand.NewPCG(7, 8)).Perm(n)
	pace := func(i int) float64 { return 0.85 + 0.3*float64(i)/n }
	steady, drifting := comparetest.Typical(1, n, 64), comparetest.Typical(1, n, 64)
	steady.GapSD, drifting.GapSD = 0.05, 0.05
	steady.Pace = func(i int) float64 { return pace(perm[i]) }
	drifting.Pace = pace
	a, err := spreadOf(steady.Level(rand.New(rand.NewPCG(9, 9)), 0))
	if err != nil {
		t.Fatal(err)
	}
	b, err := spreadOf(drifting.Level(rand.New(rand.NewPCG(9, 9)), 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []stat{statOutput, statPerUser, statLatency50, statTPOT50, statITL50} {
		if math.Abs(a.value[st]/b.value[st]-1) > 0.02 {
			t.Errorf("stat %d: %v and %v: the runs should measure the same", st, a.value[st], b.value[st])
		}
		if b.sd[st] < 1.5*a.sd[st] {
			t.Errorf("stat %d: drifting spread %.4f, steady %.4f: want the drift to widen it", st, b.sd[st], a.sd[st])
		}
	}
}

// The more changes a run's verdict judges at once, the wider each
// interval: all of a run's changes are held to Confidence together
// (bonferroniT, as a settings comparison holds a setting's); a third run
// beside it has its own family and leaves run 2's intervals as they are.
func TestNoiseWholeTableAtOnce(t *testing.T) {
	t.Parallel()
	s := comparetest.Typical(0, 100, 64)
	width := func(levels []int, runs int) float64 {
		files := []*results.File{comparetest.SynthFile(1, levels, s)}
		for i := 1; i < runs; i++ {
			files = append(files, comparetest.SynthFile(uint64(i)+1000, levels, s))
		}
		for _, r := range Table(files, nil) {
			if r.Concurrency == 1 && r.Metric.ID == "output_throughput" {
				c := r.Cells[1]
				return math.Log1p(c.High) - math.Log1p(c.Low)
			}
		}
		t.Fatal("no output tok/s at concurrency 1")
		return 0
	}
	one, three, threeRuns := width([]int{1}, 2), width(std, 2), width(std, 3)
	if !(one < three) || math.Abs(three-threeRuns) > 1e-12 {
		t.Errorf("widths: 12 changes judged %.4f, 36 %.4f, 36 beside a third run %.4f: want the second wider, the third as the second", one, three, threeRuns)
	}
}

// Runs without raw samples are shown as before, coloured by the flat
// rule, and the verdict says once that their differences cannot be told
// from noise.
func TestNoiseWithoutSamples(t *testing.T) {
	t.Parallel()
	const why = " (saved before raw samples were kept, or imported from a published file, which leaves them out)"
	sampled := comparetest.SynthFile(1, std, comparetest.Typical(0, 100, 64))
	bare := func() *results.File {
		return session(std, func(r *results.Run) {
			r.InputTokens, r.OutputTokens = 1024, 64
			r.Metrics.OutputThroughput *= 1.1
		})
	}
	tests := []struct {
		name  string
		files []*results.File
		want  []string
	}{
		{"neither", []*results.File{bare(), session(std, func(r *results.Run) { r.OutputTokens = 64 })},
			[]string{"These runs have no raw samples" + why + ", so their differences cannot be told from noise."}},
		{"the baseline", []*results.File{bare(), sampled},
			[]string{"Run 1, the baseline, has no raw samples" + why + ", so no difference can be told from noise."}},
		{"the other", []*results.File{sampled, bare()},
			[]string{"Run 2 has no raw samples" + why + ", so its differences cannot be told from noise."}},
		{"two of three", []*results.File{sampled, bare(), bare()},
			[]string{"Runs 2 and 3 have no raw samples" + why + ", so their differences cannot be told from noise."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range tt.files {
				for i := range f.Runs {
					f.Runs[i].InputTokens, f.Runs[i].OutputTokens = 1024, 64
				}
			}
			v, rows := Compared(tt.files, nil)
			if !v.Comparable || !slices.Equal(v.Changes, tt.want) {
				t.Errorf("comparable %v, changes %q\nwant %q", v.Comparable, v.Changes, tt.want)
			}
			if got := NoiseLegend(rows); got != "" {
				t.Errorf("legend %q, want none", got)
			}
			for _, r := range rows {
				for _, c := range r.Cells[1:] {
					if c.Noise != NoiseUnknown {
						t.Errorf("%s at %d judged without samples: %+v", r.Metric.ID, r.Concurrency, c)
					}
				}
			}
		})
	}
	// The verdict cannot tell, so the table colours nothing: a 10 %
	// gain of output tok/s is shown, plain.
	_, rows := Compared([]*results.File{session(std), session(std, func(r *results.Run) { r.Metrics.OutputThroughput *= 1.1 })}, nil)
	if c := rows[0].Cells[1]; rows[0].Metric.ID != "output_throughput" || c.Better != 0 || c.Noise != NoiseUnknown || FormatChange(c) != "+10.0 %" {
		t.Errorf("without samples, +10 %% output: %+v, want the change shown, not coloured", c)
	}
}

// Tails of a handful of values and levels of one success cannot be
// bounded: they are never judged, whatever they show, and the table says
// so instead of a colour.
func TestNoiseTooFewToBound(t *testing.T) {
	t.Parallel()
	base := comparetest.SynthFile(2, []int{8}, comparetest.Typical(0, 100, 64))
	slower, err := comparetest.Slowed(base, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	_, rows := Compared([]*results.File{base, slower}, nil)
	for _, r := range rows {
		c := r.Cells[1]
		switch r.Metric.ID {
		case "ttft_p95", "ttft_p99", "latency_p99": // 5 and 1 of 100 requests beyond them
			if c.Noise != TooFew || c.Better != 0 || !math.IsInf(c.High, 1) || FormatChange(c) != "+50.0 % (too few samples to judge)" {
				t.Errorf("%s: %+v (%s), want too few to judge, unbounded", r.Metric.ID, c, FormatChange(c))
			}
		case "ttft_p50", "latency_p50", "itl_p99", "output_throughput":
			if c.Noise != BeyondNoise || c.Better != -1 {
				t.Errorf("%s: %v, want slower beyond noise", r.Metric.ID, c.Noise)
			}
		}
	}

	one := comparetest.SynthFile(3, []int{8}, comparetest.Typical(0, 100, 64))
	ls := one.SamplesAt(8)
	for i := range ls.Requests[1:] {
		ls.Requests[i+1].Error = "http_500"
	}
	_, rows = Compared([]*results.File{base, one}, nil)
	for _, r := range rows {
		if c := r.Cells[1]; slices.Contains(judgedIDs, r.Metric.ID) && c.HasDelta && (c.Noise != TooFew || c.Better != 0) {
			t.Errorf("one success: %s %+v, want too few to judge", r.Metric.ID, c)
		}
	}
}

// Samples that cannot be read are said, and leave their cells as before.
func TestNoiseUnreadableSamples(t *testing.T) {
	t.Parallel()
	a := comparetest.SynthFile(4, []int{1}, comparetest.Typical(0, 40, 16))
	b := comparetest.SynthFile(5, []int{1}, comparetest.Typical(0, 40, 16))
	b.SamplesAt(1).Requests[2].Gaps = "!!"
	v, rows := Compared([]*results.File{a, b}, nil)
	want := "The raw samples of run 2 at concurrency 1 (request 3 of the level: gaps are not base64 varints: illegal base64 data at input byte 0) cannot be read, so the differences there cannot be told from noise."
	if !slices.Contains(v.Changes, want) {
		t.Errorf("changes %q\nwant %q", v.Changes, want)
	}
	for _, r := range rows {
		if r.Cells[1].Noise != NoiseUnknown {
			t.Errorf("%s judged from unreadable samples", r.Metric.ID)
		}
	}
}

// The same files give the same intervals every time: the resampling is
// seeded.
func TestNoiseDeterministic(t *testing.T) {
	t.Parallel()
	s := comparetest.Typical(0, 60, 32)
	files := []*results.File{comparetest.SynthFile(6, std, s), comparetest.SynthFile(7, std, s)}
	first := Table(files, nil)
	for range 2 {
		for i, r := range Table(files, nil) {
			if got, want := r.Cells[1], first[i].Cells[1]; got != want {
				t.Fatalf("%s at %d: %+v, then %+v", r.Metric.ID, r.Concurrency, want, got)
			}
		}
	}
}

// The verdict's words for one run, from a table judged by hand.
func TestRunChangesWords(t *testing.T) {
	t.Parallel()
	metric := func(id string) Metric {
		m, ok := MetricByID(id)
		if !ok {
			t.Fatal(id)
		}
		return m
	}
	cell := func(n Noise, better int, delta, low, high float64) Cell {
		return Cell{Present: true, HasDelta: true, Delta: delta, Noise: n, Better: better, Low: low, High: high}
	}
	row := func(level int, id string, c Cell) Row {
		return Row{Concurrency: level, Metric: metric(id), Cells: []Cell{{Present: true}, c}}
	}
	beyond := cell(BeyondNoise, -1, -0.12, -0.15, -0.09)
	within := cell(WithinNoise, 0, 0.02, -0.01, 0.05)
	tests := []struct {
		name string
		rows []Row
		want string
	}{
		{"one change", []Row{row(32, "output_throughput", beyond), row(32, "ttft_p50", within)},
			"Run 2 is slower at concurrency 32: output tok/s \u221212.0 % (95 % CI \u221215.0 \u2026 \u22129.0 %); the other differences are within noise."},
		{"every difference a change", []Row{row(32, "output_throughput", beyond)},
			"Run 2 is slower at concurrency 32: output tok/s \u221212.0 % (95 % CI \u221215.0 \u2026 \u22129.0 %)."},
		{"faster at one level, slower at another", []Row{
			row(1, "ttft_p50", cell(BeyondNoise, 1, -0.2, -0.3, -0.1)), row(8, "request_throughput", within), row(32, "output_throughput", beyond)},
			"Run 2 is faster at concurrency 1: TTFT p50 \u221220.0 % (95 % CI \u221230.0 \u2026 \u221210.0 %); slower at concurrency 32: " +
				"output tok/s \u221212.0 % (95 % CI \u221215.0 \u2026 \u22129.0 %); the other differences are within noise."},
		{"more than three at a level", []Row{row(8, "output_throughput", beyond), row(8, "per_user_throughput", beyond),
			row(8, "request_throughput", beyond), row(8, "latency_p50", cell(BeyondNoise, -1, 0.2, 0.1, 0.3)), row(8, "tpot_p50", cell(BeyondNoise, -1, 0.2, 0.1, 0.3))},
			"Run 2 is slower at concurrency 8: output tok/s \u221212.0 % (95 % CI \u221215.0 \u2026 \u22129.0 %), per-user tok/s \u221212.0 % (95 % CI \u221215.0 \u2026 \u22129.0 %), " +
				"req/s \u221212.0 % (95 % CI \u221215.0 \u2026 \u22129.0 %) and 2 more (marked in the table)."},
		{"nothing beyond", []Row{row(1, "ttft_p50", within)}, "Run 2 does not differ from the baseline beyond noise."},
		{"nothing judged", []Row{row(1, "ttft_p50", Cell{Present: true, HasDelta: true, Delta: 0.3, Better: -1})}, ""},
		{"nothing could be bounded", []Row{row(1, "ttft_p99", cell(TooFew, 0, 0.3, -1, math.Inf(1))), row(1, "output_throughput", cell(TooWide, 0, 0.2, -0.3, 0.9))},
			"Whether run 2 differs from the baseline cannot be told from noise: " + tooShort + "."},
		{"a call beside figures too wide", []Row{row(1, "ttft_p99", cell(TooWide, 0, 0.3, -0.5, 2)), row(32, "output_throughput", beyond)},
			"Run 2 is slower at concurrency 32: output tok/s \u221212.0 % (95 % CI \u221215.0 \u2026 \u22129.0 %)."},
	}
	for _, tt := range tests {
		if got := runChanges(tt.rows, 1); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// The verdict's lines: the sentence, each run's changes, the cautions.
func TestComparedLines(t *testing.T) {
	t.Parallel()
	s := comparetest.Typical(0, 100, 64)
	a := comparetest.SynthFile(8, []int{8}, s)
	b, err := comparetest.Slowed(comparetest.SynthFile(9, []int{8}, s), 1.3)
	if err != nil {
		t.Fatal(err)
	}
	b.Runs[0].Warmup = 0
	v, rows := Compared([]*results.File{a, b}, nil)
	lines := v.Lines()
	if len(lines) != 3 || lines[0] != "These runs are comparable on conditions; weigh these differences before trusting the changes." ||
		!strings.HasPrefix(lines[1], "Run 2 is slower at concurrency 8: output tok/s \u22122") ||
		!strings.HasPrefix(lines[2], "run 2 sent 0 warmup requests, run 1 4") {
		t.Errorf("lines %q", lines)
	}
	if got := NoiseLegend(rows); !strings.HasPrefix(got, "In brackets after a change: its 95 % CI, shown where the change is beyond noise, and only such a change is coloured (95 % for each run's changes at once; a change under 5 % is never called one)") ||
		!strings.Contains(got, "\"too few samples to judge\": a percentile needs at least 10 requests with a value beyond it in each run (a p95 200 requests, a p99 1,000)") {
		t.Errorf("legend %q", got)
	}

	// Not comparable: no words about changes.
	c := comparetest.SynthFile(10, []int{8}, comparetest.Typical(0, 100, 32))
	if v, _ := Compared([]*results.File{a, c}, nil); v.Comparable || v.Changes != nil {
		t.Errorf("not comparable, yet changes %q", v.Changes)
	}
}

// A change beyond noise but within what whole runs shift by between runs
// in a row is said with the caution on single runs; a larger one, and
// no change at all, without it.
func TestSingleRunsCaution(t *testing.T) {
	t.Parallel()
	m, _ := MetricByID("output_throughput")
	rows := func(c Cell) []Row { return []Row{{Concurrency: 8, Metric: m, Cells: []Cell{{Present: true}, c}}} }
	small := Cell{Present: true, HasDelta: true, Delta: -0.07, Noise: BeyondNoise, Better: -1, Low: -0.09, High: -0.05}
	large := Cell{Present: true, HasDelta: true, Delta: -0.3, Noise: BeyondNoise, Better: -1, Low: -0.35, High: -0.25}
	within := Cell{Present: true, HasDelta: true, Delta: -0.07, Noise: WithinNoise, Low: -0.15, High: 0.01}
	for _, tt := range []struct {
		name string
		cell Cell
		want bool
	}{{"7 % beyond noise", small, true}, {"30 % beyond noise", large, false}, {"7 % within noise", within, false}} {
		got := slices.Contains(changeLines(rows(tt.cell), noiseReport{runs: 2}, nil), singleRunsLine)
		if got != tt.want {
			t.Errorf("%s: caution %v, want %v", tt.name, got, tt.want)
		}
	}
	if !strings.HasSuffix(singleRunsLine, "so repeat the runs before trusting a change under 10 %.") {
		t.Errorf("caution %q", singleRunsLine)
	}
}
