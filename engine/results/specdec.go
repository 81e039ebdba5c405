package results

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// PlanSpecDec is the plan's name (--plan, the library's index, local.plan).
const PlanSpecDec = "specdec"

// FormatSpecDec is a speculative-decoding measurement (SpecDecResult).
const FormatSpecDec = "kovara-desktop-specdec"

// SpecDecDoc is the plan's document kind.
var SpecDecDoc = localOnlyKind(DocKind[SpecDecResult]{Format: FormatSpecDec, What: "speculative-decoding result",
	About: "Kovara Desktop's speculative-decoding measurement: representative prompts with natural stops, " +
		"acceptance from the server's own counters. Not a Kovara benchmark record; never publishable.",
	LocalOnly: "This is a speculative-decoding measurement (" + FormatSpecDec + "): it stops naturally on representative prompts, so its numbers are not Kovara records and can never be published."})

// Simulated: the plan ran against the built-in simulator.
func (r *SpecDecResult) Simulated() bool { return r.Local.Simulated }

// The speculative-decoding mode's document, kovara-desktop-specdec
// (docs/plans.md).

// SpecDecResult is a speculative-decoding measurement: the document of
// kind kovara-desktop-specdec, format_version 1 (docs/plans.md).
//
// Natural stops and representative prompts make its numbers unlike Kovara
// records, so it is never publishable.
type SpecDecResult struct {
	PlanHeader
	ServerModel string `json:"server_model,omitempty"`

	Settings SpecDecSettings `json:"settings"`
	Engine   Detection       `json:"engine"`
	Compat   PlanCompat      `json:"compat"`
	// Counters names where acceptance came from ("vllm /metrics
	// counters"), or is "" when the server exposes none.
	Counters string         `json:"counters"`
	Levels   []SpecDecLevel `json:"levels"`
	Warnings []string       `json:"warnings"`
	Local    PlanLocal      `json:"local"`
}

// SpecDecSettings are the choices the mode ran with.
type SpecDecSettings struct {
	Levels        []int    `json:"levels"`
	MaxTokens     int      `json:"max_tokens"`
	Temperature   float64  `json:"temperature"`
	NaturalStop   bool     `json:"natural_stop"`
	Thinking      string   `json:"thinking"`
	PromptSet     string   `json:"prompt_set"`
	Prompts       []string `json:"prompts"` // the kinds, in order
	TimeoutS      float64  `json:"timeout_s"`
	SpecDecode    string   `json:"spec_decode,omitempty"`
	Client        string   `json:"client"`
	ClientVersion string   `json:"client_version"`
}

// SpecDecLevel is one concurrency level.
type SpecDecLevel struct {
	Concurrency int     `json:"concurrency"`
	Requests    int     `json:"requests"`
	OK          int     `json:"ok"`
	Errors      int     `json:"errors"`
	DurationS   float64 `json:"duration_s"`
	// OutputTPS is all completion tokens / the level's wall time.
	OutputTPS *float64 `json:"output_tps"`
	// MeanDecodeTPS is the mean of each request's tokens / (last − first).
	MeanDecodeTPS *float64 `json:"mean_decode_tps"`
	TTFTMsP50     *float64 `json:"ttft_ms_p50"`
	// OutputTokens is the spread of answer lengths: with natural stops
	// they differ, and the numbers above depend on them.
	OutputTokens *LengthSpread `json:"output_tokens"`
	TokenSource  string        `json:"token_source"`
	// Spec is what the counters moved by over the level; nil without
	// counters.
	Spec *SpecWindow `json:"spec"`
	// AcceptLengthGauge is SGLang's own acceptance-length gauge after the
	// level (a server-side average), when it has one.
	AcceptLengthGauge *float64 `json:"accept_length_gauge,omitempty"`
	// AcceptRateGauge is SGLang's acceptance-rate gauge after the level.
	AcceptRateGauge *float64 `json:"accept_rate_gauge,omitempty"`
	// PerRequest is acceptance as each answer reported it, where the
	// server does (llama.cpp's timings): immune to other traffic on the
	// server, and a distribution rather than one mean.
	PerRequest *RequestAcceptance `json:"per_request,omitempty"`
	Note       string             `json:"note,omitempty"`
	Failures   []string           `json:"failures,omitempty"` // up to three messages
	Partial    bool               `json:"partial,omitempty"`
	// Samples is every request of the level (docs/results-format.md, raw
	// samples); nil in documents saved before samples were kept.
	Samples *LevelSamples `json:"samples,omitempty"`
}

// LengthSpread summarises answer lengths in tokens.
type LengthSpread struct {
	Min  int     `json:"min"`
	P50  float64 `json:"p50"`
	Max  int     `json:"max"`
	Mean float64 `json:"mean"`
}

// Headline is what the measurement leads with: why it stopped before
// its last level, where it did (StoppedWords); how the answers ended
// (Stops), which every number in it depends on; and whether drafting is
// worth it, as far as the run can say (WorthWords).
func (r *SpecDecResult) Headline() string {
	var parts []string
	for _, s := range []string{r.StoppedWords(), r.Stops(), r.WorthWords()} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

// NotDrafting says a level's server drafted nothing: its counters moved
// and showed no drafts, and no answer carried draft counts of its own.
// The plan stops after a first level like it (engine.RunSpecDec): every
// further level would measure the same nothing.
func (l SpecDecLevel) NotDrafting() bool {
	return l.OK > 0 && l.Spec != nil && l.Spec.Drafts == 0 && l.PerRequest == nil
}

// notRun are the levels the plan was asked for that have no level in
// the result, in the order asked.
func (r *SpecDecResult) notRun() []int {
	var out []int
	for _, c := range r.Settings.Levels {
		if !slices.ContainsFunc(r.Levels, func(l SpecDecLevel) bool { return l.Concurrency == c }) {
			out = append(out, c)
		}
	}
	return out
}

// StoppedWords says why levels the plan was asked for were not run, or
// "" where every one was: the server drafted nothing at the first level
// (the plan stops there), or the run stopped before them.
func (r *SpecDecResult) StoppedWords() string {
	missing := r.notRun()
	if len(missing) == 0 {
		return ""
	}
	var levels []string
	for _, c := range missing {
		levels = append(levels, strconv.Itoa(c))
	}
	which := fmt.Sprintf("concurrency %s %s", JoinAnd(levels), Plural(len(missing), "was", "were"))
	if n := len(r.Levels); n > 0 && r.Levels[n-1].NotDrafting() {
		return fmt.Sprintf("Stopped after concurrency %d: the server drafted no tokens there (its counters and its answers say so), so speculative decoding is off and %s not run, as they would measure the same nothing (llama-server: start it with a draft model, -md DRAFT.gguf; vLLM: --speculative-config).",
			r.Levels[n-1].Concurrency, which)
	}
	if len(r.Levels) == 0 {
		return "Stopped before any level was measured."
	}
	return fmt.Sprintf("Stopped before every level was measured: %s not run.", which)
}

// acceptanceOf is a level's acceptance rate and mean acceptance length:
// from the server's counters, else from the answers' own counts; ok
// false without drafts to take them from.
func (l SpecDecLevel) acceptanceOf() (rate, length float64, ok bool) {
	if sp := l.Spec; sp != nil && sp.AcceptanceRate != nil && sp.MeanAcceptanceLength != nil {
		return *sp.AcceptanceRate, *sp.MeanAcceptanceLength, true
	}
	if pr := l.PerRequest; pr != nil && pr.AcceptanceRate != nil && pr.MeanAcceptanceLength != nil {
		return *pr.AcceptanceRate, *pr.MeanAcceptanceLength, true
	}
	return 0, 0, false
}

// WorthLength is the mean acceptance length under which drafting is
// said to be probably not worth it: each step of the model yields under
// 1.5 tokens, a gain the draft model's own time usually takes back.
const WorthLength = 1.5

// WorthWords says whether speculative decoding is worth it, as far as
// the run can say, at the lowest level with an acceptance: how much of
// the draft was accepted and the tokens each step of the model yields (the
// mean acceptance length, the most drafting can speed decoding by), and
// what would tell the real speed-up — the same server without a draft
// model, which this plan does not run. Where the server drafted nothing
// or reported no acceptance, it says that instead. "" without a level
// that succeeded, or where StoppedWords said drafting is off.
func (r *SpecDecResult) WorthWords() string {
	const compare = "compare this run's decode tok/s with the same server run without a draft model"
	drafted, any := false, false
	for _, l := range r.Levels {
		if l.OK == 0 {
			continue
		}
		any = true
		rate, length, ok := l.acceptanceOf()
		if ok {
			head := fmt.Sprintf("Is it worth it? At concurrency %d, %s of the draft tokens were accepted and each step of the model gave %s tokens on average (the mean acceptance length), so drafting can speed decoding %s× at most, less the draft model's own time",
				l.Concurrency, Percent(&rate), strconv.FormatFloat(length, 'f', 2, 64), strconv.FormatFloat(length, 'f', 2, 64))
			if length < WorthLength {
				return head + ": probably not worth it here; to be sure, " + compare + "."
			}
			return head + ": worth trying; to know the real speed-up, " + compare + "."
		}
		if l.Spec != nil || l.PerRequest != nil {
			drafted = true // counted, with no drafts
		}
	}
	switch {
	case !any:
		return ""
	case drafted:
		if n := len(r.Levels); n > 0 && r.Levels[n-1].NotDrafting() && len(r.notRun()) > 0 {
			return "" // StoppedWords said it
		}
		return "Is it worth it? Not as the server runs now: it drafted no tokens, so speculative decoding is off."
	}
	return "Is it worth it? This run cannot say: the server reported no acceptance (no speculative-decoding counters, and no draft counts in its answers), so " + compare + "."
}

// RequestAcceptance is a level's acceptance from the answers' own counts
// (llama.cpp's timings.draft_n and draft_n_accepted). After its first
// token an answer of n tokens took n − 1 − accepted target steps, each
// yielding one token plus the draft tokens it accepted.
type RequestAcceptance struct {
	Source      string `json:"source"` // "timings.draft_n"
	Requests    int    `json:"requests"`
	DraftTokens int64  `json:"draft_tokens"`
	Accepted    int64  `json:"accepted_tokens"`
	Drafts      int64  `json:"drafts"` // target steps that checked a draft
	// AcceptanceRate and MeanAcceptanceLength pool the level's answers:
	// accepted / draft tokens, and 1 + accepted / drafts.
	AcceptanceRate       *float64 `json:"acceptance_rate"`
	MeanAcceptanceLength *float64 `json:"mean_acceptance_length"`
	// RateSpread and LengthSpread are the same per answer.
	RateSpread   *Spread `json:"rate_spread,omitempty"`
	LengthSpread *Spread `json:"length_spread,omitempty"`
}

// Spread is a distribution in five numbers (type-7 percentiles).
type Spread struct {
	Min float64 `json:"min"`
	P10 float64 `json:"p10"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	Max float64 `json:"max"`
}

// Stops says how the answers ended, from each level's answer lengths:
// every one at the max_tokens limit (the model never stopped on its own,
// so natural stops were asked for but none happened), every one before
// it, or some of each. "" when no level has answers to tell.
func (r *SpecDecResult) Stops() string {
	limit := r.Settings.MaxTokens
	lo, hi, n := 0, 0, 0
	for _, l := range r.Levels {
		t := l.OutputTokens
		if t == nil {
			continue
		}
		if n == 0 || t.Min < lo {
			lo = t.Min
		}
		hi = max(hi, t.Max)
		n++
	}
	switch {
	case n == 0 || limit <= 0:
		return ""
	case lo >= limit:
		return fmt.Sprintf("Every answer hit the %d-token limit: the model never stopped on its own.", limit)
	case hi < limit:
		return fmt.Sprintf("Every answer stopped on its own, before the %d-token limit (%d to %d tokens).", limit, lo, hi)
	}
	return fmt.Sprintf("Answers of %d to %d tokens: some stopped on their own, some hit the %d-token limit.", lo, hi, limit)
}

// LevelNotes are the levels' own notes ("no drafts during the level…"),
// each with its concurrency, for the app and the CLI alike.
//
// The last level's says, where the plan stopped after it because the
// server drafted nothing there, that the levels after it were not run.
func (r *SpecDecResult) LevelNotes() []string {
	var out []string
	missing := r.notRun()
	for i, l := range r.Levels {
		note := l.Note
		if i == len(r.Levels)-1 && l.NotDrafting() && len(missing) > 0 {
			if note == "" {
				note = "no drafts during the level"
			}
			var levels []string
			for _, c := range missing {
				levels = append(levels, strconv.Itoa(c))
			}
			note += fmt.Sprintf(", so the plan stopped after it: concurrency %s %s not run", JoinAnd(levels), Plural(len(missing), "was", "were"))
		}
		if note != "" {
			out = append(out, fmt.Sprintf("concurrency %d: %s", l.Concurrency, note))
		}
	}
	return out
}
