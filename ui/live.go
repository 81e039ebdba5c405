package ui

import (
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine"
)

// liveRefresh is how often the live view redraws: at most four times a
// second, whatever the number of streams.
const liveRefresh = 250 * time.Millisecond

// liveChartMinHeight is the least height of a live chart: tall enough
// for a value axis of three ticks or more (chartReadableHeight); where
// two rows of them do not fit under the run's state (a 1024×640
// window), the charts scroll rather than shrink to a two-tick axis.
const liveChartMinHeight = chartReadableHeight

// LiveView shows a run while it happens.
type LiveView struct {
	content fyne.CanvasObject

	title      *widget.Label
	phase      *widget.Label
	levelBar   *widget.ProgressBar
	overallBar *widget.ProgressBar
	counters   *widget.Label
	lastError  *widget.Label
	// alert is what the run says about the server now (a silence, a
	// server gone), in the warning colour; hidden when all is well.
	alert      *widget.Label
	tpsChart   *ChartView
	ttftChart  *ChartView
	itlChart   *ChartView
	srvChart   *ChartView
	kvChart    *ChartView
	powerChart *ChartView
	utilChart  *ChartView
	tabs       *container.AppTabs // Requests | Server | Power (| Server log)
	stopButton *widget.Button
	// turn says where a settings comparison is (round, setting, what the
	// server is doing), hidden for the other plans; serverLog is the
	// server it started, in a tab of its own; overall, when set, is the
	// whole comparison's progress instead of the run's.
	turn        *widget.Label
	serverLog   *widget.Label
	logScroll   *container.Scroll
	overall     func(engine.Snapshot) float64
	stopConfirm dialog.Dialog

	// saves are the Save PNG… buttons under the charts, by chart, each
	// enabled while its chart is drawn. saveChart writes one as the
	// result views do (App.saveChart); nil leaves the buttons idle (a
	// view made alone, in tests).
	saves     map[*ChartView]*widget.Button
	saveChart func(view *ChartView, title string)
	// model and simulated name the run under a saved chart's title, with
	// the engine its /metrics names (liveData.runName); run is the name
	// the charts were last given.
	model     string
	simulated bool
	run       string

	// streamless, when set, is what the token charts say instead: the
	// plan's requests stream no tokens to draw (plans.Kind.Streamless).
	streamless string

	// redraws counts live refreshes, for tests.
	redraws int
}

func newLiveView(title string, onStop func()) *LiveView {
	v := &LiveView{
		title:      widget.NewLabelWithStyle(title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		phase:      widget.NewLabel("Starting…"),
		levelBar:   widget.NewProgressBar(),
		overallBar: widget.NewProgressBar(),
		counters:   widget.NewLabel("ok 0   errors 0   timeouts 0"),
		lastError:  widget.NewLabel(""),
		tpsChart:   NewChartView("Waiting for tokens…"),
		ttftChart:  NewChartView("Waiting for finished requests…"),
		itlChart:   NewChartView("Waiting for token gaps…"),
		srvChart:   NewChartView("Waiting for the server's /metrics (vLLM, SGLang and llama.cpp publish one)…"),
		kvChart:    NewChartView("Waiting for the server's /metrics…"),
		powerChart: NewChartView("No power readings: give this endpoint a GPU telemetry source or a wall plug under Endpoints."),
		utilChart:  NewChartView("No GPU readings yet."),
	}
	v.lastError.Wrapping = fyne.TextWrapWord
	v.phase.Wrapping = fyne.TextWrapWord
	v.alert = widget.NewLabel("")
	v.alert.Wrapping = fyne.TextWrapWord
	v.alert.Importance = widget.WarningImportance
	v.alert.Hide()
	v.turn = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.turn.Wrapping = fyne.TextWrapWord
	v.turn.Hide()
	v.stopButton = widget.NewButton("Stop", onStop)
	v.stopButton.Importance = widget.DangerImportance
	// The bars side by side and the counters beside the last error, so
	// the charts keep their room on a 1024×640 screen.
	bars := container.NewGridWithColumns(2,
		widget.NewForm(widget.NewFormItem("This stage", v.levelBar)),
		widget.NewForm(widget.NewFormItem("Whole plan", v.overallBar)),
	)
	top := container.NewVBox(
		container.NewBorder(nil, nil, nil, v.stopButton, v.title),
		v.turn, v.phase, v.alert, bars,
		container.NewBorder(nil, nil, v.counters, nil, v.lastError),
	)
	v.saves = map[*ChartView]*widget.Button{}
	for _, c := range v.charts() {
		c.SetMinHeight(liveChartMinHeight)
	}
	v.tabs = container.NewAppTabs(
		container.NewTabItem("Requests", container.NewGridWithColumns(2, v.savable(v.ttftChart), v.savable(v.itlChart))),
		container.NewTabItem("Server", container.NewGridWithColumns(2, v.savable(v.srvChart), v.savable(v.kvChart))),
		container.NewTabItem("Power", container.NewGridWithColumns(2, v.savable(v.powerChart), v.savable(v.utilChart))),
	)
	charts := container.NewGridWithRows(2, v.savable(v.tpsChart), v.tabs)
	v.content = container.NewBorder(top, nil, nil, nil, container.NewVScroll(charts))
	return v
}

// charts are the live view's charts.
func (v *LiveView) charts() []*ChartView {
	return []*ChartView{v.tpsChart, v.ttftChart, v.itlChart, v.srvChart, v.kvChart, v.powerChart, v.utilChart}
}

// savable is c with its Save PNG… button under it (as savableChart lays
// out a result's), disabled until c draws. The title is asked for at the
// tap: the ITL chart's names the stage it is of.
func (v *LiveView) savable(c *ChartView) fyne.CanvasObject {
	b := widget.NewButton("Save PNG…", func() {
		if v.saveChart != nil {
			v.saveChart(c, c.Title())
		}
	})
	b.Disable()
	v.saves[c] = b
	return container.NewBorder(nil, container.NewHBox(b), nil, nil, c)
}

// syncSaves names the run under every chart's saved title, and enables
// each Save PNG… while its chart is drawn.
func (v *LiveView) syncSaves(d *liveData) {
	if name := d.runName(v.model, v.simulated); name != v.run {
		v.run = name
		for _, c := range v.charts() {
			c.SetRun(name)
		}
	}
	for c, b := range v.saves {
		if c.ShowingChart() && b.Disabled() {
			b.Enable()
		} else if !c.ShowingChart() && !b.Disabled() {
			b.Disable()
		}
	}
}

// streamlessRun says note in place of the token charts (throughput,
// time to first token, gaps between tokens) for a plan whose requests
// stream none: waiting for tokens that never come would say the run is
// stuck. The bars and counters say its progress; the server's and the
// GPU's charts are drawn as for any run.
func (v *LiveView) streamlessRun(note string) {
	v.streamless = note
	for _, c := range []*ChartView{v.tpsChart, v.ttftChart, v.itlChart} {
		c.SetPlaceholder(note)
	}
}

// showTurn says where a settings comparison is, and shows its server's
// last log lines in their tab (made on the first call); call it on the
// UI goroutine.
func (v *LiveView) showTurn(line string, log []string) {
	v.turn.SetText(line)
	v.turn.Show()
	if v.serverLog == nil {
		v.serverLog = widget.NewLabel("")
		v.serverLog.Wrapping = fyne.TextWrapWord
		v.serverLog.TextStyle = fyne.TextStyle{Monospace: true}
		v.logScroll = container.NewVScroll(v.serverLog)
		v.tabs.Append(container.NewTabItem("Server log", v.logScroll))
	}
	text := "No server started by the app is running now."
	if len(log) > 0 {
		text = strings.Join(log, "\n")
	}
	if text != v.serverLog.Text {
		v.serverLog.SetText(text)
		v.logScroll.ScrollToBottom() // the newest lines, as a terminal shows them
	}
}

// update shows the live data; call it on the UI goroutine.
func (v *LiveView) update(d *liveData, p chart.Palette) {
	v.redraws++
	line := d.phaseLine()
	if v.overall != nil {
		// A settings comparison's whole is more than this run: its
		// time left would be this run's, said as the whole plan's.
		s := d.snap
		s.Alert, s.PlanLeft = "", 0
		line = s.Describe()
	}
	v.phase.SetText(line)
	if a := d.alert(); a != v.alert.Text || v.alert.Visible() != (a != "") {
		v.alert.SetText(a)
		v.alert.Hidden = a == ""
		v.alert.Refresh()
	}
	v.levelBar.SetValue(d.levelProgress())
	if v.overall != nil {
		v.overallBar.SetValue(v.overall(d.snap))
	} else {
		v.overallBar.SetValue(d.overallProgress())
	}
	v.counters.SetText(d.counters() + d.powerCounters())
	if e := d.snap.LastError; e != "" {
		v.lastError.SetText("Last error: " + e)
	}
	if v.streamless == "" {
		v.tpsChart.SetSpec(d.tpsSpec(p))
	}
	// Only the charts on show are drawn: the others catch up when chosen.
	switch v.tabs.SelectedIndex() {
	case 0:
		if v.streamless != "" {
			break
		}
		v.ttftChart.SetPlaceholder(d.ttftPlaceholder())
		v.ttftChart.SetSpec(d.ttftSpec(p))
		v.itlChart.SetPlaceholder(d.itlPlaceholder())
		v.itlChart.SetSpec(d.itlSpec(p))
	case 1:
		v.srvChart.SetPlaceholder(d.serverPlaceholder())
		v.kvChart.SetPlaceholder(d.kvPlaceholder())
		v.srvChart.SetSpec(d.serverSpec(p))
		v.kvChart.SetSpec(d.kvSpec(p))
	case 2:
		v.powerChart.SetSpec(d.powerSpec(p))
		v.utilChart.SetSpec(d.utilSpec(p))
	}
	v.syncSaves(d)
}
