package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// TuneView shows a settings comparison: the verdict in a sentence, the
// answers check beside it, the settings as the server reported them, a
// chart per headline metric (each setting's rounds as dots and the
// interval of its change), and the table of every metric with intervals.
type TuneView struct {
	content   fyne.CanvasObject
	headline  *widget.Label
	answers   *widget.Label
	problems  *widget.Label
	state     *widget.Label
	notes     *widget.Label
	level     *widget.Select // the level the charts show
	charts    []*ChartView
	chartTabs *container.AppTabs // a chart per metric, one on show
	back      *widget.Button
	saveAll   []*widget.Button
	result    *results.TuneResult
	run       string // the run's name in a saved chart (postName)
	u         *App
}

// frame is the view's content and its back button (viewOf).
func (v *TuneView) frame() (fyne.CanvasObject, *widget.Button) { return v.content, v.back }

func newTuneView(u *App, r *results.TuneResult, id string, saveErr error, onBack func()) *TuneView {
	v := &TuneView{u: u, result: r}
	d := plans.NewTune(r)
	v.run = u.postName(id, d)
	var title *widget.Label
	names := make([]string, len(r.Settings))
	for i, s := range r.Settings {
		names[i] = s.Name
	}
	title, v.headline = planTitle("Compare settings: "+strings.Join(names, " · ")+" on "+r.Local.Where(), r.Headline())
	attention(v.headline, d)
	v.answers = widget.NewLabel(r.AnswersSentence())
	v.answers.Wrapping = fyne.TextWrapWord

	if v.answers.Text == "" {
		v.answers.Hide()
	}
	// What ran, in a line above the charts; each setting as the server
	// reported it goes under the table with the method.
	each := fmt.Sprintf("a Kovara plan at %s users, %d requests a level (%d-token prompts, %d-token answers)", joinInts(r.Plan.Concurrency), r.Plan.Requests, r.Plan.InputTokens, r.Plan.OutputTokens)
	if rp := r.Plan.Replay; rp != nil {
		each = fmt.Sprintf("a replay of a trace's %s at their recorded times", requestsWords(int64(rp.Requests), 0))
		if rp.Speed != 1 {
			each += fmt.Sprintf(", %s times as fast", trimFloat(rp.Speed))
		}
	}
	plan := fmt.Sprintf("%d %s × %d settings in turns; each run %s, kept in the history as its own run.",
		r.Plan.Rounds, results.Plural(r.Plan.Rounds, "round", "rounds"), len(r.Settings), each)
	v.state = stateLabel([]string{plan}, r.Local.Simulated, "", saveErr)
	var settings []string
	for i, s := range r.Settings {
		line := "• " + s.Name + ": " + howWords(s)
		if i < len(r.Local.Commands) && r.Local.Commands[i].Before != "" {
			line += "; before each turn: " + r.Local.Commands[i].Before
		}
		if rep := s.Server.Describe(); rep != "" {
			line += " — the server said: " + rep
		}
		settings = append(settings, line)
	}

	levels := make([]string, len(r.Plan.Concurrency))
	for i, c := range r.Plan.Concurrency {
		levels[i] = results.TuneLevelWords(c)
	}
	v.chartTabs = container.NewAppTabs()
	v.level = widget.NewSelect(levels, func(string) { v.drawCharts() })
	if len(levels) > 0 {
		v.level.SetSelected(levels[len(levels)-1]) // the most users: where settings differ most
	}
	charts := container.NewBorder(container.NewHBox(widget.NewLabel("Charts at"), v.level), nil, nil, nil, v.chartTabs)

	t := r.Table()
	table := textTable(t.Rows, t.Columns)
	v.back = widget.NewButton("New benchmark", onBack)
	notes := []string{fmt.Sprintf("Each change is the mean of the rounds' paired ratios against %s, with its %s interval; "+
		"a change is called only beyond its interval and at least the least change of its metric (%s). "+
		"The rounds are blocks: what drifted on the machine during a round moved both of its runs.", names[0], r.Plan.ConfidenceWords(), r.Plan.LeastChangeWords())}
	notes = append(notes, settings...)
	for _, st := range r.Settings {
		if log := r.Local.Logs[st.Name]; len(log) > 0 {
			notes = append(notes, st.Name+"'s server, its last lines:\n"+strings.Join(log[max(0, len(log)-12):], "\n"))
		}
	}
	v.notes = widget.NewLabel(strings.Join(notes, "\n"))
	v.notes.Wrapping = fyne.TextWrapWord
	// The verdict and the answers are said together, at the top.
	// The title, the verdict and the answers stay on top; the problems,
	// what ran, the charts, the table and the notes scroll under them (a
	// split gave the table a row's height at 1024×640).
	top := container.NewVBox(container.NewBorder(nil, nil, nil, container.NewHBox(v.back, resultShare(u, d, id).content, showFileButton(u, id)), title), v.headline, v.answers)
	body := container.NewVBox()
	if v.problems = problemsLabel(d); v.problems != nil {
		body.Add(v.problems)
	}
	table.allRows = true
	body.Add(v.state)
	body.Add(charts)
	body.Add(table)
	body.Add(v.notes)
	v.content = container.NewBorder(top, nil, nil, nil, pageScroll(body))
	u.tuneView = v
	return v
}

// tuneChartHeight is a chart's height on the page, which scrolls.
const tuneChartHeight = 240

// drawCharts draws the charts of the level chosen.
func (v *TuneView) drawCharts() {
	// The level of the label chosen ("8 users", "the replay").
	at := slices.IndexFunc(v.result.Plan.Concurrency, func(c int) bool { return results.TuneLevelWords(c) == v.level.Selected })
	if at < 0 {
		return
	}
	c := v.result.Plan.Concurrency[at]
	palette := PaletteFor(v.u.fyne.Settings().Theme(), v.u.fyne.Settings().ThemeVariant())
	specs := chart.TuneCharts(v.result, c, palette)
	v.charts = v.charts[:0]
	v.saveAll = v.saveAll[:0]
	shown := v.chartTabs.SelectedIndex()
	var items []*container.TabItem
	for _, spec := range specs {
		cv := NewChartView("Two runs are needed for a chart.")
		cv.SetMinHeight(tuneChartHeight)
		cv.SetSpec(spec)
		cv.SetRun(v.run)
		v.charts = append(v.charts, cv)
		name := strings.TrimSuffix(spec.Title, " "+results.TuneAtLevel(c))
		items = append(items, container.NewTabItem(name, savableChart(v.u, cv, spec.Title, &v.saveAll)))
	}
	if len(items) == 0 {
		items = []*container.TabItem{container.NewTabItem("No runs", widget.NewLabel("No run of any setting finished at this level: there is nothing to draw."))}
	}
	v.chartTabs.SetItems(items)
	if shown > 0 && shown < len(items) {
		v.chartTabs.SelectIndex(shown)
	}
}

// howWords says how a setting was reached.
func howWords(s results.TuneSetting) string {
	switch s.How {
	case setup.ByModel:
		return "model " + s.Model
	case setup.ByHand:
		return "changed by hand"
	}
	if s.Rounds == 0 {
		return "a command the app runs (never measured)"
	}
	return "started and stopped by the app for each of its turns"
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return results.JoinAnd(parts)
}
