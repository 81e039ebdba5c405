package chart

import (
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

func TestRunName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		label, model, engine, want string
	}{
		{"after the driver update", "qwen3-8b", "llama.cpp b6190", "after the driver update · qwen3-8b · llama.cpp b6190"},
		{"", "qwen3-8b", "vLLM 0.10.1", "qwen3-8b · vLLM 0.10.1"},
		{"", "qwen3-8b", "", "qwen3-8b"},
		{"Qwen3-8B", "qwen3-8b", "", "Qwen3-8B"}, // a label that is the model's name, once
		{" ", "", "", ""},
	} {
		if got := RunName(c.label, c.model, c.engine); got != c.want {
			t.Errorf("RunName(%q, %q, %q) = %q, want %q", c.label, c.model, c.engine, got, c.want)
		}
	}
}

func TestEngineOf(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	manifest := &results.File{Runs: []results.Run{{ModelID: "m", Engine: s(results.FamilyVLLM), EngineVersion: s("0.10.1")}}}
	manifest.Local.Detection = &results.Detection{Family: results.FamilyLlamaCpp, Version: "b1"}
	detected := &results.File{Runs: []results.Run{{ModelID: "m"}}}
	detected.Local.Detection = &results.Detection{Family: results.FamilyOllama, Version: "0.12.3"}
	for _, c := range []struct {
		name string
		f    *results.File
		want string
	}{
		{"the manifest's engine first", manifest, "vLLM 0.10.1"},
		{"else what the endpoint said", detected, "Ollama 0.12.3"},
		{"neither", &results.File{Runs: []results.Run{{ModelID: "m"}}}, ""},
	} {
		if got := EngineOf(c.f); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	sim := &results.File{Runs: []results.Run{{ModelID: "kovara-sim-8b", Engine: s(results.FamilyVLLM), EngineVersion: s("0.11.0")}}}
	sim.Local.Simulated = true
	if got, want := RunOf(sim, "demo"), "demo · kovara-sim-8b · vLLM 0.11.0 · simulated"; got != want {
		t.Errorf("RunOf a simulated run: %q, want %q", got, want)
	}
	if got, want := EngineName("vllm 0.10.1"), "vLLM 0.10.1"; got != want {
		t.Errorf("EngineName: %q, want %q", got, want)
	}
}

// TestResultChartsStandAlone: a Kovara result's charts, as the CLI's
// --png and the app's Save PNG write them, are 1200×675 with a title,
// axis labels with units and the run's model and engine under the title.
func TestResultChartsStandAlone(t *testing.T) {
	t.Parallel()
	f := resultFile()
	engine, version := results.FamilyLlamaCpp, "b6190"
	for i := range f.Runs {
		f.Runs[i].ModelID, f.Runs[i].Engine, f.Runs[i].EngineVersion = "qwen3-8b", &engine, &version
	}
	for _, spec := range ResultCharts(f, testDark) {
		p := Post(spec)
		if got, want := p.Subtitle, "qwen3-8b · llama.cpp b6190"; got != want {
			t.Errorf("%s: subtitle %q, want %q", spec.Title, got, want)
		}
		if p.Title == "" || p.XLabel == "" || p.YLabel == "" {
			t.Errorf("title %q, x %q, y %q: a chart outside the app needs all three", p.Title, p.XLabel, p.YLabel)
		}
		if p.Palette.Background != Light().Background {
			t.Errorf("%s: background %v, want the light palette's", p.Title, p.Palette.Background)
		}
		img, err := Render(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := img.Bounds().Size(), image.Pt(PostWidth, PostHeight); got != want {
			t.Errorf("%s: %v, want %v", p.Title, got, want)
		}
	}
}

// inkAtEdges reports whether any pixel of img within band rows, in the
// first or last margin columns, differs from the background.
func inkAtEdges(img *image.RGBA, bg color.Color, top, bottom, margin int) bool {
	br, bgG, bb, _ := bg.RGBA()
	w := img.Bounds().Dx()
	for y := top; y < bottom; y++ {
		for x := range w {
			if x >= margin && x < w-margin {
				continue
			}
			r, g, b, _ := img.At(x, y).RGBA()
			if r != br || g != bgG || b != bb {
				return true
			}
		}
	}
	return false
}

// TestLongWordsStayInTheImage: a title, subtitle or legend name wider
// than the chart is cut short with an ellipsis, never drawn past the
// right edge; a subtitle is drawn.
func TestLongWordsStayInTheImage(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a very long run label ", 20)
	base := Spec{Title: "Output throughput by concurrency", XLabel: "concurrent streams", YLabel: "tok/s", Width: 640, Height: 360,
		Palette: Light(), Series: []Series{{Name: "short", X: []float64{1, 2}, Y: []float64{1, 2}}}}
	plain, err := Render(base)
	if err != nil {
		t.Fatal(err)
	}
	named := base
	named.Subtitle = "qwen3-8b · llama.cpp b6190"
	sub, err := Render(named)
	if err != nil {
		t.Fatal(err)
	}
	if sameImage(plain, sub) {
		t.Error("a subtitle changed nothing in the image")
	}
	for name, edit := range map[string]func(*Spec){
		"title":    func(s *Spec) { s.Title = long },
		"subtitle": func(s *Spec) { s.Subtitle = long },
		"legend":   func(s *Spec) { s.Series[0].Name = long },
	} {
		s := base
		s.Series = []Series{base.Series[0]}
		edit(&s)
		img, err := Render(s)
		if err != nil {
			t.Fatal(err)
		}
		// The header's band, where the words are; the margins (padOuter,
		// padRight) stay background.
		if inkAtEdges(img, Light().Background, 0, 80, 6) {
			t.Errorf("a long %s is drawn into the image's margin", name)
		}
	}
	if got := fitText(long, 100, 11, func(s string, _ float64) (int, int) { return 6 * len([]rune(s)), 0 }); len([]rune(got)) > 100/6 || !strings.HasSuffix(got, "…") {
		t.Errorf("fitText = %q, want at most %d characters ending in …", got, 100/6)
	}
	if got := fitText("fits", 100, 11, func(s string, _ float64) (int, int) { return 6 * len(s), 0 }); got != "fits" {
		t.Errorf("fitText cut %q, which fits", got)
	}
}

// TestPostTimelineNamesTheRun: a posted timeline is the post size and
// draws its subtitle, cut to its width.
func TestPostTimelineNamesTheRun(t *testing.T) {
	t.Parallel()
	spec, err := LevelTimeline("Every request at 4 users", queuedLevel(4, 4, 8, 16, 0.05, 0.02), testDark)
	if err != nil {
		t.Fatal(err)
	}
	p := PostTimeline(spec)
	plain, err := RenderTimeline(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := plain.Bounds().Size(), image.Pt(PostWidth, PostHeight); got != want {
		t.Errorf("%v, want %v", got, want)
	}
	p.Subtitle = strings.Repeat("my run · qwen3-8b · vLLM 0.10.1 ", 10)
	named, err := RenderTimeline(p)
	if err != nil {
		t.Fatal(err)
	}
	if sameImage(plain, named) {
		t.Error("the subtitle changed nothing in the image")
	}
	if l := layoutOf(t, p); l.subtitle == p.Subtitle || !strings.HasSuffix(l.subtitle, "…") {
		t.Errorf("subtitle drawn as %q, want it cut short to the width", l.subtitle)
	}
}

func sameImage(a, b *image.RGBA) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	for i := range a.Pix {
		if a.Pix[i] != b.Pix[i] {
			return false
		}
	}
	return true
}
