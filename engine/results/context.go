package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// PlanContext is the plan's name (--plan, the library's index, local.plan).
const PlanContext = "context"

// ContextDoc is the plan's document kind.
var ContextDoc = localOnlyKind(DocKind[ContextResult]{Format: FormatContext, What: "context result",
	About: "Kovara Desktop's context plan: prefill and decode speed against context depth, cold and with a cached " +
		"follow-up turn, on one server. Not a Kovara benchmark record; never publishable.",
	LocalOnly: "This is a context plan result (" + FormatContext + "): speed against context depth on one server, kept on this machine; only kovara-benchmark-results files can be published."})

// Simulated: the plan ran against the built-in simulator.
func (r *ContextResult) Simulated() bool { return r.Local.Simulated }

// The context plan's document, kovara-desktop-context (docs/plans.md, "The
// context plan"): prefill and decode speed against context depth, cold
// and with a cached follow-up turn, on one server. Local only, like the
// capacity plan's: its numbers answer one server's question and are not
// Kovara records.

// FormatContext is a context plan result (ContextResult).
const FormatContext = "kovara-desktop-context"

// ContextResult is a context plan result: the document of kind
// kovara-desktop-context, format_version 1.
type ContextResult struct {
	PlanHeader
	ServerModel string `json:"server_model,omitempty"`

	Settings ContextSettings `json:"settings"`
	Engine   Detection       `json:"engine"`
	Compat   PlanCompat      `json:"compat"`
	// Calibration is how the prompts' lengths were found; nil when the
	// server reports no prompt tokens (then each depth is sent as one
	// word a token, and its real length is unknown).
	Calibration *ContextCalibration `json:"calibration"`
	// PrefillMethod says how prefill was taken: PrefillAboveShortPrompt,
	// or "" in documents written before it, whose prefill is prompt
	// tokens over the whole TTFT.
	PrefillMethod string `json:"prefill_method,omitempty"`
	// PrefillBaseline is the short prompt's cold requests, the fixed cost
	// every depth's prefill is measured above (PrefillBaseline.Above); nil
	// in documents written before it, and when no short prompt came back
	// with its prompt counted (then no depth has a prefill).
	PrefillBaseline *PrefillBaseline `json:"prefill_baseline,omitempty"`
	// Depths are the depths measured, shallowest first.
	Depths []ContextDepth `json:"depths"`
	// Limit says why the plan went no deeper than its last depth when it
	// meant to (the context the server said only once the model was
	// loaded, or prompts it cut without an error); "" when it ran every
	// depth it set out to.
	Limit    string    `json:"limit,omitempty"`
	Warnings []string  `json:"warnings"`
	Local    PlanLocal `json:"local"`
}

// ContextSettings are the choices the plan ran with.
type ContextSettings struct {
	// Depths are the cold prompts' lengths it set out to measure, in
	// tokens; 0 is a short prompt (the generator's instruction alone).
	Depths []int `json:"depths"`
	// DepthsChosen: the depths were chosen from the server's context
	// (doubling from 1,024 to the deepest that fits), not given.
	DepthsChosen bool `json:"depths_chosen"`
	OutputTokens int  `json:"output_tokens"`
	// FollowUp is the new user turn of every follow-up, answered with
	// FollowUpTokens tokens.
	FollowUp       string `json:"follow_up"`
	FollowUpTokens int    `json:"follow_up_tokens"`
	Repeats        int    `json:"repeats"`
	Users          int    `json:"users"`
	// Warmup is the unmeasured requests sent before the first depth: one
	// a user, of the short prompt and a whole answer.
	Warmup      int     `json:"warmup"`
	Temperature float64 `json:"temperature"`
	// IgnoreEOS: ignore_eos went with every request (the server did not
	// refuse it).
	IgnoreEOS       bool    `json:"ignore_eos"`
	PromptGenerator string  `json:"prompt_generator"`
	Seed            int64   `json:"seed"`
	TimeoutS        float64 `json:"timeout_s"`
	Client          string  `json:"client"`
	ClientVersion   string  `json:"client_version"`
}

// ContextCalibration is how the prompts' word counts were found: the
// short prompt's tokens (the instruction and the chat template, every
// prompt's base), a calibration at the first depth above it, and from
// there each depth's words scaled by the tokens a word costs.
type ContextCalibration struct {
	BaseTokens    int                  `json:"base_tokens"`
	TargetTokens  int                  `json:"target_tokens"`
	Words         int                  `json:"words"`
	PromptTokens  int                  `json:"prompt_tokens"`
	TokensPerWord float64              `json:"tokens_per_word"`
	Converged     bool                 `json:"converged"`
	Attempts      []CalibrationAttempt `json:"attempts"`
}

// ContextDepth is one depth: every conversation measured there, and the
// figures they give, each a spread over the conversations (its P50 the
// point a chart draws).
type ContextDepth struct {
	Depth int `json:"depth"`
	Words int `json:"words"`
	// PromptTokens is the median of the cold prompts' tokens as the
	// server counted them, and Off how far that landed from Depth
	// (+0.012 is 1.2 % over); nil when the server did not count them or,
	// for Off, at depth 0.
	PromptTokens *int     `json:"prompt_tokens"`
	Off          *float64 `json:"off"`
	// Conversations counts those sent, OK those whose cold request and
	// follow-up both succeeded.
	Conversations int `json:"conversations"`
	OK            int `json:"ok"`
	// PrefillTPS is each cold request's prefill rate above the short
	// prompt's (PrefillBaseline.Above), nil at the short prompt itself;
	// DecodeTPS its answer tokens over the time from its first token to
	// its last; TTFTMs its time to first token.
	PrefillTPS *Spread `json:"prefill_tps"`
	DecodeTPS  *Spread `json:"decode_tps"`
	TTFTMs     *Spread `json:"ttft_ms"`
	// CachedTTFTMs is each follow-up's time to first token, and
	// CachedTokens the prompt tokens the server said it took from its
	// cache for it (nil when it did not say).
	CachedTTFTMs *Spread `json:"cached_ttft_ms"`
	CachedTokens *Spread `json:"cached_tokens"`
	// FollowUpTokens is the median of the follow-ups' prompt tokens.
	FollowUpTokens *int `json:"follow_up_prompt_tokens"`
	// ServerPrefillTPS and ServerDecodeTPS are the server's own rates for
	// the same cold requests (llama.cpp's timings.prompt_per_second and
	// predicted_per_second), nil where it does not report them.
	ServerPrefillTPS *Spread `json:"server_prefill_tps"`
	ServerDecodeTPS  *Spread `json:"server_decode_tps"`
	// OutsideTimerMs is how much of each cold TTFT lies outside the
	// server's own prompt timer (TTFT − timings.prompt_ms): tokenizing,
	// what the server does with its prompt cache before it starts, the
	// request's and the first token's way. Nil without timings.
	OutsideTimerMs *Spread `json:"outside_timer_ms"`

	Runs []ContextConversation `json:"conversations_detail"`
	// Samples is every request, round by round (docs/results-format.md,
	// raw samples).
	Samples  []ContextSamples `json:"samples"`
	Failures []string         `json:"failures,omitempty"` // up to three messages
	Partial  bool             `json:"partial,omitempty"`
}

// ContextConversation is one user's conversation of one repeat: a cold
// request and its follow-up.
type ContextConversation struct {
	Repeat   int         `json:"repeat"`
	User     int         `json:"user"`
	Cold     ContextTurn `json:"cold"`
	FollowUp ContextTurn `json:"follow_up"`
}

// ContextTurn is one request of a conversation.
type ContextTurn struct {
	PromptTokens     int  `json:"prompt_tokens,omitempty"`
	CachedTokens     *int `json:"cached_tokens"`
	CompletionTokens int  `json:"completion_tokens,omitempty"`
	// TokenSource is where CompletionTokens came from (usage, timings or
	// stream chunks).
	TokenSource string   `json:"token_source,omitempty"`
	TTFTMs      *float64 `json:"ttft_ms"`
	// PrefillTPS is a cold turn's prefill rate (ContextDepth.PrefillTPS).
	PrefillTPS *float64 `json:"prefill_tps,omitempty"`
	DecodeTPS  *float64 `json:"decode_tps,omitempty"`
	// Server is what llama.cpp said of the answer in its timings.
	Server *ServerTimings `json:"server,omitempty"`
	Error  string         `json:"error,omitempty"`
}

// ServerTimings is llama.cpp's own account of one answer (its timings
// object): the prompt tokens it evaluated (the cached ones left out) and
// the time it took over them, the tokens it generated and the time from
// the first to the last, and its rates.
type ServerTimings struct {
	PromptN      int     `json:"prompt_n"`
	CacheN       int     `json:"cache_n"`
	PromptMs     float64 `json:"prompt_ms"`
	PromptTPS    float64 `json:"prompt_per_second"`
	PredictedN   int     `json:"predicted_n"`
	PredictedMs  float64 `json:"predicted_ms"`
	PredictedTPS float64 `json:"predicted_per_second"`
}

// PrefillAboveShortPrompt is the prefill method of PrefillBaseline.Above.
const PrefillAboveShortPrompt = "above_short_prompt"

// PrefillAboveShort says whether r's prefill was taken above the short
// prompt: it says so, or (files of the first days of the baseline, before
// prefill_method) it kept the baseline.
func (r *ContextResult) PrefillAboveShort() bool {
	return r.PrefillMethod == PrefillAboveShortPrompt || r.PrefillBaseline != nil
}

// PrefillBaseline is what a request costs before it reads a prompt, seen
// at the short prompt: the median of its cold requests' tokens read (the
// prompt less what the server took from its cache) and of their TTFT.
// Every request pays it (the request's way, parsing, the chat template,
// the first token's way back), and a server's own prompt timer leaves it
// out; a prefill rate taken over the whole TTFT counts it against the
// prompt, and against a 1k prompt on a fast server that is several per
// cent (docs/plans.md, "The context plan").
type PrefillBaseline struct {
	ReadTokens float64 `json:"read_tokens"`
	TTFTMs     float64 `json:"ttft_ms"`
}

// ReadTokens is how many of a turn's prompt tokens the server read: its
// prompt less those it said came from its cache; 0 when it did not count
// its prompt.
func (t *ContextTurn) ReadTokens() int {
	n := t.PromptTokens
	if t.CachedTokens != nil {
		n -= *t.CachedTokens
	}
	return max(n, 0)
}

// Above is a cold turn's prefill rate above the baseline: the tokens it
// read beyond the short prompt's over the time its first token took
// beyond the short prompt's, rounded to 0.1 tok/s; nil for a failed turn,
// one without a prompt count, or one no slower or no longer than the
// short prompt (nothing is left to measure).
func (b *PrefillBaseline) Above(t ContextTurn) *float64 {
	if b == nil || t.Error != "" || t.TTFTMs == nil || t.PromptTokens == 0 {
		return nil
	}
	tokens, ms := float64(t.ReadTokens())-b.ReadTokens, *t.TTFTMs-b.TTFTMs
	if tokens <= 0 || ms <= 0 {
		return nil
	}
	v := math.Round(tokens/(ms/1000)*10) / 10
	return &v
}

// ContextSamples are one round's requests: the cold requests of a repeat,
// then their follow-ups.
type ContextSamples struct {
	Repeat   int           `json:"repeat"`
	Cold     *LevelSamples `json:"cold"`
	FollowUp *LevelSamples `json:"follow_up"`
}

// DepthName says a depth: "short prompt" for 0, else "8k" for a
// multiple of 1,024 and the number otherwise.
func DepthName(d int) string {
	switch {
	case d == 0:
		return "short prompt"
	case d%1024 == 0:
		return strconv.Itoa(d/1024) + "k"
	}
	return strconv.Itoa(d)
}

// AtDepth says where a figure was taken: "at the short prompt", "at 8k".
func AtDepth(d int) string {
	if d == 0 {
		return "at the short prompt"
	}
	return "at " + DepthName(d)
}

// ContextColumns are the context table's headings.
var ContextColumns = []string{"Depth", "Prompt tokens\ngot", "Cold TTFT\nms", "Prefill\ntok/s", "Decode\ntok/s",
	"Cached TTFT\nms", "Cached\ntokens", "Server prefill\ntok/s", "Server decode\ntok/s", "OK"}

// Table is the context table: a row per depth, each figure the median of
// its conversations with, when there were several, how far the others
// spread around it.
func (r *ContextResult) Table() Table {
	t := Table{Columns: ContextColumns}
	for _, d := range r.Depths {
		got := Missing
		if d.PromptTokens != nil {
			got = strconv.Itoa(*d.PromptTokens)
			if d.Off != nil {
				got += " (" + signedPercent(*d.Off) + ")"
			}
		}
		name := DepthName(d.Depth)
		if d.Partial {
			name += " (partial)"
		}
		t.Rows = append(t.Rows, []string{name, got, spreadCell(d.TTFTMs, 1), spreadCell(d.PrefillTPS, 0), spreadCell(d.DecodeTPS, 1),
			spreadCell(d.CachedTTFTMs, 1), spreadCell(d.CachedTokens, 0), spreadCell(d.ServerPrefillTPS, 0), spreadCell(d.ServerDecodeTPS, 1),
			fmt.Sprintf("%d / %d", d.OK, d.Conversations)})
	}
	return t
}

// spreadCell is a spread's median with prec decimals and, when its values
// differ, the larger distance to its ends as a share of it: "196.3
// ±1.2 %".
func spreadCell(s *Spread, prec int) string {
	if s == nil {
		return Missing
	}
	out := strconv.FormatFloat(s.P50, 'f', prec, 64)
	if s.P50 > 0 && s.Max > s.Min {
		w := math.Max(s.Max-s.P50, s.P50-s.Min) / s.P50 * 100
		out += " ±" + strconv.FormatFloat(w, 'f', 1, 64) + " %"
	}
	return out
}

func signedPercent(v float64) string {
	p := v * 100
	if math.Abs(p) < 0.05 {
		return "0.0 %"
	}
	s := strconv.FormatFloat(p, 'f', 1, 64) + " %"
	if p > 0 {
		s = "+" + s
	}
	return s
}

// ContextPoint is one depth on a chart: X the prompt tokens the server
// counted (the depth asked for when it did not count them), so the short
// prompt sits at its few tokens on a log axis; Y the median, Lo and Hi
// the spread's ends.
type ContextPoint struct {
	Depth     int
	X         float64
	Y, Lo, Hi float64
}

// ContextSeries names the figures a context result charts against depth.
type ContextSeries int

// The series of the two charts: prefill and decode tok/s (cold), and TTFT
// cold and cached.
const (
	SeriesPrefill ContextSeries = iota
	SeriesDecode
	SeriesColdTTFT
	SeriesCachedTTFT
)

// String names a series as a chart's legend does.
func (s ContextSeries) String() string {
	switch s {
	case SeriesPrefill:
		return "prefill tok/s (cold)"
	case SeriesDecode:
		return "decode tok/s"
	case SeriesColdTTFT:
		return "TTFT, cold"
	case SeriesCachedTTFT:
		return "TTFT, cached follow-up"
	}
	return ""
}

// Points are a series' points, shallowest first; a depth without the
// figure is left out.
func (r *ContextResult) Points(s ContextSeries) []ContextPoint {
	var out []ContextPoint
	for i := range r.Depths {
		d := &r.Depths[i]
		var sp *Spread
		switch s {
		case SeriesPrefill:
			sp = d.PrefillTPS
		case SeriesDecode:
			sp = d.DecodeTPS
		case SeriesColdTTFT:
			sp = d.TTFTMs
		case SeriesCachedTTFT:
			sp = d.CachedTTFTMs
		}
		if sp == nil {
			continue
		}
		x := float64(d.Depth)
		if d.PromptTokens != nil {
			x = float64(*d.PromptTokens)
		}
		out = append(out, ContextPoint{Depth: d.Depth, X: math.Max(x, 1), Y: sp.P50, Lo: sp.Min, Hi: sp.Max})
	}
	return out
}

// measured are the depths with a cold figure, shallowest first.
func (r *ContextResult) measured() []*ContextDepth {
	var out []*ContextDepth
	for i := range r.Depths {
		if d := &r.Depths[i]; d.DecodeTPS != nil || d.PrefillTPS != nil || d.TTFTMs != nil {
			out = append(out, d)
		}
	}
	return out
}

// trend says how a rate went from one depth to another: "fell from 250.1
// to 196.3 tok/s (−22 %)", or, when the two depths' spreads overlap, that
// it held (no change is called one within the spread of its repeats).
func trend(a, b *Spread, prec int) string {
	av, bv := strconv.FormatFloat(a.P50, 'f', prec, 64), strconv.FormatFloat(b.P50, 'f', prec, 64)
	if a.Max >= b.Min && b.Max >= a.Min {
		return "held at about " + av + " tok/s (" + bv + " at the deepest, within the spread of the repeats)"
	}
	pct := (b.P50/a.P50 - 1) * 100
	verb := "fell"
	if pct > 0 {
		verb = "rose"
	}
	return fmt.Sprintf("%s from %s to %s tok/s (%s%.0f %%)", verb, av, bv, sign(pct), math.Abs(pct))
}

func sign(v float64) string {
	if v < 0 {
		return "−"
	}
	return "+"
}

// Headline is the result in words, the first thing the app and the CLI
// say: how decode and prefill speed went from the shallowest depth to the
// deepest, and what the cached follow-up saved at the deepest.
func (r *ContextResult) Headline() string {
	var b strings.Builder
	if !r.Complete {
		b.WriteString("Stopped before every depth was measured; so far: ")
	}
	ds := r.measured()
	if len(ds) == 0 {
		b.WriteString("No depth was measured.")
		return b.String()
	}
	first, last := ds[0], ds[len(ds)-1]
	depthWords := depthNamer()
	var parts []string
	if len(ds) > 1 {
		span := fmt.Sprintf("From %s to %s of context", depthWords(first), depthWords(last))
		var moves []string
		if first.DecodeTPS != nil && last.DecodeTPS != nil {
			moves = append(moves, "decode "+trend(first.DecodeTPS, last.DecodeTPS, 1))
		}
		// The shallowest depth with a prefill: the short prompt has none
		// (it is the baseline), and in files written before the baseline
		// its rate says more about the request's overhead than about
		// reading a prompt.
		pf := first
		if pf.Depth == 0 && len(ds) > 2 {
			pf = ds[1]
		}
		if pf != last && pf.PrefillTPS != nil && last.PrefillTPS != nil {
			from := ""
			if pf.Depth > 0 {
				from = ", from " + depthWords(pf) + " on,"
			}
			moves = append(moves, fmt.Sprintf("cold prefill%s %s", from, trend(pf.PrefillTPS, last.PrefillTPS, 0)))
		}
		if len(moves) > 0 {
			parts = append(parts, span+", "+strings.Join(moves, ", and ")+".")
		}
	} else if last.DecodeTPS != nil {
		parts = append(parts, fmt.Sprintf("At %s decode ran at %s tok/s.", depthWords(last), strconv.FormatFloat(last.DecodeTPS.P50, 'f', 1, 64)))
	}
	if c := cacheSentence(last, depthWords); c != "" {
		parts = append(parts, c)
	}
	if r.Limit != "" {
		parts = append(parts, "It went no deeper: "+r.Limit+".")
	}
	if n := len(r.Warnings); n > 0 {
		parts = append(parts, fmt.Sprintf("Read the %d %s below before trusting the figures.", n, Plural(n, "warning", "warnings")))
	}
	b.WriteString(strings.Join(parts, " "))
	return b.String()
}

// depthNamer says depths in one text: a depth the server counted at
// another length says both the first time it is named, the depth asked
// for and what was measured ("1024 tokens (1001 measured)", the chart's
// point), and the depth alone after that.
func depthNamer() func(*ContextDepth) string {
	named := map[int]bool{}
	return func(d *ContextDepth) string {
		if d.Depth == 0 {
			return "a short prompt"
		}
		s := strconv.Itoa(d.Depth) + " tokens"
		if p := d.PromptTokens; p != nil && *p != d.Depth && !named[d.Depth] {
			s += " (" + strconv.Itoa(*p) + " measured)"
		}
		named[d.Depth] = true
		return s
	}
}

// cacheSentence says what the cached follow-up saved at depth d, or ""
// without both TTFTs; depthWords names the depth.
func cacheSentence(d *ContextDepth, depthWords func(*ContextDepth) string) string {
	if d.TTFTMs == nil || d.CachedTTFTMs == nil || d.CachedTTFTMs.P50 <= 0 {
		return ""
	}
	cold, warm := d.TTFTMs.P50, d.CachedTTFTMs.P50
	head := fmt.Sprintf("At %s the first token took %s cold and %s as a cached follow-up", depthWords(d), Seconds(cold), Seconds(warm))
	said := ""
	if d.CachedTokens != nil {
		said = fmt.Sprintf("; the server said it took %s tokens from its cache", strconv.FormatFloat(d.CachedTokens.P50, 'f', 0, 64))
	}
	switch {
	case d.TTFTMs.Min > d.CachedTTFTMs.Max && cold >= 2*warm:
		return fmt.Sprintf("%s, %s faster%s.", head, ratio(cold/warm), said)
	case d.TTFTMs.Min > d.CachedTTFTMs.Max:
		return fmt.Sprintf("%s%s: the cache saved %.0f %% of the wait.", head, said, (1-warm/cold)*100)
	}
	if d.CachedTokens == nil || d.CachedTokens.Max == 0 {
		return head + ": the follow-up was no faster, and the server reported no cached tokens, so it kept no prompt cache for the conversation."
	}
	return head + said + ", yet the follow-up was no faster beyond the spread of the repeats."
}

// TimerNote says, at the deepest depth with the server's own timings, how
// much of the cold TTFT its prompt timer leaves out, how much more that is
// than at the short prompt (the plan's prefill leaves out the short
// prompt's share, not what grows with the prompt), and how the server's
// prefill rate reads against the plan's; "" without timings.
func (r *ContextResult) TimerNote() string {
	var short *Spread // what the timer left out at the short prompt, the plan's baseline
	if len(r.Depths) > 0 && r.Depths[0].Depth == 0 && r.PrefillAboveShort() {
		short = r.Depths[0].OutsideTimerMs
	}
	for i := len(r.Depths) - 1; i >= 0; i-- {
		d := &r.Depths[i]
		if d.Depth == 0 || d.OutsideTimerMs == nil || d.TTFTMs == nil || d.PrefillTPS == nil || d.ServerPrefillTPS == nil {
			continue
		}
		left := fmt.Sprintf("%s the server's own prompt timer leaves out %s of the %s cold TTFT", AtDepth(d.Depth), Seconds(d.OutsideTimerMs.P50), Seconds(d.TTFTMs.P50))
		if short != nil {
			left += ", " + Seconds(d.OutsideTimerMs.P50-short.P50) + " more than at the short prompt,"
		}
		return fmt.Sprintf("%s (parsing and tokenizing the prompt, and what it does with its prompt cache before it starts: llama-server stores the previous conversation in its RAM cache unless started with --cache-ram 0); its prefill rate reads %s against the plan's",
			left, signedPercent(d.ServerPrefillTPS.P50/d.PrefillTPS.P50-1))
	}
	return ""
}

// disagreeContext is how far apart a depth's fastest and slowest decode
// may be before the repeats are taken to have run under different
// conditions: the capacity plan's bar (disagreeFactor).
const disagreeContext = disagreeFactor

// Disagreement says when a depth's repeats disagree beyond run-to-run
// noise (decode speeds further apart than 1.5×), or "".
func (d *ContextDepth) Disagreement() string {
	s := d.DecodeTPS
	if s == nil || s.Min <= 0 || s.Max/s.Min <= disagreeContext {
		return ""
	}
	return fmt.Sprintf("the conversations %s disagree: decode from %s to %s tok/s, beyond run-to-run noise, so something else used the server or this machine during them; run the plan again on a quiet machine",
		AtDepth(d.Depth), strconv.FormatFloat(s.Min, 'f', 1, 64), strconv.FormatFloat(s.Max, 'f', 1, 64))
}

// Problems are what went wrong, in words: failed requests per depth,
// and another client's load on the server during a depth.
func (r *ContextResult) Problems() []string {
	var out []string
	for _, d := range r.Depths {
		if n := d.Conversations - d.OK; n > 0 && len(d.Failures) > 0 {
			out = append(out, fmt.Sprintf("%s, %d of %d conversations failed (first: %s)", AtDepth(d.Depth), n, d.Conversations, d.Failures[0]))
		}
	}
	return append(out, ForeignLoadProblems(r.Local.ServerMetrics)...)
}

// Method says how the table's figures are made, under it in the app and
// the CLI alike.
func (r *ContextResult) Method() string {
	s := "prefill tok/s = (cold prompt tokens read − the short prompt's) / (TTFT − the short prompt's median TTFT), the fixed cost of any request left out as a server's own prompt timer leaves it; "
	if !r.PrefillAboveShort() {
		s = "prefill tok/s = cold prompt tokens (less any the server took from its cache) / TTFT; "
	}
	s += "decode tok/s = answer tokens / (last token − first token); " +
		"cached: the same conversation with its answer and one new turn, sent right after; each figure the median of " +
		strconv.Itoa(r.Settings.Repeats*r.Settings.Users) + " " + Plural(r.Settings.Repeats*r.Settings.Users, "conversation", "conversations") +
		" a depth, ± the furthest from it"
	if r.Compat.Timings {
		s += "; server prefill and decode are llama.cpp's own timings for the same cold requests"
	}
	return s
}

// PromptsLine says how the prompts were sized, in plain words: "prompts
// (…): calibrated at 1024 tokens (converged): each word of the prompt
// text cost the model's tokenizer 1.31 tokens, and the instruction and
// chat template around the words 23 tokens; …", or that their length is
// unknown.
func (r *ContextResult) PromptsLine() string {
	c := r.Calibration
	if c == nil {
		if r.Compat.Usage {
			return "prompts: only the short prompt, so no calibration"
		}
		return "prompts: one word a token, uncalibrated: the server reports no prompt tokens, so how deep they really were is unknown"
	}
	conv := "converged"
	if !c.Converged {
		conv = "did not converge"
	}
	return fmt.Sprintf("prompts (%s, seed %d): calibrated at %d tokens (%s): each word of the prompt text cost the model's tokenizer %s tokens, and the instruction and chat template around the words %d tokens; the table says how far off each depth landed",
		r.Settings.PromptGenerator, r.Settings.Seed, c.TargetTokens, conv, strconv.FormatFloat(c.TokensPerWord, 'f', 2, 64), c.BaseTokens)
}
