package results

import "fmt"

// PlanStages is the plan's name (--plan, the library's index, local.plan).
const PlanStages = "stages"

// FormatStages is a three-stage plan result (StagesResult).
const FormatStages = "kovara-desktop-stages"

// StagesDoc is the plan's document kind.
var StagesDoc = localOnlyKind(DocKind[StagesResult]{Format: FormatStages, What: "three-stage result",
	About: "Kovara Desktop's three-stage plan, after the cmp.wiki benchmark protocol with this project's own " +
		"prompts and texts: not cmpbench output, and not a Kovara benchmark record.",
	LocalOnly: "This is a three-stage plan result (" + FormatStages + "), kept on this machine: only kovara-benchmark-results files can be published. Its wiki block is the way to share it."})

// Simulated: the plan ran against the built-in simulator.
func (r *StagesResult) Simulated() bool { return r.Local.Simulated }

// The three-stage plan's document, kovara-desktop-stages (docs/plans.md).

// StagesResult is a three-stage plan result: the document of kind
// kovara-desktop-stages, format_version 1 (docs/plans.md). It marshals to
// JSON as it is.
type StagesResult struct {
	Format        string `json:"format"`
	FormatVersion int    `json:"format_version"`
	Plan          string `json:"plan"`
	PlanVersion   int    `json:"plan_version"`
	About         string `json:"about"`
	Complete      bool   `json:"complete"`
	// Quick results are smoke tests, not the plan's numbers.
	Quick       bool   `json:"quick"`
	CreatedAt   string `json:"created_at"`
	TestedOn    string `json:"tested_on"` // UTC date, YYYY-MM-DD
	Model       string `json:"model"`
	ServerModel string `json:"server_model,omitempty"`

	Settings StagesSettings `json:"settings"`
	Engine   Detection      `json:"engine"`
	Compat   PlanCompat     `json:"compat"`
	// TokenSource is the worst source any stage's counts came from:
	// usage, timings or chunks ("" when nothing was measured).
	TokenSource string `json:"token_source"`

	Decode  []DecodeStage `json:"decode"`
	Prefill *PrefillStage `json:"prefill"`
	Users   *UsersStage   `json:"users"`
	// SpecObserved is what the server's speculative-decoding counters
	// moved by during the single-user stage, when it has them.
	SpecObserved *SpecWindow `json:"spec_decode_observed,omitempty"`
	// GPUs are the cards, when a local or ssh GPU telemetry source read
	// them (cards.go); their power and energy per stage are in
	// local.telemetry, keyed by stage number (1 decode, 2 prefill,
	// 3 users).
	GPUs *StagesGPUs `json:"gpus,omitempty"`

	BenchNote string    `json:"bench_note"`
	Warnings  []string  `json:"warnings"`
	Local     PlanLocal `json:"local"`
}

// StagesSettings are the lengths and choices the plan ran with.
type StagesSettings struct {
	DecodeTokens        int     `json:"decode_tokens"`
	PrefillTargetTokens int     `json:"prefill_target_tokens"`
	ProbeTargetTokens   int     `json:"probe_target_tokens"`
	UsersTokens         int     `json:"users_tokens"`
	WarmupTokens        int     `json:"warmup_tokens"`
	Users               int     `json:"users"`
	Temperature         float64 `json:"temperature"`
	// Thinking: "off" (asked for, see compat.thinking_off for whether
	// the server took it) or "server default".
	Thinking      string  `json:"thinking"`
	NaturalStop   bool    `json:"natural_stop"`
	TimeoutS      float64 `json:"timeout_s"`
	SpecDecode    string  `json:"spec_decode,omitempty"`
	Note          string  `json:"note,omitempty"`
	Client        string  `json:"client"`
	ClientVersion string  `json:"client_version"`
}

// DecodeStage is one single-user decode request.
type DecodeStage struct {
	Prompt           string `json:"prompt"` // code, json or prose
	MaxTokens        int    `json:"max_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	TokenSource      string `json:"token_source"`
	Chunks           int    `json:"chunks"`
	// TTFTMs is the time to the first token, apart from the decode rate.
	TTFTMs *float64 `json:"ttft_ms"`
	// DecodeS is last token − first token, in seconds; DecodeTPS is
	// completion tokens / DecodeS.
	DecodeS   *float64 `json:"decode_s"`
	DecodeTPS *float64 `json:"decode_tps"`
	// Short: the answer stopped below 90 % of max_tokens, so it decoded
	// fewer tokens than the plan asks for. The number stays.
	Short bool `json:"short,omitempty"`
	// Reasoning: the answer began with reasoning text (counted as
	// decode tokens).
	Reasoning bool   `json:"reasoning,omitempty"`
	Error     string `json:"error,omitempty"`
}

// PrefillStage is the cold-prefill measurement and its calibration probe.
type PrefillStage struct {
	// The probe: a ~1,000-token text whose measured prompt tokens give
	// the tokenizer's tokens per character.
	ProbeChars        int      `json:"probe_chars"`
	ProbePromptTokens *int     `json:"probe_prompt_tokens"`
	TokensPerChar     *float64 `json:"tokens_per_char"`
	// Calibrated: tokens per character came from the probe; false means
	// 4 characters per token was assumed (see Warnings).
	Calibrated   bool `json:"calibrated"`
	TargetTokens int  `json:"target_tokens"`
	PromptChars  int  `json:"prompt_chars"`
	// PromptTokens is what the server counted (usage, else llama.cpp's
	// prompt_n); nil when it reports neither.
	PromptTokens *int     `json:"prompt_tokens"`
	TokenSource  string   `json:"token_source"`
	TTFTMs       *float64 `json:"ttft_ms"`
	// PrefillTPS is prompt tokens / TTFT.
	PrefillTPS *float64 `json:"prefill_tps"`
	Error      string   `json:"error,omitempty"`
}

// UsersStage is the many-user stage.
type UsersStage struct {
	Users            int    `json:"users"`
	MaxTokens        int    `json:"max_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	TokenSource      string `json:"token_source"`
	// WindowS is the last token of any request − the first token of
	// any; AggregateTPS is all completion tokens / WindowS.
	WindowS      *float64 `json:"window_s"`
	AggregateTPS *float64 `json:"aggregate_tps"`
	// Per-user decode rates (each tokens / (last − first)).
	PerUserMeanTPS *float64 `json:"per_user_mean_tps"`
	PerUserMinTPS  *float64 `json:"per_user_min_tps"`
	TTFTMsMax      *float64 `json:"ttft_ms_max"`
	// Queued: some request's first token came after another request's
	// last, so the server did not run all users at once.
	Queued    bool        `json:"queued"`
	QueueNote string      `json:"queue_note,omitempty"`
	Failed    int         `json:"failed"`
	PerUser   []UserStage `json:"per_user"`
	Error     string      `json:"error,omitempty"`
	// Samples is every request of the measured round (docs/results-format.md,
	// raw samples); nil in documents saved before samples were kept.
	Samples *LevelSamples `json:"samples,omitempty"`
}

// UserStage is one user's request in the many-user stage.
type UserStage struct {
	CompletionTokens int      `json:"completion_tokens"`
	TTFTMs           *float64 `json:"ttft_ms"`
	DecodeTPS        *float64 `json:"decode_tps"`
	// FirstS and LastS are the first and last token, in seconds after
	// the stage's release.
	FirstS *float64 `json:"first_s"`
	LastS  *float64 `json:"last_s"`
	Error  string   `json:"error,omitempty"`
}

// SpecWindow is what the speculative-decoding counters moved by in one
// window (vLLM's /metrics counters).
type SpecWindow struct {
	Drafts      int64 `json:"drafts"`
	DraftTokens int64 `json:"draft_tokens"`
	Accepted    int64 `json:"accepted_tokens"`
	// AcceptanceRate = accepted / draft tokens; MeanAcceptanceLength = 1
	// + accepted / drafts. Both nil without drafts.
	AcceptanceRate       *float64 `json:"acceptance_rate"`
	MeanAcceptanceLength *float64 `json:"mean_acceptance_length"`
	// PerPosition is the acceptance rate at each draft position, when
	// the server counts it.
	PerPosition []float64 `json:"per_position_rate,omitempty"`
}

// Failed lists the stages (or stage parts) that could not be measured.
func (r *StagesResult) Failed() []string {
	var out []string
	for _, d := range r.Decode {
		if d.Error != "" {
			out = append(out, "decode "+d.Prompt)
		}
	}
	if r.Prefill != nil && r.Prefill.Error != "" {
		out = append(out, "prefill")
	}
	if r.Users != nil && r.Users.Error != "" {
		out = append(out, "users")
	}
	return out
}

// Header is the fields the other plans' documents begin with
// (PlanHeader), which this document keeps in its own order beside its
// plan, quick and tested_on, and without publishable, as it was first
// written.
func (r *StagesResult) Header() PlanHeader {
	return PlanHeader{Format: r.Format, FormatVersion: r.FormatVersion, About: r.About, Complete: r.Complete, CreatedAt: r.CreatedAt, Model: r.Model}
}

// PrefillCutWords is the warning of a cold prefill the server's context
// cut short (ctxLen tokens, from the plan's asked tokens): its length as
// the server counted it where it did (PrefillWords), the figure the table
// shows.
func (r *StagesResult) PrefillCutWords(ctxLen, asked int) string {
	return fmt.Sprintf("the server's context holds %d tokens, so the cold prefill was %s instead of %d", ctxLen, r.PrefillWords(), asked)
}

// reworded says an older document's cut-prefill warning in today's
// words when it is read (DocKind.Decode): documents written before #47
// said the length aimed at ("about 1843 tokens") above a table of the
// server's count (1878).
func (r *StagesResult) reworded() {
	if r.Prefill == nil || r.Prefill.PromptTokens == nil {
		return
	}
	ctxLen, asked := r.Engine.ContextLength, r.Settings.PrefillTargetTokens
	old := fmt.Sprintf("the server's context holds %d tokens, so the cold prefill is about %d tokens instead of %d", ctxLen, r.Prefill.TargetTokens, asked)
	for i, w := range r.Warnings {
		if w == old {
			r.Warnings[i] = r.PrefillCutWords(ctxLen, asked)
		}
	}
}
