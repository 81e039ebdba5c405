package ui

import (
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// RateView shows a rate result: the headline in words and its problems,
// latency (p50, p95, from the intended send) and the achieved rate and
// goodput against the offered rate and, with conversations, the time to
// first token by turn (chart.RateResultCharts, as the HTML report draws),
// and the table per rate with how it was measured, what queued and the
// client's own lateness under it.
type RateView struct {
	chartPage               // its state: what ran, where the result is kept
	method    *widget.Label // how the figures are made, the queues, the run's warnings
	latency   *ChartView
	rates     *ChartView
	turns     *ChartView // nil without conversations
}

func newRateView(u *App, r *results.RateResult, id string, saveErr error, onBack func()) *RateView {
	v := &RateView{}
	d := plans.NewRate(r)
	state := stateLabel([]string{rateRanLine(r)}, r.Local.Simulated,
		"Kept on this machine; rate results are never published: open-loop load is not the Kovara method.", saveErr)

	palette := PaletteFor(u.fyne.Settings().Theme(), u.fyne.Settings().ThemeVariant())
	run := u.postName(id, d)
	none := "Two measured rates are needed for a chart."
	if r.Replay != nil {
		none = "No request of the replay was answered: there is nothing to draw."
	}
	specs := chart.RateResultCharts(r, palette)
	views, cells := resultCharts(u, specs[:2], none, run, &v.saveAll)
	v.latency, v.rates = views[0], views[1]
	if len(specs) > 2 {
		turns, cell := resultCharts(u, specs[2:], "Two turns are needed for a chart.", run, &v.saveAll)
		v.turns, cells = turns[0], append(cells, cell...)
	}
	charts := container.NewGridWithColumns(len(cells), cells...)

	v.method = widget.NewLabel(strings.Join(rateNotes(r), "\n"))
	v.method.Wrapping = fyne.TextWrapWord
	v.build(u, id, fmt.Sprintf("Rate: %s on %s", results.ModelName(r.Model), r.Local.Where()), d, state, v.method, charts, onBack)
	return v
}

// rateRanLine says what ran, in a line: the rates or the sweep, the
// arrivals, the cap and the lengths (with a person's own load, only the
// question's and the answer's: the notes say the rest).
func rateRanLine(r *results.RateResult) string {
	s := r.Settings
	if m := r.Replay; m != nil {
		line := fmt.Sprintf("A trace replayed: %d of its %d requests at their recorded times", m.Sent, m.InTrace)
		if m.Speed != 1 {
			line += " divided by " + trimFloat(m.Speed)
		}
		return line + fmt.Sprintf(", at most %d in flight, each prompt and answer as long as recorded.", s.MaxInFlight)
	}
	what := "Given rates"
	if s.Sweep {
		what = fmt.Sprintf("A sweep from %s up to %s", results.RateName(s.SweepFrom), results.RateName(s.SweepMax))
	}
	arr := s.Arrival
	if arr == "gamma" {
		arr += fmt.Sprintf(" (burstiness %s)", trimFloat(s.Burstiness))
	}
	lengths := fmt.Sprintf("%d-token prompts and %d-token answers", s.InputTokens, s.OutputTokens)
	switch w := s.Workload; {
	case w != nil && w.Prompts != nil: // the file's prompts are the questions: the notes say them
		lengths = fmt.Sprintf("your prompts, with %d-token answers where a prompt sets none", s.OutputTokens)
	case w != nil: // the system prompt and the history come on top: the notes say them
		lengths = fmt.Sprintf("%d-token questions and %d-token answers", s.InputTokens, s.OutputTokens)
	}
	line := fmt.Sprintf("%s: %d requests at each rate, %s arrivals, at most %d in flight, %s.",
		what, s.Requests, arr, s.MaxInFlight, lengths)
	if s.SLO != nil {
		line += " Goodput against " + s.SLO.Words() + "."
	}
	return line
}

// rateNotes are the lines under the table: how the figures are made,
// each rate's queue and the client's lateness, and the run's warnings,
// each said once (a queue that grew is a warning as well as a note).
func rateNotes(r *results.RateResult) []string {
	out := []string{capitalize(r.Method()) + "."}
	for _, n := range r.Notes() {
		if !slices.Contains(r.Warnings, n) {
			out = append(out, "• "+capitalize(strings.TrimSuffix(n, "."))+".") // some notes end their own sentence
		}
	}
	for _, w := range r.Warnings {
		out = append(out, "• "+w)
	}
	return out
}
