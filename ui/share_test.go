package ui

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	fstorage "fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
	"github.com/kovara/desktop/storage"
)

// shareLabel is the label the tests give a run in History: the saved
// charts and reports name the run by it.
const shareLabel = "after the driver update"

// sharedParts are what a view shows, found by walking its tree: every
// chart, every Save PNG button, and the buttons by their words.
type sharedParts struct {
	charts  []*ChartView
	pngs    []*widget.Button
	buttons map[string]*widget.Button
}

// partsOf walks o's tree, every tab's content included (not only the
// one showing).
func partsOf(t *testing.T, o fyne.CanvasObject) sharedParts {
	p := sharedParts{buttons: map[string]*widget.Button{}}
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *ChartView:
			p.charts = append(p.charts, x)
		case *widget.Button:
			if strings.Contains(x.Text, "PNG") {
				p.pngs = append(p.pngs, x)
			}
			if _, ok := p.buttons[x.Text]; !ok {
				p.buttons[x.Text] = x
			}
		case *container.AppTabs:
			for _, it := range x.Items {
				walk(it.Content)
			}
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.TempWidgetRenderer(t, x).Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	return p
}

// savedLabelled keeps d in the library under shareLabel.
func (h *harness) savedLabelled(d plans.Doc) string {
	h.t.Helper()
	id, err := h.u.lib.SaveDoc("", d)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.u.lib.SetAnnotation(id, storage.Annotation{Label: shareLabel}); err != nil {
		h.t.Fatal(err)
	}
	return id
}

// TestEveryChartSavesAStandAlonePNG: every chart of every plan's result
// view has a Save PNG button, and what it saves is 1200×675 whatever the
// window, titled, with its axes' units and the run named by its label,
// model and engine (the CLI's --png draws the same specs: chart/result.go).
func TestEveryChartSavesAStandAlonePNG(t *testing.T) {
	h := newHarness(t)
	for _, c := range planstest.Cases() {
		if c.Failed {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			id := h.savedLabelled(c.Doc)
			engine := chart.EngineName(c.Doc.Summary().Engine)
			h.locked(func() {
				v := h.u.resultView(c.Doc, id, nil, func() {})
				h.win.SetContent(v.content)
				h.win.Resize(fyne.NewSize(1024, 640))
				p := partsOf(t, v.content)
				if len(p.charts) == 0 && c.Doc.Kind().ID != results.PlanStages {
					t.Fatal("no chart found in the view")
				}
				if len(p.pngs) < len(p.charts) {
					t.Errorf("%d charts, %d Save PNG buttons: each chart needs one", len(p.charts), len(p.pngs))
				}
				for _, cv := range p.charts {
					if !cv.ShowingChart() {
						continue
					}
					spec, tl := cv.postSpecs()
					var title, subtitle string
					switch {
					case spec != nil:
						title, subtitle = spec.Title, spec.Subtitle
						if spec.XLabel == "" || spec.YLabel == "" {
							t.Errorf("%s: axes %q and %q, want both named with their units", title, spec.XLabel, spec.YLabel)
						}
					case tl != nil:
						title, subtitle = tl.Title, tl.Subtitle
					default:
						t.Fatalf("%s: nothing to save though it shows a chart", cv.Title())
					}
					for _, want := range []string{shareLabel, c.Doc.Model(), engine} {
						if !strings.Contains(subtitle, want) {
							t.Errorf("%s: subtitle %q does not name the run by %q", title, subtitle, want)
						}
					}
					img, err := cv.PostImage()
					if err != nil {
						t.Fatalf("%s: %v", title, err)
					}
					if got, want := img.Bounds().Size(), image.Pt(chart.PostWidth, chart.PostHeight); got != want {
						t.Errorf("%s: saved at %v, want %v", title, got, want)
					}
				}
			})
		})
	}
}

// savedFile taps a button that asks where to save, saves in dir under the
// name offered, and returns what was written.
func (h *harness) savedFile(b *widget.Button, dir string) (string, []byte) {
	h.t.Helper()
	h.u.fyne.Preferences().SetString("fyne:fileDialogLastFolder", fstorage.NewFileURI(dir).String())
	test.Tap(b)
	h.tapInOverlay("Save")
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		h.t.Fatalf("want one file saved in %s, found %v (%v)", dir, entries, err)
	}
	path := filepath.Join(dir, entries[0].Name())
	data, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		h.t.Fatal(err)
	}
	return entries[0].Name(), data
}

// TestResultChartsSaveThroughTheDialog: the Kovara result's throughput
// and TTFT charts (which had no Save PNG) write a 1200×675 PNG named for
// the chart, whatever the size on screen.
func TestResultChartsSaveThroughTheDialog(t *testing.T) {
	h := newHarness(t)
	id := h.savedLabelled(planstest.Cases()[0].Doc)
	dir := t.TempDir()
	h.locked(func() {
		h.u.tabs.SelectIndex(1)
		h.u.historyScreen.reload()
		h.u.historyScreen.open(id)
		v := h.u.historyScreen.opened
		v.views.SelectIndex(0)
		for i, want := range []string{"output-throughput-by-concurrency.png", "time-to-first-token-by-concurrency.png"} {
			name, data := h.savedFile(v.saveCharts[i], dir)
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s is not a PNG: %v", name, err)
			}
			if name != want || img.Bounds().Size() != image.Pt(chart.PostWidth, chart.PostHeight) {
				t.Errorf("saved %s at %v, want %s at %dx%d", name, img.Bounds().Size(), want, chart.PostWidth, chart.PostHeight)
			}
		}
	})
}

// plantPrivate writes an endpoint's private details into a Kovara
// result, where no shared output may show them.
func plantPrivate(f *results.File) []string {
	f.Local.Endpoint = "http://10.77.1.9:8080/v1"
	f.Local.EndpointHost = "10.77.1.9"
	f.Local.EndpointName = "secret-lab-box"
	f.Local.ServedModels = []string{"private-served-model"}
	return []string{"10.77.1.9", "secret-lab-box", "private-served-model"}
}

// TestCopyAsMarkdown: on every plan's result view Copy as Markdown puts
// the result's table on the clipboard and says Copied on its button; the
// Kovara result's Markdown names nothing of its endpoint; Save CSV…
// writes its table with units in the header.
func TestCopyAsMarkdown(t *testing.T) {
	h := newHarness(t)
	old := copiedFor
	copiedFor = 1 << 40 // the words stay for the test to read
	t.Cleanup(func() { copiedFor = old })
	for _, c := range planstest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			d := c.Doc
			var private []string
			if k, ok := d.(plans.Kovara); ok {
				f := *k.File
				private = plantPrivate(&f)
				d = plans.Kovara{File: &f}
			}
			id := h.savedLabelled(d)
			h.locked(func() {
				h.u.fyne.Clipboard().SetContent("")
				v := h.u.resultView(d, id, nil, func() {})
				h.win.SetContent(v.content)
				p := partsOf(t, v.content)
				b := p.buttons[copyMarkdownText]
				if b == nil || p.buttons["Save CSV…"] == nil || p.buttons["Save report…"] == nil {
					t.Fatalf("no Copy as Markdown, Save CSV… and Save report… buttons: %v", p.buttons)
				}
				test.Tap(b)
				md := h.u.fyne.Clipboard().Content()
				if !strings.Contains(md, "\n| ") || !strings.Contains(md, "---") {
					t.Errorf("the clipboard holds no Markdown table:\n%s", md)
				}
				for _, row := range d.Table().Rows {
					if len(row) > 0 && !strings.Contains(md, row[0]) {
						t.Errorf("the table's row %q is not in the Markdown", row[0])
					}
				}
				for _, s := range private {
					if strings.Contains(md, s) {
						t.Errorf("the Markdown shows %q of the endpoint", s)
					}
				}
				if b.Text != copiedMarkdown {
					t.Errorf("after Copy the button says %q, want %q", b.Text, copiedMarkdown)
				}
			})
		})
	}
}

// TestResultSaveCSVAndReport: the Kovara result's Save CSV… and Save
// report… write the table (units in the header) and one HTML page,
// neither with the endpoint in it.
func TestResultSaveCSVAndReport(t *testing.T) {
	h := newHarness(t)
	k := planstest.Cases()[0].Doc.(plans.Kovara)
	f := *k.File
	private := plantPrivate(&f)
	// llama-server names its model by its -m path: the saved file's name
	// keeps the file's name, never the folder.
	f.Runs = append([]results.Run(nil), f.Runs...)
	for i := range f.Runs {
		f.Runs[i].ModelID = "/home/alice/models/" + f.Runs[i].ModelID + ".gguf"
	}
	id := h.savedLabelled(plans.Kovara{File: &f})
	dir := t.TempDir()
	h.locked(func() {
		h.u.tabs.SelectIndex(1)
		h.u.historyScreen.reload()
		h.u.historyScreen.open(id)
		v := h.u.historyScreen.opened
		name, data := h.savedFile(v.share.saveCSV, dir)
		header, _, _ := strings.Cut(string(data), "\n")
		if strings.Contains(name, "alice") || !strings.HasPrefix(name, "kovara-") {
			t.Errorf("saved as %s, want kovara-<model file>.csv without the model's folder", name)
		}
		if !strings.HasSuffix(name, ".csv") || !strings.Contains(header, "(") {
			t.Errorf("saved %s with header %q, want a .csv whose header holds units", name, header)
		}
		for _, s := range private {
			if strings.Contains(string(data), s) {
				t.Errorf("the CSV shows %q of the endpoint", s)
			}
		}
		name, data = h.savedFile(v.share.saveReport, dir)
		if !strings.HasSuffix(name, ".html") || !strings.Contains(string(data), "<html") || !strings.Contains(string(data), "data:image/png;base64,") {
			t.Errorf("saved %s, want an .html page with its charts in it", name)
		}
		for _, s := range private {
			if strings.Contains(string(data), s) {
				t.Errorf("the report shows %q of the endpoint", s)
			}
		}
	})
}

// TestCompareSharesAndNamesEachRun: Compare's saved charts name each run
// by its label, model and engine (its Save PNG wrote 506×200 with a
// legend of "[1]" and "[2]"), and its Copy as Markdown copies the
// comparison without the endpoints.
func TestCompareSharesAndNamesEachRun(t *testing.T) {
	h := newHarness(t)
	old := copiedFor
	copiedFor = 1 << 40
	t.Cleanup(func() { copiedFor = old })
	// Two levels: a curve to draw and to save.
	two := func() *results.File {
		s := comparetest.Typical(0, 40, 64)
		return comparetest.SynthFile(1, []int{1, 4}, s)
	}
	a, b := two(), two()
	private := append(plantPrivate(a), plantPrivate(b)...)
	ida := h.saveLabelled(a, "stock", 1)
	idb := h.saveLabelled(b, "tuned", 2)
	dir := t.TempDir()
	h.locked(func() {
		h.u.compareRuns([]string{ida, idb})
		c := h.u.compareScreen
		if len(c.charts) == 0 {
			t.Fatal("no charts compared")
		}
		for _, cv := range c.charts {
			spec, _ := cv.postSpecs()
			if spec == nil {
				continue // too few points: nothing to save
			}
			var names []string
			for _, s := range spec.Series {
				names = append(names, s.Name)
			}
			all := strings.Join(names, "\n")
			for i, label := range []string{"stock", "tuned"} {
				f := []*results.File{a, b}[i]
				want := chart.RunOf(f, label)
				if !strings.Contains(all, want) || chart.ModelOf(f) == "" {
					t.Errorf("%s: legend %q does not name run %d as %q", spec.Title, names, i+1, want)
				}
			}
			if !strings.Contains(spec.Title, " ") || spec.YLabel == "" || spec.XLabel == "" {
				t.Errorf("%s: axes %q %q", spec.Title, spec.XLabel, spec.YLabel)
			}
		}
		c.views.SelectIndex(1)
		name, data := h.savedFile(c.saves[0], dir)
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := img.Bounds().Size(), image.Pt(chart.PostWidth, chart.PostHeight); got != want {
			t.Errorf("Compare saved %s at %v, want %v", name, got, want)
		}

		h.u.fyne.Clipboard().SetContent("")
		test.Tap(c.share.copyMD)
		md := h.u.fyne.Clipboard().Content()
		if !strings.Contains(md, "stock") || !strings.Contains(md, "tuned") || !strings.Contains(md, "\n| ") {
			t.Errorf("the comparison's Markdown lacks its table or its runs:\n%s", md)
		}
		for _, s := range private {
			if strings.Contains(md, s) {
				t.Errorf("the comparison's Markdown shows %q of an endpoint", s)
			}
		}
	})
}
