package ui

import (
	"bytes"
	"image"
	"image/png"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
)

// liveRunData is a run's first seconds as the live view gets them: the
// throughput and TTFT of a level, token gaps, and the server's gauges
// read from a vLLM's /metrics; no GPU source.
func liveRunData() *liveData {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	running, waiting, kv := 4.0, 1.0, 0.3
	m := results.ServerMetricsSample{Running: &running, Waiting: &waiting, KVCache: &kv}
	var d liveData
	for i := range 4 {
		m.T = float64(i)
		d.add(engine.Snapshot{At: sec(float64(i)), Phase: engine.PhaseMeasure, Level: 1, Levels: 2, Concurrency: 4,
			NewLevel: i == 0, TPS: 100 + 10*float64(i), TTFT: []float64{40, 45}, ITL: []float32{20, 22, 25},
			StageName: "level 1 (4 users)", ServerFamily: results.FamilyVLLM, Server: &m, ServerNew: []results.ServerMetricsSample{m}})
	}
	c := d.clone()
	return &c
}

// TestLiveChartsSaveAStandAlonePNG: every chart of the live view has a
// Save PNG… button, enabled once its chart is drawn, and what it saves
// through the dialog is the result views' PNG: 1200×675 whatever the
// window, titled, its axes named with their units, and the run named by
// its model and engine, said to be simulated, never by its endpoint.
func TestLiveChartsSaveAStandAlonePNG(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	const model, endpoint = "qwen3-8b", "lab box"
	h.locked(func() {
		v := newLiveView("Benchmarking "+endpoint, func() {})
		v.saveChart, v.model, v.simulated = h.u.saveChart, model, true
		h.win.SetContent(v.content)
		h.win.Resize(fyne.NewSize(1024, 640))

		p := partsOf(t, v.content)
		if len(p.charts) != len(v.charts()) || len(p.pngs) != len(p.charts) {
			t.Fatalf("%d charts, %d Save PNG buttons: want %d of each", len(p.charts), len(p.pngs), len(v.charts()))
		}
		for _, b := range p.pngs {
			if !b.Disabled() {
				t.Error("a Save PNG button is enabled before its chart has anything drawn")
			}
		}

		d := liveRunData()
		palette := PaletteFor(h.u.fyne.Settings().Theme(), h.u.fyne.Settings().ThemeVariant())
		for i := range 2 { // the Requests and the Server tab, each drawn while on show
			v.tabs.SelectIndex(i)
			v.update(d, palette)
		}
		drawn := []*ChartView{v.tpsChart, v.ttftChart, v.itlChart, v.srvChart, v.kvChart}
		for _, c := range drawn {
			if !c.ShowingChart() || v.saves[c].Disabled() {
				t.Errorf("%q: drawn %v, Save PNG enabled %v; want both", c.Title(), c.ShowingChart(), !v.saves[c].Disabled())
			}
			spec, _ := c.postSpecs()
			if spec == nil {
				t.Errorf("%q: nothing to save though it shows a chart", c.Title())
				continue
			}
			if spec.Title == "" || spec.XLabel == "" || spec.YLabel == "" {
				t.Errorf("title %q, axes %q and %q: want all three", spec.Title, spec.XLabel, spec.YLabel)
			}
			if want := model + " · vLLM · simulated"; spec.Subtitle != want {
				t.Errorf("%s: subtitle %q, want %q", spec.Title, spec.Subtitle, want)
			}
			if strings.Contains(spec.Subtitle, endpoint) {
				t.Errorf("%s: subtitle %q names the endpoint", spec.Title, spec.Subtitle)
			}
		}
		if !v.saves[v.powerChart].Disabled() {
			t.Error("the GPU power chart, with no readings, offers Save PNG")
		}

		v.tabs.SelectIndex(0)
		for _, c := range []*ChartView{v.tpsChart, v.itlChart} {
			name, data := h.savedFile(v.saves[c], dir)
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s is not a PNG: %v", name, err)
			}
			if want := chart.FileName(c.Title()); name != want || img.Bounds().Size() != image.Pt(chart.PostWidth, chart.PostHeight) {
				t.Errorf("saved %s at %v, want %s at %dx%d", name, img.Bounds().Size(), want, chart.PostWidth, chart.PostHeight)
			}
		}
	})
}

// TestLiveRunName: a live chart names the run as a saved result's chart
// does, from what the run knows while it runs.
func TestLiveRunName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		model, family string
		simulated     bool
		want          string
	}{
		{"qwen3-8b", results.FamilyLlamaCpp, false, "qwen3-8b · llama.cpp"},
		{"qwen3-8b", results.FamilyVLLM, true, "qwen3-8b · vLLM · simulated"},
		{"qwen3-8b", "", false, "qwen3-8b"},
		{"", results.FamilyOllama, false, "Ollama"},
		{"", "", true, "simulated"},
		{"", "", false, ""},
	} {
		d := liveData{snap: engine.Snapshot{ServerFamily: c.family}}
		if got := d.runName(c.model, c.simulated); got != c.want {
			t.Errorf("model %q, family %q, simulated %v: %q, want %q", c.model, c.family, c.simulated, got, c.want)
		}
	}
}

// TestLiveViewOfARunSavesItsCharts: the Benchmark screen's run gives its
// live view what Save PNG needs: the App's save and the run's model.
func TestLiveViewOfARunSavesItsCharts(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		b.selectEndpoint(SimulatorName)
		h.setPlan("1", "4", "300")
		if b.runButton.Disabled() {
			t.Fatalf("run disabled: %q", b.planNote.Text)
		}
		test.Tap(b.runButton)
		if b.live == nil {
			t.Fatal("the live view is not showing")
		}
		if b.live.saveChart == nil || !b.live.simulated || b.live.model != b.chosenModel() {
			t.Fatalf("the live view cannot save its charts: save set %v, simulated %v, model %q (the form's %q)",
				b.live.saveChart != nil, b.live.simulated, b.live.model, b.chosenModel())
		}
	})
	h.waitFor("the throughput chart", 30*time.Second, func() bool { return b.live.tpsChart.ShowingChart() })
	h.locked(func() {
		if b.live.saves[b.live.tpsChart].Disabled() {
			t.Error("the drawn throughput chart's Save PNG is disabled")
		}
		if spec, _ := b.live.tpsChart.postSpecs(); spec == nil || !strings.HasSuffix(spec.Subtitle, "simulated") {
			t.Errorf("the saved throughput chart is not named as simulated: %+v", spec)
		}
	})
	h.waitFor("the result", 60*time.Second, func() bool { return b.result != nil })
}
