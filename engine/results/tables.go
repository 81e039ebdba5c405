package results

import (
	"fmt"
	"strconv"
	"strings"
)

// Table is what a result shows as a table — headings and rows of text —
// defined once, so the app (a table widget) and the CLI (aligned columns)
// show the same figures with the same precision. A heading may hold a
// line break: the app shows it on two lines, the CLI on one (Flat).
type Table struct {
	Columns []string
	Rows    [][]string
}

// Flat is a heading on one line.
func Flat(heading string) string { return strings.ReplaceAll(heading, "\n", " ") }

// Missing is what a cell says when there is no figure.
const Missing = "—"

// Num is v with prec decimals, or Missing.
func Num(v *float64, prec int) string {
	if v == nil {
		return Missing
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

// Percent is a share (0 to 1) as a percentage with one decimal, or
// Missing.
func Percent(v *float64) string {
	if v == nil {
		return Missing
	}
	return strconv.FormatFloat(*v*100, 'f', 1, 64) + " %"
}

// StagesColumns are the three-stage table's headings.
var StagesColumns = []string{"Stage", "Tokens", "TTFT\nms", "tok/s", "Note"}

// Table is the three-stage table: a row per single-user answer, the cold
// prefill and the many-users stage, each with what it measured or the
// error it failed with.
func (r *StagesResult) Table() Table {
	t := Table{Columns: StagesColumns}
	for _, d := range r.Decode {
		label := "1 user, " + d.Prompt + " prompt"
		if d.Prompt == "code" {
			label += " (decode_single)"
		}
		if d.Error != "" {
			t.Rows = append(t.Rows, []string{label, Missing, Missing, Missing, "failed: " + d.Error})
			continue
		}
		note := ""
		if d.Short {
			note = fmt.Sprintf("short answer (under %d %% of %d)", int(ShortAnswerShare*100), d.MaxTokens)
		}
		t.Rows = append(t.Rows, []string{label, strconv.Itoa(d.CompletionTokens), Num(d.TTFTMs, 1), Num(d.DecodeTPS, 1), note})
	}
	if p := r.Prefill; p != nil {
		const label = "cold prefill (prefill_tps)"
		if p.Error != "" {
			t.Rows = append(t.Rows, []string{label, Missing, Missing, Missing, "failed: " + p.Error})
		} else {
			tokens := Missing
			if p.PromptTokens != nil {
				tokens = strconv.Itoa(*p.PromptTokens) + " prompt"
			}
			t.Rows = append(t.Rows, []string{label, tokens, Num(p.TTFTMs, 1), Num(p.PrefillTPS, 0), ""})
		}
	}
	if u := r.Users; u != nil {
		label := fmt.Sprintf("%d users at once (decode_agg)", u.Users)
		note := fmt.Sprintf("per user: mean %s, slowest %s tok/s; TTFT is the slowest user's", Num(u.PerUserMeanTPS, 1), Num(u.PerUserMinTPS, 1))
		switch {
		case u.Error != "":
			note = "failed: " + u.Error
		case u.Queued:
			note = fmt.Sprintf("QUEUED: fewer than %d ran at once (see the warning)", u.Users)
		}
		t.Rows = append(t.Rows, []string{label, strconv.Itoa(u.CompletionTokens), Num(u.TTFTMsMax, 1), Num(u.AggregateTPS, 1), note})
	}
	return t
}

// ShortAnswerShare is the share of its answer cap below which a
// single-user answer of the three-stage plan is flagged short (the
// protocol's rule): the engine flags it, the table says it.
const ShortAnswerShare = 0.9

// CardsTable is the GPU table under a three-stage result (nil when the
// run read no cards).
func (g *StagesGPUs) CardsTable() *Table {
	if g == nil || len(g.Cards) == 0 {
		return nil
	}
	return &Table{Columns: CardColumns, Rows: g.CardRows()}
}

// SpecDecColumns are the speculative-decoding table's headings. The mean
// acceptance length is in tokens a step: each step of the model yields
// its own token and the draft tokens it accepted (1 + accepted / drafts).
var SpecDecColumns = []string{"Concurrency", "OK", "Output\ntok/s", "Decode\ntok/s", "Answer tokens\nmin / p50 / max", "Acceptance", "Mean acceptance\nlength tok/step",
	"Per answer\np50 [min–max]", "Per answer mean\nlength tok/step"}

// Table is the speculative-decoding table: a row per level.
func (r *SpecDecResult) Table() Table {
	t := Table{Columns: SpecDecColumns}
	for _, l := range r.Levels {
		spread := Missing
		if s := l.OutputTokens; s != nil {
			spread = fmt.Sprintf("%d / %s / %d", s.Min, strconv.FormatFloat(s.P50, 'f', -1, 64), s.Max)
		}
		acc, length := Missing, Missing
		if sp := l.Spec; sp != nil {
			acc, length = Percent(sp.AcceptanceRate), Num(sp.MeanAcceptanceLength, 2)
		}
		perAcc, perLen := Missing, Missing
		if pr := l.PerRequest; pr != nil {
			if s := pr.RateSpread; s != nil {
				perAcc = fmt.Sprintf("%s [%s–%s]", Percent(&s.P50), Percent(&s.Min), Percent(&s.Max))
			}
			perLen = Num(pr.MeanAcceptanceLength, 2)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(l.Concurrency), fmt.Sprintf("%d / %d", l.OK, l.Requests),
			Num(l.OutputTPS, 1), Num(l.MeanDecodeTPS, 1), spread, acc, length, perAcc, perLen})
	}
	return t
}

// CapacityColumns are the capacity table's headings.
var CapacityColumns = []string{"Concurrency", "Step", "Requests", "Failed", "Per-user tok/s\np50", "Per-user tok/s\np5", "TTFT p95\nms", "Total\ntok/s", "Service level"}

// Table is the capacity table: every probe in the order measured, then
// the probe a stop interrupted marked partial, with the requests that
// ended of those it planned ("12 of 20").
func (r *CapacityResult) Table() Table {
	t := Table{Columns: CapacityColumns}
	add := func(p CapacityProbe, conc, requests string) {
		total := Num(&p.OutputTPS, 1)
		if p.Requests == 0 {
			total = Missing // stopped before any request ended: nothing measured
		}
		t.Rows = append(t.Rows, []string{conc, p.Step, requests, strconv.Itoa(p.Failed),
			Num(p.UserTPSP50, 1), Num(p.UserTPSP5, 1), Num(p.TTFTP95Ms, 1), total, p.Verdict()})
	}
	for _, p := range r.Probes {
		add(p, strconv.Itoa(p.Concurrency), strconv.Itoa(p.Requests))
	}
	if p := r.Partial; p != nil {
		requests := strconv.Itoa(p.Requests)
		if run := r.Local.PartialRun; run != nil {
			requests += " of " + strconv.Itoa(run.Requests)
		}
		add(*p, strconv.Itoa(p.Concurrency)+" (partial)", requests)
	}
	return t
}

// Headline is the three-stage result in words, for the app, the CLI and
// the reports: its state (never "Complete." above warnings), then what it
// found (Found).
func (r *StagesResult) Headline() string {
	var parts []string
	n := len(r.Warnings)
	switch {
	case r.Complete && n > 0:
		parts = append(parts, fmt.Sprintf("Finished, with %d %s below: read %s before trusting the figures.", n, Plural(n, "warning", "warnings"), Plural(n, "it", "them")))
	case r.Complete:
		parts = append(parts, "Complete.")
	default:
		parts = append(parts, "Stopped before every stage finished.")
	}
	if f := r.Found(); f != "" {
		parts = append(parts, f)
	}
	if r.Quick {
		parts = append(parts, "Quick mode: a smoke test, not the plan's numbers.")
	}
	if r.Local.Simulated {
		parts = append(parts, SimulatedNote)
	}
	if r.TokenSource != "" {
		parts = append(parts, "Tokens counted by: "+r.TokenSource+".")
	}
	return strings.Join(parts, " ")
}

// Found is what the three stages found, in one sentence, each figure
// beside the wiki field it fills: one user's decode on the code prompt
// (decode_single), the cold prefill at its prompt's length as the server
// counted it (prefill_tps), and the many users' tokens a second together
// (decode_agg). "" when no stage has a figure.
func (r *StagesResult) Found() string {
	var parts []string
	if d := r.decodeByKind("code"); d != nil && d.Error == "" && d.DecodeTPS != nil {
		parts = append(parts, fmt.Sprintf("one user decoded at %s tok/s (the code prompt: decode_single in the wiki block)", Num(d.DecodeTPS, 1)))
	}
	if p := r.Prefill; p != nil && p.Error == "" && p.PrefillTPS != nil {
		parts = append(parts, fmt.Sprintf("a cold prefill of %s ran at %s tok/s (prefill_tps)", r.PrefillWords(), Num(p.PrefillTPS, 0)))
	}
	if u := r.Users; u != nil && u.Error == "" && u.AggregateTPS != nil {
		s := fmt.Sprintf("%d users at once decoded %s tok/s in total (decode_agg)", u.Users, Num(u.AggregateTPS, 1))
		switch {
		case u.Queued:
			s += fmt.Sprintf(", but fewer than %d ran at once (the server queued some)", u.Users)
		case u.PerUserMeanTPS != nil:
			s += fmt.Sprintf(", %s each on average", Num(u.PerUserMeanTPS, 1))
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "; ") + "."
	return strings.ToUpper(s[:1]) + s[1:]
}

// PrefillWords is the cold prefill's length in words: the prompt tokens
// the server counted, where it counted them ("1878 prompt tokens (the
// server's count)"), else the length the plan aimed at ("about 1843
// tokens (the length aimed at: …)"). "" without a prefill stage.
func (r *StagesResult) PrefillWords() string {
	p := r.Prefill
	switch {
	case p == nil:
		return ""
	case p.PromptTokens != nil:
		return fmt.Sprintf("%d prompt tokens (the server's count)", *p.PromptTokens)
	}
	return fmt.Sprintf("about %d tokens (the length aimed at: the server did not count them)", p.TargetTokens)
}

// ResultColumns are a Kovara run's per-level headings, each on two lines
// (what, then its unit) so the table fits a window; EnergyColumns follow
// when the run had a GPU telemetry source. The wall plug's figures, the
// idle and the cost are the energy table's (EnergyTable), under it.
var (
	ResultColumns = []string{"Concurrency", "OK / err", "Output\ntok/s", "Req/s",
		"TTFT p50\nms", "TTFT p95\nms", "TTFT p99\nms", "ITL p50\nms", "ITL p95\nms", "ITL p99\nms", "Latency\np50 ms", "Latency\np99 ms"}
	EnergyColumns = []string{"Power\nW", "Peak\nW", "Tokens\nper J"}
)

// ResultTable is a Kovara run's table: a row per finished level, then the
// interrupted level marked partial; "err" counts errors and timeouts.
// Times in ms; Missing where the sample is too small for a percentile.
func ResultTable(f *File) Table {
	t := Table{Columns: ResultColumns}
	tel := f.Local.Telemetry
	if tel != nil {
		t.Columns = append(append([]string(nil), ResultColumns...), EnergyColumns...)
	}
	if f.Local.SLO != nil {
		t.Columns = append(append([]string(nil), t.Columns...), GoodputColumns...)
	}
	add := func(r Run, partial bool) {
		m := r.Metrics
		conc := strconv.Itoa(r.Concurrency)
		if partial {
			conc += " (partial)"
		}
		out, req := m.OutputThroughput, m.RequestThroughput
		row := []string{conc, fmt.Sprintf("%d / %d", m.RequestsOK, m.RequestsError+m.RequestsTimeout),
			Num(&out, 1), Num(&req, 2),
			At(m.TTFTMs, 50), At(m.TTFTMs, 95), At(m.TTFTMs, 99),
			itlCell(m.ITLMs, 50), itlCell(m.ITLMs, 95), itlCell(m.ITLMs, 99),
			At(m.LatencyMs, 50), At(m.LatencyMs, 99)}
		if tel != nil {
			lv := tel.Levels[r.Concurrency]
			row = append(row, Num(lv.MeanPowerW, 0), Num(lv.PeakPowerW, 0), Num(lv.TokensPerJoule, 2))
		}
		if f.Local.SLO != nil {
			row = append(row, goodputCells(f.GoodputAt(r.Concurrency, partial))...)
		}
		t.Rows = append(t.Rows, row)
	}
	for _, r := range f.Runs {
		add(r, false)
	}
	if f.Local.PartialRun != nil {
		add(*f.Local.PartialRun, true)
	}
	return t
}

// itlCell is an ITL percentile as At says it, Missing also where it is
// chunks read together (ITLAt; a note says why).
func itlCell(d *Dist, q int) string {
	if _, measured := ITLAt(d, q); !measured {
		return Missing
	}
	return At(d, q)
}

// At is a distribution's percentile q in ms with one decimal, or Missing
// when the sample is too small for it.
func At(d *Dist, q int) string {
	v, ok := d.At(q)
	if !ok {
		return Missing
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
