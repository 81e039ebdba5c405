package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/storage"
)

// seedLabelled seeds a run made at a known time (January 2026, on the
// day given) under a label, with more edits of its file.
func (h *harness) seedLabelled(url, label string, day int, edits ...func(*results.File)) string {
	h.t.Helper()
	id := h.seedRun(url, []int{1}, 8, func(f *results.File) {
		f.CreatedAt = fmt.Sprintf("2026-01-%02dT10:00:00Z", day)
		for _, e := range edits {
			e(f)
		}
	})
	if err := h.u.lib.SetAnnotation(id, storage.Annotation{Label: label}); err != nil {
		h.t.Fatal(err)
	}
	return id
}

// synthetic is one level of 40 requests of answers this many tokens long,
// 4 ms apart, drawn from a seeded generator (comparetest.SynthFile) with
// no warmup: enough for Compare to bound its changes against noise, and
// the same samples on every machine, so what Compare concludes of it and
// of its slowed copies never wanders with the machine's load.
func synthetic(tokens int) *results.File {
	s := comparetest.Typical(0, 40, tokens)
	s.TTFTUs, s.GapUs = 1_000, 4_000
	f := comparetest.SynthFile(1, []int{1}, s)
	for i := range f.Runs {
		f.Runs[i].Warmup = 0
	}
	return f
}

// saveLabelled puts f in the library as made on the day given of January
// 2026, under a label, after more edits of it.
func (h *harness) saveLabelled(f *results.File, label string, day int, edits ...func(*results.File)) string {
	h.t.Helper()
	f.CreatedAt = fmt.Sprintf("2026-01-%02dT10:00:00Z", day)
	for _, e := range edits {
		e(f)
	}
	id, err := h.u.lib.Save("", f)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.u.lib.SetAnnotation(id, storage.Annotation{Label: label}); err != nil {
		h.t.Fatal(err)
	}
	return id
}

// copyOf is a copy of f, to be changed by a known factor.
func copyOf(t *testing.T, f *results.File) *results.File {
	g, err := comparetest.Slowed(f, 1)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// slowedBy makes a file's every time factor times as long
// (comparetest.Slowed): a run whose true change is known.
func slowedBy(t *testing.T, factor float64) func(*results.File) {
	return func(f *results.File) {
		g, err := comparetest.Slowed(f, factor)
		if err != nil {
			t.Fatal(err)
		}
		*f = *g
	}
}

// withoutSamples makes a file as one saved before raw samples were kept.
func withoutSamples(f *results.File) {
	for i := range f.Local.Levels {
		f.Local.Levels[i].Samples = nil
	}
}

func eachRun(edit func(*results.Run)) func(*results.File) {
	return func(f *results.File) {
		for i := range f.Runs {
			edit(&f.Runs[i])
		}
	}
}

// outputRow is the compare table's output tok/s row.
func outputRow(t *testing.T, cs *CompareScreen) compare.Row {
	t.Helper()
	for _, r := range cs.rows {
		if r.Metric.ID == "output_throughput" {
			return r
		}
	}
	t.Fatal("no output tok/s row")
	return compare.Row{}
}

// TestCompareBaselineChoice: runs given newest first are shown with the
// older as the baseline (the newer's gain reads "+", in green); choosing
// the newer as the baseline puts it first and re-renders the table and
// the verdict against it.
func TestCompareBaselineChoice(t *testing.T) {
	h := newHarness(t)
	base := synthetic(8)
	older := h.saveLabelled(copyOf(t, base), "older", 5)
	// The same run twice as fast: beyond any noise.
	newer := h.saveLabelled(copyOf(t, base), "newer", 20, slowedBy(t, 0.5), eachRun(func(r *results.Run) { r.Warmup = 4 }))
	h.locked(func() {
		h.u.compareRuns([]string{newer, older})
		cs := h.u.compareScreen
		if got, want := cs.labels, []string{"older", "newer"}; !slices.Equal(got, want) {
			t.Fatalf("runs shown %q, want %q: the older is the baseline", got, want)
		}
		if got, want := cs.options, []string{"older", "newer"}; !slices.Equal(got, want) || cs.baselineSelect.Selected != "older" {
			t.Errorf("baseline choice %q, selected %q; want %q with older selected", got, cs.baselineSelect.Selected, want)
		}
		text, imp := compareCell(outputRow(t, cs), 3)
		if !strings.Contains(text, "+100.0 % (") || imp != widget.SuccessImportance {
			t.Errorf("the newer run's output %q (importance %v), want +100.0 %% and its interval in the success colour", text, imp)
		}
		if !strings.Contains(cs.verdict.Text, "run 2 sent 4 warmup requests, run 1 0") {
			t.Errorf("verdict %q", cs.verdict.Text)
		}
		if !strings.HasPrefix(cs.details.Text, "[1] older (baseline") {
			t.Errorf("details %q, want the older named as the baseline", cs.details.Text)
		}

		cs.baselineSelect.SetSelected("newer")
		if got, want := cs.labels, []string{"newer", "older"}; !slices.Equal(got, want) {
			t.Fatalf("after choosing the newer: runs shown %q, want %q", got, want)
		}
		text, imp = compareCell(outputRow(t, cs), 3)
		if !strings.Contains(text, "−50.0 % (") || imp != widget.DangerImportance {
			t.Errorf("against the newer, the older's output %q (importance %v), want −50.0 %% in the danger colour", text, imp)
		}
		if !strings.Contains(cs.verdict.Text, "run 2 sent 0 warmup requests, run 1 4") {
			t.Errorf("verdict after the choice %q", cs.verdict.Text)
		}
		if !strings.HasPrefix(cs.details.Text, "[1] newer (baseline") {
			t.Errorf("details %q, want the newer named as the baseline", cs.details.Text)
		}
	})
}

// TestCompareVerdictColour: only runs comparable with nothing to weigh are
// called comparable in the success colour; other request counts, another
// warmup or a run with a problem are named, in the warning colour. The
// comparable runs are copies of one seeded run, so their differences
// are none (whether two runs differ beyond noise is held by
// TestCompareColoursOnlyChangesBeyondNoise).
func TestCompareVerdictColour(t *testing.T) {
	h := newHarness(t)
	seeded := synthetic(8)
	base := h.saveLabelled(copyOf(t, seeded), "base", 1)
	same := h.saveLabelled(copyOf(t, seeded), "same", 2)
	warm := h.saveLabelled(copyOf(t, seeded), "warm", 3, eachRun(func(r *results.Run) { r.Warmup = 2 }))
	stopped := h.saveLabelled(copyOf(t, seeded), "stopped", 4, func(f *results.File) { f.Complete = false })
	long := h.saveLabelled(synthetic(6), "long", 5)

	const onConditions = "These runs are comparable on conditions; weigh these differences before trusting the changes."
	const noChange = "\n• Run 2 does not differ from the baseline beyond noise."
	tests := []struct {
		name  string
		other string
		want  string
		imp   widget.Importance
	}{
		{"the same", same, "These runs are comparable." + noChange, widget.SuccessImportance},
		{"another warmup", warm, onConditions + noChange + "\n• run 2 sent 2 warmup requests, run 1 0: a shorter warmup can leave the server's cold start in the first level",
			widget.WarningImportance},
		{"a run with a problem", stopped, onConditions + noChange + "\n• run 2 has a problem: read it before trusting its figures", widget.WarningImportance},
		{"not comparable", long, "Not comparable: output tokens differs (8 vs 6).", widget.WarningImportance},
	}
	for _, tt := range tests {
		h.locked(func() {
			h.u.compareRuns([]string{base, tt.other})
			v := h.u.compareScreen.verdict
			if v.Text != tt.want || v.Importance != tt.imp {
				t.Errorf("%s: verdict %q (importance %v)\nwant %q (importance %v)", tt.name, v.Text, v.Importance, tt.want, tt.imp)
			}
		})
	}
}

// TestCompareForget: runs deleted from the library leave Compare; the
// chosen baseline stays while it is there and falls back to the oldest
// when it goes; with one run left the place says why it is empty.
func TestCompareForget(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	a := h.seedLabelled(url, "a", 1)
	b := h.seedLabelled(url, "b", 2)
	c := h.seedLabelled(url, "c", 3)
	d := h.seedLabelled(url, "d", 4)
	h.locked(func() {
		cs := h.u.compareScreen
		h.u.compareRuns([]string{d, b, a, c})
		cs.baselineSelect.SetSelected("c")
		check := func(step string, labels []string) {
			t.Helper()
			if !slices.Equal(cs.labels, labels) || len(cs.files) != len(labels) || len(cs.rows[0].Cells) != len(labels) {
				t.Errorf("%s: shown %q with %d files and %d cells a row, want %q", step, cs.labels, len(cs.files), len(cs.rows[0].Cells), labels)
			}
			if cs.baselineSelect.Selected != labels[0] || !slices.Equal(cs.options, slices.Sorted(slices.Values(labels))) {
				t.Errorf("%s: baseline choice %q of %q", step, cs.baselineSelect.Selected, cs.options)
			}
		}
		check("c chosen", []string{"c", "a", "b", "d"})

		shown := cs.verdict
		cs.forget([]string{"not-compared"})
		if cs.verdict != shown {
			t.Error("forgetting a run that is not compared changed the screen")
		}
		cs.forget([]string{a})
		check("a deleted", []string{"c", "b", "d"})
		cs.forget([]string{c})
		check("the baseline deleted", []string{"b", "d"})
		cs.forget([]string{d})
		const why = "A compared run was deleted; choose runs in History to compare."
		if cs.empty.Text != why || cs.verdict != nil || cs.files != nil || cs.rows != nil || cs.ids != nil {
			t.Errorf("one run left: %q, verdict %v, %d files, %d rows", cs.empty.Text, cs.verdict, len(cs.files), len(cs.rows))
		}
		center, ok := cs.content.Objects[0].(*fyne.Container)
		if len(cs.content.Objects) != 1 || !ok || len(center.Objects) != 1 || center.Objects[0] != cs.empty {
			t.Errorf("the place shows %v, want the sentence alone", cs.content.Objects)
		}

		h.u.compareRuns([]string{a, b, c})
		cs.forget([]string{a, c})
		if want := "The compared runs were deleted; choose runs in History to compare."; cs.empty.Text != want {
			t.Errorf("two deleted: %q, want %q", cs.empty.Text, want)
		}
	})
}

// TestCompareFitsSmallWindow: four runs with notes, problems and cautions
// still fit a 1024×640 window (its content area is about 1000×590), on
// either tab.
func TestCompareFitsSmallWindow(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	var ids []string
	for i := range 4 {
		ids = append(ids, h.seedLabelled(url, fmt.Sprintf("qwen3-8b on the homelab box, run number %d with a long label", i+1), i+1,
			eachRun(func(r *results.Run) { r.Warmup = i }),
			func(f *results.File) {
				f.Complete = i%2 == 0
				f.Local.Warnings = []string{"the server answered under another model name than asked", "TLS verification was off"}
			}))
	}
	h.locked(func() {
		h.u.compareRuns(ids)
		cs := h.u.compareScreen
		if len(cs.files) != 4 {
			t.Fatalf("%d runs shown, want 4", len(cs.files))
		}
		if n := strings.Count(cs.details.Text, "\n"); n < 10 {
			t.Fatalf("the details have %d lines: the test wants many", n+1)
		}
		for tab := range 2 {
			cs.views.SelectIndex(tab)
			if got := cs.content.MinSize(); got.Width > 1000 || got.Height > 590 {
				t.Errorf("tab %d: the Compare place needs %v, more than a 1024×640 window's 1000×590", tab, got)
			}
		}
	})
}

// Deleting a compared run in History takes it out of Compare.
func TestHistoryDeleteLeavesCompare(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	a := h.seedLabelled(url, "a", 1)
	b := h.seedLabelled(url, "b", 2)
	c := h.seedLabelled(url, "c", 3)
	hs, cs := h.u.historyScreen, h.u.compareScreen
	h.locked(func() {
		h.u.compareRuns([]string{a, b, c})
		hs.reload()
		hs.selected = map[string]bool{}
		hs.table.Select(widget.TableCellID{Row: h.rowOf(b), Col: 0})
		test.Tap(hs.deleteButton)
		h.tapInOverlay("Delete")
		if slices.Contains(cs.ids, b) || len(cs.ids) != 2 {
			t.Errorf("Compare still shows %v after %s was deleted", cs.ids, b)
		}
	})
}

// TestCompareHeadingsFitTheirColumns: long run names are shortened to
// their column, never running into the next heading.
func TestCompareHeadingsFitTheirColumns(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	a := h.seedLabelled(url, "Qwen3-30B-A3B-Instruct-2507-Q4_K_M on the basement box, flash attention on", 1)
	b := h.seedLabelled(url, "Qwen3-30B-A3B-Instruct-2507-Q4_K_M on the basement box, flash attention off", 2)
	h.locked(func() {
		h.win.Resize(fyne.NewSize(1180, 800))
		h.u.compareRuns([]string{a, b})
		h.u.tabs.Select(h.u.compareTab)
		assertNothingOverflows(t, "compare", h.u.compareScreen.table)
	})
}

// TestCompareColoursOnlyChangesBeyondNoise: the same run 2 % slower is a
// difference within noise, shown without its interval and never coloured;
// 50 % slower is a change beyond noise, shown with its interval in the
// danger colour, in a column wide enough for it; the verdict says which
// run changed, and the details say what the brackets mean. Runs saved
// before raw samples were kept are not coloured, as the verdict says
// their differences cannot be told from noise. The runs are a
// seeded run and its slowed copies: what is beyond noise does not depend
// on this machine's load.
func TestCompareColoursOnlyChangesBeyondNoise(t *testing.T) {
	h := newHarness(t)
	base := synthetic(8)
	a := h.saveLabelled(copyOf(t, base), "a", 1)
	b := h.saveLabelled(copyOf(t, base), "b", 2, slowedBy(t, 1.02))
	c := h.saveLabelled(copyOf(t, base), "c", 3, slowedBy(t, 1.5))
	h.locked(func() {
		h.win.Resize(fyne.NewSize(1180, 800))
		h.u.compareRuns([]string{a, b, c})
		h.u.tabs.Select(h.u.compareTab)
		cs := h.u.compareScreen
		row := outputRow(t, cs)
		if text, imp := compareCell(row, 3); !strings.HasSuffix(text, "  \u22122.0 %") || imp != widget.MediumImportance || row.Cells[1].Noise != compare.WithinNoise {
			t.Errorf("2 %% slower: %q (importance %v, %v), want the delta alone, not coloured", text, imp, row.Cells[1].Noise)
		}
		if text, imp := compareCell(row, 4); !strings.Contains(text, "  \u221233.3 % (\u2212") || !strings.HasSuffix(text, " %)") || imp != widget.DangerImportance {
			t.Errorf("50 %% slower: %q (importance %v), want the change and its interval in the danger colour", text, imp)
		}
		for _, r := range cs.rows {
			if _, imp := compareCell(r, 3); imp != widget.MediumImportance && imp != widget.LowImportance {
				t.Errorf("2 %% slower: %s coloured (%v)", r.Metric.ID, imp)
			}
		}
		for _, want := range []string{"\n• Run 2 does not differ from the baseline beyond noise.\n", "\n• Run 3 is slower at concurrency 1: output tok/s \u221233.3 % (95 % CI \u2212"} {
			if !strings.Contains(cs.verdict.Text, want) {
				t.Errorf("verdict %q\nwant %q in it", cs.verdict.Text, want)
			}
		}
		if !strings.Contains(cs.details.Text, "\nIn brackets after a change: its 95 % CI") {
			t.Errorf("details %q: no legend", cs.details.Text)
		}
		assertNothingOverflows(t, "compare with intervals", cs.table)
	})

	old := h.saveLabelled(copyOf(t, base), "old", 4, withoutSamples)
	oldSlow := h.saveLabelled(copyOf(t, base), "old slower", 5, slowedBy(t, 1.02), withoutSamples)
	h.locked(func() {
		h.u.compareRuns([]string{old, oldSlow})
		cs := h.u.compareScreen
		if text, imp := compareCell(outputRow(t, cs), 3); !strings.HasSuffix(text, "\u22122.0 %") || imp != widget.MediumImportance {
			t.Errorf("without samples, 2 %% slower: %q (importance %v), want the change shown, not coloured", text, imp)
		}
		const want = "These runs are comparable.\n• These runs have no raw samples (saved before raw samples were kept, or imported from a published file, which leaves them out), so their differences cannot be told from noise."
		if cs.verdict.Text != want || strings.Contains(cs.details.Text, "In brackets") {
			t.Errorf("verdict %q\nwant %q, and no legend in %q", cs.verdict.Text, want, cs.details.Text)
		}
	})
}

// colouredCells are the compare table's cells shown in the success or
// danger colour, as "ITL p99 at 8 (run 2)", read through compareCell as
// the table draws them.
func colouredCells(cs *CompareScreen) []string {
	var out []string
	for _, r := range cs.rows {
		for col := 3; col < 2+len(r.Cells); col++ {
			if _, imp := compareCell(r, col); imp == widget.SuccessImportance || imp == widget.DangerImportance {
				out = append(out, fmt.Sprintf("%s at %d (run %d)", r.Metric.Label, r.Concurrency, col-1))
			}
		}
	}
	return out
}

// TestCompareReproducedHasNoColouredCell: a run made again like another
// on the same server (seeded levels of 8 users, 100 answers of 16 tokens,
// one gap in a hundred a stall, as a real server's) is "Reproduced", and
// no cell of the table is coloured: its ITL p99, whose interval spans
// more than a factor of two, says "too wide to tell" instead. The same
// server 10 % slower is "Not reproduced", and exactly the cells that
// verdict counts are coloured, all worse.
func TestCompareReproducedHasNoColouredCell(t *testing.T) {
	h := newHarness(t)
	s := comparetest.Typical(0, 100, 16)
	s.StallP, s.StallUs = 0.01, 60_000
	orig := comparetest.SynthFile(1, []int{8}, s)
	origID := h.saveLabelled(orig, "first", 1)
	made := func(f *results.File) { f.Local.Like = &results.LikeRef{ID: origID, CreatedAt: orig.CreatedAt} }
	same := h.saveLabelled(comparetest.SynthFile(5001, []int{8}, s), "again", 2, made)
	s.Slow = 1.1
	slower := h.saveLabelled(comparetest.SynthFile(5001, []int{8}, s), "again, slower", 3, made)
	h.locked(func() {
		h.u.compareRuns([]string{origID, same})
		cs := h.u.compareScreen
		if !strings.Contains(cs.verdict.Text, "\n\u2022 Reproduced: no metric differs from the original beyond noise.") {
			t.Errorf("verdict %q, want reproduced", cs.verdict.Text)
		}
		if got := colouredCells(cs); len(got) > 0 {
			t.Errorf("reproduced, yet coloured: %q", got)
		}
		for _, r := range cs.rows {
			if text, _ := compareCell(r, 3); r.Metric.ID == "itl_p99" && !strings.HasSuffix(text, " (too wide to tell)") {
				t.Errorf("ITL p99 %q, want it said too wide to tell", text)
			}
		}

		h.u.compareRuns([]string{origID, slower})
		got := colouredCells(cs)
		if !strings.Contains(cs.verdict.Text, "\n\u2022 Not reproduced: ") || len(got) == 0 || cs.verdict.Importance != widget.WarningImportance {
			t.Fatalf("10 %% slower: verdict %q (importance %v), coloured %q; want not reproduced, in the warning colour, with coloured cells",
				cs.verdict.Text, cs.verdict.Importance, got)
		}
		named := strings.Count(cs.verdict.Text, "95 % CI")
		if i := strings.Index(cs.verdict.Text, " more (marked in the table)"); i >= 0 {
			var more int
			fmt.Sscanf(cs.verdict.Text[strings.LastIndex(cs.verdict.Text[:i], " ")+1:], "%d", &more)
			named += more
		}
		if named != len(got) {
			t.Errorf("the verdict counts %d changes, the table colours %d: %q\n%s", named, len(got), got, cs.verdict.Text)
		}
		for _, r := range cs.rows {
			if _, imp := compareCell(r, 3); imp == widget.SuccessImportance {
				t.Errorf("10 %% slower: %s coloured better", r.Metric.ID)
			}
		}
	})
}

// TestCompareNamesTellRunsApart: two runs of one model begun in the same
// minute, one stopped before its end, each have a name of their own in
// Compare — the table's headings, the lines under the verdict and the
// baseline choice — and the stopped one's says it is partial (both were
// "tiny-llama.gguf 12-07 00:19").
func TestCompareNamesTellRunsApart(t *testing.T) {
	h := newHarness(t)
	save := func(f *results.File, at string, complete bool) string {
		f.CreatedAt, f.Complete = at, complete
		for i := range f.Runs {
			f.Runs[i].ModelID = "/models/tiny-llama.gguf"
		}
		id, err := h.u.lib.Save("", f)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	stopped := save(synthetic(64), "2026-12-07T00:19:03Z", false)
	whole := save(synthetic(64), "2026-12-07T00:19:41Z", true)
	h.locked(func() {
		h.u.compareRuns([]string{stopped, whole})
		cs := h.u.compareScreen
		want := []string{"tiny-llama.gguf 12-07 00:19 (partial)", "tiny-llama.gguf 12-07 00:19"}
		if !slices.Equal(cs.labels, want) {
			t.Fatalf("the runs are named %q, want %q", cs.labels, want)
		}
		if got := cs.details.Text; !strings.Contains(got, "[1] "+want[0]) || !strings.Contains(got, "[2] "+want[1]+"\n") {
			t.Errorf("the lines under the verdict do not name each run:\n%s", got)
		}
		if !slices.Equal(cs.options, want) {
			t.Errorf("the baseline choice offers %q, want %q", cs.options, want)
		}
	})
}
