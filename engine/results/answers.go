package results

import (
	"fmt"
	"strconv"
	"strings"
)

// PlanAnswers is the plan's name (--plan, the library's index, local.plan).
const PlanAnswers = "answers"

// AnswersDoc is the plan's document kind.
var AnswersDoc = localOnlyKind(DocKind[AnswersResult]{Format: FormatAnswers, What: "answers comparison",
	About: "Kovara Desktop's answers comparison: one setting's next-token distributions read along a baseline's " +
		"greedy answers to fixed prompts, against the baseline read against itself. Not a Kovara benchmark record; never publishable.",
	LocalOnly: "This is an answers comparison (" + FormatAnswers + "): two of your servers' answer distributions token by token, with the reference answers' tokens kept on this machine; only kovara-benchmark-results files can be published. Its report holds the figures without a word of the answers."})

// Simulated: the plan ran against the built-in simulator.
func (r *AnswersResult) Simulated() bool { return r.Local.Simulated }

// The answers plan's document, kovara-desktop-answers (docs/plans.md,
// "Compare answers"; docs/method.md §14): one setting's answer
// distribution against a baseline's, token by token of the baseline's
// answers to a fixed prompt set, and the baseline against itself (its
// floor). Local only: the figures describe two of one person's servers;
// the reference answers' tokens and each position's values stay in
// local, and no word of a prompt or an answer is kept at all.

// FormatAnswers is an answers plan result (AnswersResult).
const FormatAnswers = "kovara-desktop-answers"

// AnswersResult is an answers plan result: the document of kind
// kovara-desktop-answers, format_version 1. Model is the baseline's.
type AnswersResult struct {
	PlanHeader
	Settings AnswersSettings `json:"settings"`
	// Baseline and Other are the two settings as their servers named
	// them.
	Baseline AnswersSetting `json:"baseline"`
	Other    AnswersSetting `json:"other"`
	// Figures are the other setting against the baseline, Floor the
	// baseline read against its own answers; both nil when nothing was
	// compared (Failure says why).
	Figures *AnswersFigures `json:"figures"`
	Floor   *AnswersFigures `json:"floor"`
	// SameTopBeyond and KLBeyond say which figures drift beyond the floor;
	// Ruler where the KL divergence stands beside the published marks
	// (only when beyond).
	SameTopBeyond bool   `json:"same_top_beyond"`
	KLBeyond      bool   `json:"kl_beyond"`
	Ruler         string `json:"ruler,omitempty"`
	// TopK is the shortest top list a server gave (Settings.TopK asked).
	TopK int `json:"top_k"`
	// Kinds are the other setting's figures prompt kind by prompt kind.
	Kinds []AnswersKind `json:"kinds"`
	// Failure says why the answers could not be compared (a server
	// without token probabilities, two tokenisers, a server that restarts
	// an answer): one sentence; "" when they were.
	Failure string       `json:"failure,omitempty"`
	Notes   []string     `json:"notes"`
	Local   AnswersLocal `json:"local"`
}

// AnswersSettings are the choices the plan ran with.
type AnswersSettings struct {
	// PromptSet names the fixed prompts (kovara-answers-v2): figures of
	// two sets are not comparable.
	PromptSet     string  `json:"prompt_set"`
	Prompts       int     `json:"prompts"`
	Positions     int     `json:"positions"`
	TopK          int     `json:"top_k"`
	TimeoutS      float64 `json:"timeout_s"`
	Client        string  `json:"client"`
	ClientVersion string  `json:"client_version"`
}

// AnswersSetting is one side: the model as its server named it, and the
// server's family and build where the check found them.
type AnswersSetting struct {
	Model  string `json:"model"`
	Family string `json:"family,omitempty"`
	Build  string `json:"build,omitempty"`
}

// AnswersFigures are one setting's distributions against the baseline's
// over the positions read (drift.Figures, as the document keeps them).
type AnswersFigures struct {
	Positions int `json:"positions"`
	// SameTop is the share of positions whose most likely token is the
	// baseline's; KLMean and KLP99 the KL divergence's mean and 99th
	// percentile in nats a token, lower bounds from the top lists;
	// RefProb the baseline token's mean probability under the setting;
	// Unlisted the positions whose list did not hold it.
	SameTop  float64 `json:"same_top"`
	KLMean   float64 `json:"kl_mean"`
	KLP99    float64 `json:"kl_p99"`
	RefProb  float64 `json:"ref_prob"`
	Unlisted int     `json:"unlisted"`
}

// AnswersKind is one prompt kind's figures ("code", "json", …).
type AnswersKind struct {
	Kind string `json:"kind"`
	AnswersFigures
	// PartsAt is the token of the baseline's answer where the other
	// setting's greedy answer would part from it (its most likely token
	// another, after the same answer so far), 0 where it never did in
	// the positions read.
	PartsAt int `json:"parts_at,omitempty"`
}

// AnswersLocal names the two endpoints and keeps the raw values; like a
// results file's local section it never leaves the machine.
type AnswersLocal struct {
	PlanLocal
	// The other setting's endpoint, when not the baseline's.
	OtherEndpoint     string `json:"other_endpoint,omitempty"`
	OtherEndpointHost string `json:"other_endpoint_host,omitempty"`
	OtherEndpointName string `json:"other_endpoint_name,omitempty"`
	// Positions are each position's values, prompt by prompt.
	Positions []AnswersPosition `json:"positions,omitempty"`
	// Reference is each prompt's reference answer as the baseline's
	// token ids: what the positions were read along.
	Reference [][]int `json:"reference,omitempty"`
}

// AnswersPosition is one position read: the prompt's kind, the token's
// place in its answer (from 1), the other setting's KL divergence and
// whether its top token was the baseline's, and the floor's.
type AnswersPosition struct {
	Kind      string  `json:"kind"`
	At        int     `json:"at"`
	KL        float64 `json:"kl"`
	Same      bool    `json:"same"`
	FloorKL   float64 `json:"floor_kl"`
	FloorSame bool    `json:"floor_same"`
}

// Drift is the comparison as a settings comparison's words read it
// (TuneDrift.Words), nil when nothing was compared.
func (r *AnswersResult) Drift() *TuneDrift {
	if r.Figures == nil || r.Floor == nil {
		return nil
	}
	d := &TuneDrift{
		Prompts: r.Settings.PromptSet, Positions: r.Figures.Positions,
		SameTop: r.Figures.SameTop, FloorSameTop: r.Floor.SameTop,
		KLMean: r.Figures.KLMean, FloorKL: r.Floor.KLMean, KLP99: r.Figures.KLP99,
		SameTopBeyond: r.SameTopBeyond, KLBeyond: r.KLBeyond, Ruler: r.Ruler,
	}
	for _, k := range r.Kinds {
		d.Kinds = append(d.Kinds, TuneDriftKind{Kind: k.Kind, Positions: k.Positions, SameTop: k.SameTop, KLMean: k.KLMean})
	}
	return d
}

// Pair names the comparison: "tiny-q4 against tiny", with the servers'
// families where the two differ ("tiny.gguf on Ollama against tiny.gguf
// on llama.cpp").
func (r *AnswersResult) Pair() string {
	o, b := ModelName(r.Other.Model), ModelName(r.Baseline.Model)
	if r.Other.Family != r.Baseline.Family && r.Other.Family != "" && r.Baseline.Family != "" {
		o += " on " + FamilyName(r.Other.Family)
		b += " on " + FamilyName(r.Baseline.Family)
	}
	return o + " against " + b
}

// Headline is the comparison's first line: "tiny-q4 against tiny: same
// top token 93.1 % (floor 100.0 %), KL divergence 0.0610 nats a token
// (floor 0): beyond the floor on both; about what …".
func (r *AnswersResult) Headline() string {
	prefix := ""
	if !r.Complete {
		prefix = "Stopped before every position was read; so far: "
	}
	d := r.Drift()
	if d == nil {
		why := r.Failure
		if why == "" {
			why = "nothing was read"
		}
		return prefix + r.Pair() + ": the answers could not be compared — " + why + "."
	}
	return prefix + r.Pair() + ": " + d.Words() + "."
}

// AnswersColumns are the answers table's headings.
var AnswersColumns = []string{"Read", "Positions", "Same top\ntoken", "KL mean\nnats", "KL p99\nnats", "Baseline token\nprobability", "Unlisted"}

// Table is the answers table: the other setting over every position, the
// floor (the baseline against itself), then each prompt kind.
func (r *AnswersResult) Table() Table {
	t := Table{Columns: AnswersColumns}
	row := func(name string, f AnswersFigures) {
		same, ref := f.SameTop, f.RefProb
		t.Rows = append(t.Rows, []string{name, strconv.Itoa(f.Positions), Percent(&same), NatsText(f.KLMean), NatsText(f.KLP99), Percent(&ref), strconv.Itoa(f.Unlisted)})
	}
	if r.Figures != nil {
		row(ModelName(r.Other.Model)+" (every prompt)", *r.Figures)
	}
	if r.Floor != nil {
		row(ModelName(r.Baseline.Model)+" against itself (the floor)", *r.Floor)
	}
	for _, k := range r.Kinds {
		row(k.Kind+" prompt", k.AnswersFigures)
	}
	return t
}

// Problems: a comparison that could not be made, said in its sentence.
func (r *AnswersResult) Problems() []string {
	if r.Figures != nil {
		return nil
	}
	why := r.Failure
	if why == "" {
		why = "nothing was read"
	}
	return []string{"The answers could not be compared: " + why}
}

// PartsWords says where the other setting's greedy answers part from
// the baseline's, prompt kind by prompt kind: "Greedy answers at
// temperature 0 part from the baseline's in 2 of 6 prompts: code at
// token 12, json at token 3."; "" when nothing was compared.
func (r *AnswersResult) PartsWords() string {
	var parts []string
	for _, k := range r.Kinds {
		if k.PartsAt > 0 {
			parts = append(parts, fmt.Sprintf("%s at token %d", k.Kind, k.PartsAt))
		}
	}
	if len(r.Kinds) == 0 {
		return ""
	}
	if len(parts) == 0 {
		in := fmt.Sprintf("all %d prompts", len(r.Kinds))
		if len(r.Kinds) == 1 {
			in = "its one prompt"
		}
		return fmt.Sprintf("Greedy answers at temperature 0: the same as the baseline's in %s, as far as they were read (%d tokens).", in, r.Settings.Positions)
	}
	return fmt.Sprintf("Greedy answers at temperature 0 part from the baseline's in %d of %d prompts: %s.", len(parts), len(r.Kinds), strings.Join(parts, ", "))
}

// KindsWords says the prompt kinds' KL divergences, the furthest first
// (TuneDrift.KindsWords); "" when nothing was compared.
func (r *AnswersResult) KindsWords() string {
	if d := r.Drift(); d != nil {
		return d.KindsWords()
	}
	return ""
}

// SettingsWords says the plan's settings, for the report's Conditions and the
// CLI: "6 prompts (kovara-answers-v2) × 32 positions, top 20 tokens asked
// (20 given)".
func (r *AnswersResult) SettingsWords() string {
	s := r.Settings
	w := fmt.Sprintf("%d %s (%s) × %d positions, top %d tokens asked", s.Prompts, Plural(s.Prompts, "prompt", "prompts"), s.PromptSet, s.Positions, s.TopK)
	if r.TopK > 0 && r.TopK < s.TopK {
		w += fmt.Sprintf(" (%d given)", r.TopK)
	}
	return strings.TrimSpace(w)
}
