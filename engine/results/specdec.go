package results

import "fmt"

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

// Headline is what the measurement leads with: how the answers ended
// (Stops), which every number in it depends on.
func (r *SpecDecResult) Headline() string { return r.Stops() }

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
func (r *SpecDecResult) LevelNotes() []string {
	var out []string
	for _, l := range r.Levels {
		if l.Note != "" {
			out = append(out, fmt.Sprintf("concurrency %d: %s", l.Concurrency, l.Note))
		}
	}
	return out
}
