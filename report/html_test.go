package report

import (
	"bytes"
	"encoding/base64"
	"html/template"
	"image"
	"image/png"
	"regexp"
	"strings"
	"testing"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// dataURI is an embedded PNG; the golden files hold pngPlaceholder in its
// place (the pixels are the chart package's to test), and checkPNGs reads
// each one.
var dataURI = regexp.MustCompile(`data:image/png;base64,([A-Za-z0-9+/=]+)`)

const pngPlaceholder = "data:image/png;base64,…"

// htmlCase is a report the HTML golden files hold: of one document, or
// of several compared.
type htmlCase struct {
	name   string
	docs   []plans.Doc
	labels []string
	// charts is how many charts the page draws.
	charts int
}

// synthRuns are three Kovara runs with every request kept (so they have
// timelines), the third slower: a comparison with a verdict.
func synthRuns(t *testing.T) []plans.Doc {
	t.Helper()
	a := comparetest.SynthFile(11, []int{1, 4}, comparetest.Typical(1, 24, 48))
	b := comparetest.SynthFile(12, []int{1, 4}, comparetest.Typical(1, 24, 48))
	c, err := comparetest.Slowed(comparetest.SynthFile(13, []int{1, 4}, comparetest.Typical(1, 24, 48)), 1.4)
	if err != nil {
		t.Fatal(err)
	}
	return []plans.Doc{plans.Kovara{File: a}, plans.Kovara{File: b}, plans.Kovara{File: c}}
}

// htmlCases: every golden document of the Markdown and CSV (a real
// llama-server's where there is one, and each plan's clean and failed
// document), a Kovara run with its requests kept, three Kovara runs
// compared and each other plan's clean and failed documents compared.
func htmlCases(t *testing.T) []htmlCase {
	t.Helper()
	var out []htmlCase
	for _, c := range goldenCases(t) {
		out = append(out, htmlCase{name: c.name, docs: []plans.Doc{c.doc}, charts: -1})
	}
	runs := synthRuns(t)
	// Throughput, TTFT, ITL and the busiest level's timeline.
	out = append(out, htmlCase{name: "kovara-synth", docs: runs[:1], labels: []string{"qwen on the 3090"}, charts: 4})
	// Four overlaid charts and the three runs' timelines.
	out = append(out, htmlCase{name: "compare-kovara", docs: runs, labels: []string{"before", "", "after <the update>"}, charts: 7})
	byKind := map[string][]plans.Doc{}
	for _, c := range goldenCases(t) {
		if strings.HasSuffix(c.name, "-clean") || strings.HasSuffix(c.name, "-failed") {
			byKind[c.doc.Kind().ID] = append(byKind[c.doc.Kind().ID], c.doc)
		}
	}
	for _, k := range plans.All {
		if docs := byKind[k.ID]; k.HasComparison() && len(docs) >= 2 {
			out = append(out, htmlCase{name: "compare-" + k.ID, docs: docs[:2], charts: -1})
		}
	}
	return out
}

// TestHTMLGolden holds each report's page to testdata/html-NAME.html
// (go test ./report -update rewrites them), its charts' PNGs replaced by
// a placeholder: the pixels are the chart package's to test, and
// TestHTMLChartsArePNGs reads the PNGs of a result and a comparison.
func TestHTMLGolden(t *testing.T) {
	t.Parallel()
	for _, c := range htmlCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := writeHTML(&b, c.docs, c.labels, placeheld); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if n := strings.Count(page, "<picture>"); c.charts >= 0 && n != c.charts {
				t.Errorf("got %d charts, want %d", n, c.charts)
			}
			checkSelfContained(t, page)
			checkOrder(t, c, page)
			golden(t, "html-"+c.name+".html", b.Bytes())
		})
	}
}

// placeheld is a chart as draw writes it, with the placeholder for its
// PNGs: drawn small, unencoded, only to learn whether it can be drawn.
func placeheld(d chartDrawing, alt string) (template.HTML, error) {
	if d.spec == nil && d.timeline == nil {
		return "", nil
	}
	if d.spec != nil {
		s := *d.spec
		s.Width, s.Height = 240, 160
		if _, err := chart.Render(s); err != nil {
			return "", err
		}
	}
	return picture(pngPlaceholder, pngPlaceholder, alt), nil
}

// TestHTMLChartsArePNGs: the page of a Kovara result as HTML writes it
// holds every chart (a chart.Spec's and a timeline's) as a PNG of its
// size, and is the golden page but for the PNGs. (One page: encoding a
// dozen PNGs takes a minute under the race detector; a comparison's
// charts are drawn by the same code.)
func TestHTMLChartsArePNGs(t *testing.T) {
	t.Parallel()
	for _, c := range htmlCases(t) {
		if c.name != "kovara-synth" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := HTML(&b, c.docs, c.labels); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if got := checkPNGs(t, page); got != c.charts {
				t.Errorf("got %d charts, want %d", got, c.charts)
			}
			checkSelfContained(t, page)
			var want bytes.Buffer
			if err := writeHTML(&want, c.docs, c.labels, placeheld); err != nil {
				t.Fatal(err)
			}
			if got := dataURI.ReplaceAllString(page, pngPlaceholder); got != want.String() {
				t.Errorf("the page differs from its golden but for the PNGs:\n%s", got)
			}
		})
	}
}

// checkPNGs decodes every chart of page, each drawn for a phone (the
// <source>) and for a screen (the <img>), and says how many charts there
// are.
func checkPNGs(t *testing.T, page string) int {
	t.Helper()
	pictures := regexp.MustCompile(`<picture><source media="\(max-width: 699px\)" srcset="(data:[^"]*)"><img src="(data:[^"]*)" alt="[^"<>]+"></picture>`).FindAllStringSubmatch(page, -1)
	if got, want := len(pictures), strings.Count(page, "data:image/png"); got*2 != want {
		t.Fatalf("%d pictures hold %d PNGs: not each a narrow and a wide one", got, want)
	}
	for _, p := range pictures {
		for i, size := range []image.Point{{narrowWidth, narrowHeight}, {chart.PostWidth, chart.PostHeight}} {
			data, err := base64.StdEncoding.DecodeString(dataURI.FindStringSubmatch(p[i+1])[1])
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("a chart is not a PNG: %v", err)
			}
			if got := image.Pt(cfg.Width, cfg.Height); got != size {
				t.Errorf("a chart is %v, want %v", got, size)
			}
		}
	}
	return len(pictures)
}

// checkSelfContained: the page reads with no network and no script.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	lower := strings.ToLower(page)
	for _, bad := range []string{"<script", "<link", "<iframe", "<object", "<embed", "@import", "url(", "http://", "https://"} {
		if i := strings.Index(lower, bad); i >= 0 {
			t.Errorf("the page holds %q (%s): it must read offline with no script", bad, excerpt(page, i))
		}
	}
	if m := regexp.MustCompile(`<[^>]*\son[a-z]+=`).FindString(lower); m != "" {
		t.Errorf("a tag has an event handler: %s", m)
	}
	for _, m := range regexp.MustCompile(`\b(?:src|srcset|href)="([^"]{0,40})`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "data:image/png;base64,") {
			t.Errorf("the page loads %q: not embedded", m[1])
		}
	}
}

func excerpt(s string, i int) string {
	return s[max(0, i-40):min(len(s), i+40)]
}

// checkOrder: the problems come before any figure, then the
// conditions, the verdict, every table and the charts; every row of
// every table is on the page, cell for cell.
func checkOrder(t *testing.T, c htmlCase, page string) {
	t.Helper()
	var r Report
	var err error
	if len(c.docs) == 1 {
		r, err = Of(c.docs[0])
	} else {
		r, err = Compared(c.docs, c.labels)
	}
	if err != nil {
		t.Fatal(err)
	}
	at := func(what string) int {
		i := strings.Index(page, escaped(what))
		if i < 0 {
			t.Fatalf("the page does not say %q", what)
		}
		return i
	}
	last := at(r.Title)
	order := []string{r.Headline}
	order = append(order, r.Problems...)
	order = append(order, r.Conditions...)
	order = append(order, r.Verdict...)
	for _, tb := range r.Tables {
		order = append(order, capitalized(tb.Title))
	}
	for _, s := range order {
		if s == "" {
			continue
		}
		if i := at(s); i < last {
			t.Errorf("%q comes before what it follows", s)
		} else {
			last = i
		}
	}
	if charts := strings.Index(page, "<h2>Charts</h2>"); charts >= 0 && charts < last {
		t.Error("the charts come before the tables")
	}
	if len(r.Problems) > 0 && strings.Index(page, `class="problems"`) > strings.Index(page, "<table") {
		t.Error("the problems come after a table")
	}
	for _, tb := range r.Tables {
		for _, row := range tb.Rows {
			cells := make([]string, len(row))
			for i, v := range row {
				cells[i] = ">" + escaped(v) + "</td>"
			}
			if !containsInOrder(page, cells) {
				t.Errorf("the row %q is not on the page", row)
			}
		}
	}
}

// sketch stands in for a chart's PNGs where only the page's text is
// read.
func sketch(d chartDrawing, alt string) (template.HTML, error) {
	if d.spec == nil && d.timeline == nil {
		return "", nil
	}
	return template.HTML(`<picture><img src="data:image/png;base64," alt="` + template.HTMLEscapeString(alt) + `"></picture>`), nil
}

// escaped is s as html/template writes it in text.
func escaped(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;").Replace(s)
}

func containsInOrder(s string, parts []string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}

// TestHTMLEscapesEveryText: a label and a model that look like markup
// are written as text, in the page and its title.
func TestHTMLEscapesEveryText(t *testing.T) {
	t.Parallel()
	runs := synthRuns(t)
	evil := `<img src=x onerror="alert(1)">&`
	f := runs[1].(plans.Kovara).File
	for i := range f.Runs {
		f.Runs[i].ModelID = "<b>model</b>"
	}
	var b bytes.Buffer
	if err := writeHTML(&b, runs[:2], []string{evil, ""}, sketch); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<img src=x", "<b>model"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q as markup", bad)
		}
	}
	for _, want := range []string{"&lt;img src=x onerror=&#34;alert(1)&#34;&gt;&amp;", "&lt;b&gt;model&lt;/b&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
}

// TestHTMLNothingPrivate plants the endpoint, a served model, a server's
// message and a key in local (as the Markdown's and CSV's test does) and
// finds none of them in the page of a result or of a comparison, nor in
// any text drawn into its charts — even a run labelled with its
// endpoint's name.
func TestHTMLNothingPrivate(t *testing.T) {
	t.Parallel()
	cases := htmlCases(t)
	for _, c := range cases {
		docs := make([]plans.Doc, len(c.docs))
		for i, d := range c.docs {
			docs[i] = planted(t, d)
		}
		labels := []string{plantName, plantHost}
		var b bytes.Buffer
		if err := writeHTML(&b, docs, labels, sketch); err != nil {
			t.Fatal(err)
		}
		leaks(t, c.name+" HTML", b.String())

		ds, err := drawingsOf(docs, labels)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			text := d.title + "\n" + d.none
			if d.spec != nil {
				text += specText(d.spec)
			}
			if d.timeline != nil {
				text += d.timeline.Title + "\n" + d.timeline.Subtitle
			}
			leaks(t, c.name+" chart", text)
		}
	}
}

// specText is every text a chart draws.
func specText(s *chart.Spec) string {
	parts := []string{s.Title, s.Subtitle, s.XLabel, s.YLabel}
	for _, x := range s.Series {
		parts = append(parts, x.Name)
	}
	return strings.Join(append(parts, s.XTickLabels...), "\n")
}

// TestHTMLNamesEachRun: a comparison's charts name each run by its label
// (else its model and time, as the table's columns do) and its engine;
// a result's charts are subtitled so.
func TestHTMLNamesEachRun(t *testing.T) {
	t.Parallel()
	runs := synthRuns(t)
	ds := comparisonCharts(runs, []string{"before", "", "after"})
	engine := chart.EngineOf(runs[0].(plans.Kovara).File)
	if engine == "" {
		t.Fatal("the synthetic runs name no engine")
	}
	want := []string{"[1] before · " + runs[0].Model() + " · " + engine, "[2] " + runLabel(nil, 1, runs[1]) + " · " + engine, "[3] after · "}
	if got := ds[0].spec.Series; len(got) != 3 {
		t.Fatalf("the throughput chart has %d series, want 3", len(got))
	}
	for i, s := range ds[0].spec.Series {
		if !strings.HasPrefix(s.Name, want[i]) {
			t.Errorf("run %d is named %q in the legend, want %q…", i+1, s.Name, want[i])
		}
	}
	for _, d := range ds[len(ds)-3:] {
		if d.timeline == nil || !strings.HasPrefix(d.timeline.Subtitle, "[") {
			t.Errorf("a timeline of the comparison names no run: %+v", d)
		}
	}
	one := docCharts(runs[0], "mine")
	for _, d := range one {
		sub := ""
		if d.spec != nil {
			sub = d.spec.Subtitle
		} else if d.timeline != nil {
			sub = d.timeline.Subtitle
		}
		if !strings.HasPrefix(sub, "mine · "+runs[0].Model()) {
			t.Errorf("%q is subtitled %q, want the run's label and model", d.title, sub)
		}
	}
}

// TestHTMLSharedTimelineScale: the compared runs' timelines are drawn at
// one level on one time scale, the longest of theirs.
func TestHTMLSharedTimelineScale(t *testing.T) {
	t.Parallel()
	runs := synthRuns(t)
	ds := sharedTimelines([]*results.File{runs[0].(plans.Kovara).File, runs[2].(plans.Kovara).File}, []string{"[1] a", "[2] b"})
	if len(ds) != 2 || ds[0].timeline == nil || ds[1].timeline == nil {
		t.Fatalf("got %+v, want two timelines", ds)
	}
	slow, err := chart.ResultTimeline(runs[2].(plans.Kovara).File, 4, chart.Light())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if got, want := d.timeline.Span, slow.Span; got != want {
			t.Errorf("%s spans %.3f s, want the slower run's %.3f s", d.title, got, want)
		}
		if !strings.Contains(d.title, "4 users") {
			t.Errorf("%q is not the busiest level both kept (4 users)", d.title)
		}
	}
}

// TestHTMLMarksChanges: a run's change beyond noise is coloured worse
// (or better) as the app's Compare colours it; the baseline's cells and
// the changes within noise are not.
func TestHTMLMarksChanges(t *testing.T) {
	t.Parallel()
	runs := synthRuns(t)
	var b bytes.Buffer
	if err := writeHTML(&b, runs, nil, sketch); err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`<tr><td class="num">(\d+)</td><td>([^<]*)</td><td class="num">[^<]*</td><td class="([^"]*)">[^<]*</td><td class="([^"]*)">[^<]*</td></tr>`).FindAllStringSubmatch(b.String(), -1)
	if len(rows) == 0 {
		t.Fatal("no comparison rows of four cells on the page")
	}
	worse := 0
	for _, r := range rows {
		if r[3] != "num" {
			t.Errorf("run 2 (no change beyond noise) has its %s at %s marked %q", r[2], r[1], r[3])
		}
		if r[4] == "num worse" {
			worse++
		}
	}
	if worse < 5 {
		t.Errorf("the slowed run has %d cells marked worse, want its throughput, ITL and latency (5 or more)", worse)
	}
}

// TestHTMLRateTurnsChart: a rate run of conversations draws its time to
// first token by turn beside the rate charts; one without turns does not.
func TestHTMLRateTurnsChart(t *testing.T) {
	t.Parallel()
	count := func(r *results.RateResult) (int, string) {
		var b bytes.Buffer
		if err := HTML(&b, []plans.Doc{plans.NewRate(r)}, nil); err != nil {
			t.Fatal(err)
		}
		return checkPNGs(t, b.String()), b.String()
	}
	plain, _ := count(planstest.LlamaRate(t))
	r := planstest.LlamaRate(t)
	for i := range r.Levels {
		r.Levels[i].ByTurn = []results.TurnFigures{{Turn: 1, Requests: 2, OK: 2, TTFTMs: &results.Dist{N: 2, P50: 80}}, {Turn: 2, Requests: 2, OK: 2, TTFTMs: &results.Dist{N: 2, P50: 60}}}
	}
	got, page := count(r)
	if got != plain+1 || !strings.Contains(page, chart.RateTurnsTitle) {
		t.Errorf("%d charts with turns, %d without; want one more, titled %q", got, plain, chart.RateTurnsTitle)
	}
}

// TestCompareChartsPromiseOnlyDrawnDots: the TTFT chart's p95 dots and
// their legend entries are there only where a p95 was measured; runs of
// 12 requests a level (none has one) get a title that says why, not a
// legend of "[1] p95" over no dot (seen in the app with two real
// llama-server runs).
func TestCompareChartsPromiseOnlyDrawnDots(t *testing.T) {
	t.Parallel()
	small := func() *results.File {
		f := planstest.LlamaKovara(t)
		for i := range f.Runs {
			f.Runs[i].Metrics.TTFTMs.P95, f.Runs[i].Metrics.TTFTMs.P99 = nil, nil
		}
		return f
	}
	tests := []struct {
		name      string
		files     []*results.File
		title     string
		dotSeries int
	}{
		{"p95 measured", []*results.File{planstest.LlamaKovara(t), planstest.LlamaKovara(t)}, "Time to first token by concurrency (p50 line, p95 dots)", 2},
		{"no p95", []*results.File{small(), small()}, "Time to first token p50 by concurrency (no p95: fewer than 20 successes a level)", 0},
	}
	for _, tt := range tests {
		specs := CompareCharts(tt.files, []string{"[1] a", "[2] b"}, chart.Light())
		ttft := specs[1]
		dots := 0
		for _, s := range ttft.Series {
			if s.Kind == chart.Scatter {
				dots++
			}
		}
		if ttft.Title != tt.title || dots != tt.dotSeries {
			t.Errorf("%s: %q with %d dot series, want %q with %d", tt.name, ttft.Title, dots, tt.title, tt.dotSeries)
		}
	}
}

// TestEveryPlanHasItsCharts: the HTML report's chart table names every
// plan in the registry, so a plan registered later is not silently a
// page without charts.
func TestEveryPlanHasItsCharts(t *testing.T) {
	for _, k := range plans.All {
		if _, ok := planCharts[k.ID]; !ok {
			t.Errorf("plan %q has no entry in planCharts", k.ID)
		}
	}
	if len(planCharts) != len(plans.All) {
		t.Errorf("planCharts has %d entries for %d plans", len(planCharts), len(plans.All))
	}
}
