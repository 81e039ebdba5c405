package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/drift"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// The answers measurement (docs/method.md §14): the baseline's greedy
// answers to fixed prompts with their top lists, then the baseline again
// (its floor) and the other setting read at every position of those
// answers, through llama-server's token route: /completion with the
// prompt's text and the answer's token ids so far, one token at a time
// (the prompt cache makes each a one-token step). Other servers'
// routes (vLLM's prompt_logprobs, a continued assistant message) are not
// read yet, and say so.

// AnswerPrompt is one prompt of the answers set, with the kind of use it
// stands for.
type AnswerPrompt struct {
	Kind, Text string
}

// AnswerPromptsVersion names the fixed prompt set: figures of two sets
// are not comparable.
const AnswerPromptsVersion = "kovara-answers-v1"

// AnswerPrompts are the fixed prompts, one for each way people use a
// model that a setting may treat differently (docs/method.md §14).
var AnswerPrompts = []AnswerPrompt{
	{"code", "Write a Python function that returns the n-th Fibonacci number, with a docstring."},
	{"json", "Give a JSON object with the fields name, age and city for a made-up person, and nothing else."},
	{"prose", "Explain in three sentences why the sky is blue."},
	{"reasoning", "A train leaves at 9:40 and arrives at 13:05. How long is the journey? Think step by step."},
	{"french", "Traduis en français : the cat sleeps on the sofa while the rain falls."},
}

// AnswersPlan is what the measurement reads.
type AnswersPlan struct {
	// Positions is the tokens of each reference answer read (default
	// 32); TopK the top list asked at each (default 20).
	Positions, TopK int
	// Prompts is how many of AnswerPrompts are used, from the first (0:
	// all).
	Prompts int
	// Timeout bounds each request (0: 60 s).
	Timeout time.Duration
}

func (p AnswersPlan) withDefaults() AnswersPlan {
	if p.Positions <= 0 {
		p.Positions = 32
	}
	if p.TopK <= 0 {
		p.TopK = 20
	}
	if p.Prompts <= 0 || p.Prompts > len(AnswerPrompts) {
		p.Prompts = len(AnswerPrompts)
	}
	if p.Timeout <= 0 {
		p.Timeout = 60 * time.Second
	}
	return p
}

// Requests is how many requests the measurement sends: for each prompt
// the reference answer and, for the floor and the other setting, one a
// position.
func (p AnswersPlan) Requests() int {
	p = p.withDefaults()
	return p.Prompts * (1 + 2*p.Positions)
}

// ReferenceRequests and ReadRequests are a settings comparison's share of
// Requests: the first setting's reference and floor, and each other
// setting's reading.
func (p AnswersPlan) ReferenceRequests() int {
	p = p.withDefaults()
	return p.Prompts * (1 + p.Positions)
}

// ReadRequests: see ReferenceRequests.
func (p AnswersPlan) ReadRequests() int {
	p = p.withDefaults()
	return p.Prompts * p.Positions
}

// TuneAnswersLine says before a settings comparison what its answers
// check asks: "The answers check asks each setting 10 fixed prompts;
// where the servers are llama-server it also reads 5 prompts of its own
// token by token: 165 short requests for f32, 160 for each other
// setting."
func TuneAnswersLine(first string) string {
	return fmt.Sprintf("The answers check asks each setting %d fixed prompts; where the servers are llama-server it also reads %d prompts of its own token by token: %d short requests for %s, %d for each other setting.",
		len(SpecDecPrompts), len(AnswerPrompts), tuneDriftPlan.ReferenceRequests(), first, tuneDriftPlan.ReadRequests())
}

// AnswersSide is one setting: an endpoint and the model asked of it ("":
// the only one served).
type AnswersSide struct {
	Endpoint Endpoint
	Model    string
}

// AnswersResult is the measurement.
type AnswersResult struct {
	// Floor is the baseline read against its own answers; Other the
	// other setting.
	Floor, Other drift.Measured
	// SameTopBeyond and KLBeyond say which figures drift beyond the
	// floor (drift.Beyond).
	SameTopBeyond, KLBeyond bool
	// TopK is the shortest top list a server gave (asked: the plan's).
	TopK int
	// Models are the two models as their servers name them.
	BaseModel, OtherModel string
	Notes                 []string
	// Reference is each prompt's reference answer, token ids (kept
	// local; never a word of it leaves).
	Reference [][]int
	// Kinds are the other setting's figures prompt by prompt, in the
	// set's order.
	Kinds []AnswersKind
}

// AnswersKind is one prompt kind's figures.
type AnswersKind struct {
	Kind string
	drift.Figures
}

// Drift is the measurement as a settings comparison keeps it, the
// ruler's words with it where the setting is beyond the floor.
func (r *AnswersResult) Drift() *results.TuneDrift {
	d := &results.TuneDrift{
		Prompts: AnswerPromptsVersion, Positions: r.Other.Positions,
		SameTop: r.Other.SameTop, FloorSameTop: r.Floor.SameTop,
		KLMean: r.Other.KLMean, FloorKL: r.Floor.KLMean, KLP99: r.Other.KLP99,
		SameTopBeyond: r.SameTopBeyond, KLBeyond: r.KLBeyond,
	}
	if d.SameTopBeyond || d.KLBeyond {
		d.Ruler = drift.RulerWords(r.Other.KLMean)
	}
	for _, k := range r.Kinds {
		d.Kinds = append(d.Kinds, results.TuneDriftKind{Kind: k.Kind, Positions: k.Positions, SameTop: k.SameTop, KLMean: k.KLMean})
	}
	return d
}

// Line is the measurement's first line: "Same top token 99.2 % (floor
// 100.0 %), KL divergence 0.0041 nats a token (floor 0): beyond the
// floor on both; between what Q8_0 (0.0014) and Q6_K (0.0055) cost
// Llama 3 8B" (results.TuneDrift.Words).
func (r *AnswersResult) Line() string {
	w := r.Drift().Words()
	return strings.ToUpper(w[:1]) + w[1:]
}

// ErrAnswersUnsupported says a server has no route the measurement
// reads.
var ErrAnswersUnsupported = errors.New("the answers measurement reads llama-server's /completion token route")

// MeasureAnswers reads other against base (docs/method.md §14);
// progress, when set, is told each request done of the total.
func MeasureAnswers(ctx context.Context, base, other AnswersSide, plan AnswersPlan, progress func(done, total int)) (*AnswersResult, error) {
	plan = plan.withDefaults()
	done, total := 0, plan.Requests()
	step := func() {
		done++
		if progress != nil {
			progress(done, total)
		}
	}
	// Both servers are checked before anything is read: one that cannot
	// be read is said at once.
	b, err := answersReader(ctx, base, plan)
	if err != nil {
		return nil, fmt.Errorf("the baseline: %w", err)
	}
	o, err := answersReader(ctx, other, plan)
	if err != nil {
		return nil, fmt.Errorf("the other setting: %w", err)
	}
	ref, err := b.reference(ctx, step)
	if err != nil {
		return nil, err
	}
	return ref.read(ctx, o, step)
}

// AnswersReference is the baseline's side of the measurement: its
// answers, its lists and its floor. A settings comparison makes it in
// the baseline's turn and reads each other setting against it in that
// setting's own turn, one server up at a time.
type AnswersReference struct {
	plan  AnswersPlan
	model string
	// For each prompt: the template's text, its tokens by the baseline's
	// tokenizer, the reference answer's tokens, and the baseline's lists
	// at each position, generating and read again (the floor).
	texts  []string
	tokens [][]int
	refs   [][]int
	base   [][]drift.Position
	floor  [][]drift.Position
	topK   int
}

// ReferenceAnswers makes base's reference (AnswersReference); step,
// when set, is called after each request.
func ReferenceAnswers(ctx context.Context, base AnswersSide, plan AnswersPlan, step func()) (*AnswersReference, error) {
	plan = plan.withDefaults()
	b, err := answersReader(ctx, base, plan)
	if err != nil {
		return nil, fmt.Errorf("the baseline: %w", err)
	}
	return b.reference(ctx, step)
}

// reference is ReferenceAnswers on a checked server.
func (b *answerReader) reference(ctx context.Context, step func()) (*AnswersReference, error) {
	if step == nil {
		step = func() {}
	}
	ref := &AnswersReference{plan: b.plan, model: b.model, topK: b.plan.TopK}
	for _, p := range AnswerPrompts[:b.plan.Prompts] {
		text, err := b.template(ctx, p.Text)
		if err != nil {
			return nil, err
		}
		toks, err := b.tokenize(ctx, text)
		if err != nil {
			return nil, fmt.Errorf("the baseline: %w", err)
		}
		answer, lists, err := b.complete(ctx, []any{text}, b.plan.Positions)
		if err != nil {
			return nil, fmt.Errorf("the baseline's answer to the %s prompt: %w", p.Kind, err)
		}
		step()
		floor := make([]drift.Position, len(answer))
		for i := range answer {
			_, fl, err := b.complete(ctx, append([]any{text}, ids(answer[:i])...), 1)
			if err != nil {
				return nil, fmt.Errorf("the baseline read at token %d of its %s answer: %w", i+1, p.Kind, err)
			}
			step()
			floor[i] = fl[0]
		}
		ref.texts, ref.tokens = append(ref.texts, text), append(ref.tokens, toks)
		ref.refs, ref.base, ref.floor = append(ref.refs, answer), append(ref.base, lists), append(ref.floor, floor)
	}
	return ref, nil
}

// ReadAnswers reads other against the reference; step as for
// ReferenceAnswers.
func (ref *AnswersReference) ReadAnswers(ctx context.Context, other AnswersSide, step func()) (*AnswersResult, error) {
	o, err := answersReader(ctx, other, ref.plan)
	if err != nil {
		return nil, fmt.Errorf("the other setting: %w", err)
	}
	return ref.read(ctx, o, step)
}

// read is ReadAnswers on a checked server.
func (ref *AnswersReference) read(ctx context.Context, o *answerReader, step func()) (*AnswersResult, error) {
	if step == nil {
		step = func() {}
	}
	res := &AnswersResult{TopK: ref.topK, BaseModel: ref.model, OtherModel: o.model}
	var refs []int
	var baseLists, floorLists, otherLists []drift.Position
	for pi, text := range ref.texts {
		kind := AnswerPrompts[pi].Kind
		toks, err := o.tokenize(ctx, text)
		if err != nil {
			return nil, fmt.Errorf("the other setting: %w", err)
		}
		if err := sameTokens(ref.tokens[pi], toks); err != nil {
			return nil, err
		}
		answer := ref.refs[pi]
		from := len(otherLists)
		for i := range answer {
			_, ol, err := o.complete(ctx, append([]any{text}, ids(answer[:i])...), 1)
			if err != nil {
				return nil, fmt.Errorf("the other setting read at token %d of the %s answer: %w", i+1, kind, err)
			}
			step()
			otherLists = append(otherLists, ol[0])
		}
		// The prompt kind's own figures: a setting may keep prose and
		// lose code.
		m, err := drift.Compare(ref.base[pi], otherLists[from:], answer)
		if err != nil {
			return nil, err
		}
		res.Kinds = append(res.Kinds, AnswersKind{Kind: kind, Figures: m.Figures})
		res.noteShort(ref.base[pi])
		res.noteShort(ref.floor[pi])
		refs, baseLists, floorLists = append(refs, answer...), append(baseLists, ref.base[pi]...), append(floorLists, ref.floor[pi]...)
		res.Reference = append(res.Reference, answer)
	}
	res.noteShort(otherLists)
	var err error
	if res.Floor, err = drift.Compare(baseLists, floorLists, refs); err != nil {
		return nil, err
	}
	if res.Other, err = drift.Compare(baseLists, otherLists, refs); err != nil {
		return nil, err
	}
	res.SameTopBeyond, res.KLBeyond = drift.Beyond(res.Other, res.Floor)
	if res.TopK < ref.plan.TopK {
		res.Notes = append(res.Notes, fmt.Sprintf("a server listed only %d most likely tokens where %d were asked: the KL divergence is a lower bound from those (docs/method.md §14)", res.TopK, ref.plan.TopK))
	}
	return res, nil
}

// noteShort keeps the shortest top list seen.
func (r *AnswersResult) noteShort(lists []drift.Position) {
	for _, l := range lists {
		r.TopK = min(r.TopK, len(l))
	}
}

func ids(toks []int) []any {
	out := make([]any, len(toks))
	for i, t := range toks {
		out[i] = t
	}
	return out
}

// answerReader reads one setting's server.
type answerReader struct {
	c     *http.Client
	ep    Endpoint
	b     setup.Base
	model string
	plan  AnswersPlan
}

// answersReader checks side's endpoint (its models, its family) and
// refuses a server the measurement cannot read.
func answersReader(ctx context.Context, side AnswersSide, plan AnswersPlan) (*answerReader, error) {
	sess, err := newSession(side.Endpoint, Observer{})
	if err != nil {
		return nil, err
	}
	r := &runner{session: sess, plan: setup.DefaultPlan()}
	r.plan.Model = side.Model
	if err := r.session.check(ctx, side.Model, true); err != nil {
		return nil, err
	}
	if r.detection == nil || r.detection.Family != results.FamilyLlamaCpp {
		family := "this server"
		if r.detection != nil && r.detection.Family != "" {
			family = r.detection.Family
		}
		return nil, fmt.Errorf("%w; %s is not read yet (vLLM's prompt_logprobs and a continued assistant message are the routes to come)", ErrAnswersUnsupported, family)
	}
	c := checkClient(r.ep, r.base)
	// A reference answer of a few dozen tokens with its lists takes a
	// slow server longer than a check's 15 s: the plan's timeout bounds
	// each request.
	c.Timeout = plan.Timeout
	return &answerReader{c: c, ep: r.ep, b: r.base, model: r.model, plan: plan}, nil
}

// maxAnswersBody bounds one answer: a top list of 20 at each of a few
// dozen positions.
const maxAnswersBody = 8 << 20

// post sends body to path and decodes the answer into out.
func (a *answerReader) post(ctx context.Context, path string, body, out any) error {
	raw, err := postBounded(ctx, a.c, a.ep, a.b, path, body, a.plan.Timeout, maxAnswersBody)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("POST %s answered something that is not the JSON expected: %v", path, err)
	}
	return nil
}

// template is the chat template's text of one user message.
func (a *answerReader) template(ctx context.Context, text string) (string, error) {
	var out struct {
		Prompt *string `json:"prompt"`
	}
	err := a.post(ctx, "/apply-template", map[string]any{"messages": []map[string]string{{"role": "user", "content": text}}}, &out)
	if err != nil {
		return "", fmt.Errorf("the chat template: %w", err)
	}
	if out.Prompt == nil {
		return "", errors.New("the chat template: /apply-template answered without a prompt")
	}
	return *out.Prompt, nil
}

// complete asks n tokens after prompt (text and token ids) at
// temperature 0 with the top lists, and returns the tokens chosen and
// the list at each.
func (a *answerReader) complete(ctx context.Context, prompt []any, n int) ([]int, []drift.Position, error) {
	var out struct {
		Probs *[]struct {
			ID  int         `json:"id"`
			Top []drift.Alt `json:"top_logprobs"`
		} `json:"completion_probabilities"`
	}
	body := map[string]any{"prompt": prompt, "n_predict": n, "temperature": 0, "n_probs": a.plan.TopK, "cache_prompt": true}
	if a.model != "" {
		body["model"] = a.model
	}
	if err := a.post(ctx, "/completion", body, &out); err != nil {
		return nil, nil, err
	}
	if out.Probs == nil {
		return nil, nil, errors.New("the server returned no token probabilities (completion_probabilities), so the answers cannot be compared")
	}
	if len(*out.Probs) != n {
		return nil, nil, fmt.Errorf("the server answered %d tokens where %d were asked", len(*out.Probs), n)
	}
	var toks []int
	var lists []drift.Position
	for i, p := range *out.Probs {
		if len(p.Top) == 0 {
			return nil, nil, fmt.Errorf("the server listed no likely tokens at token %d", i+1)
		}
		toks, lists = append(toks, p.ID), append(lists, drift.Position(p.Top))
	}
	return toks, lists, nil
}

// ErrOtherTokenizer says the two settings tokenise the prompts
// differently: another model family, whose distributions are over other
// tokens, is not a drift.
var ErrOtherTokenizer = errors.New("the two settings tokenise the prompts differently")

// sameTokens refuses two settings whose tokenisers part on the same
// text (bt the baseline's tokens, ot the other's).
func sameTokens(bt, ot []int) error {
	if slices.Equal(bt, ot) {
		return nil
	}
	at := 0
	for at < min(len(bt), len(ot)) && bt[at] == ot[at] {
		at++
	}
	return fmt.Errorf("%w (%d and %d tokens, parting at token %d): another model family is not a drift, so nothing is compared", ErrOtherTokenizer, len(bt), len(ot), at+1)
}

// tokenize is text's token ids by the server's tokenizer, special tokens
// added as a prompt gets them.
func (a *answerReader) tokenize(ctx context.Context, text string) ([]int, error) {
	var out struct {
		Tokens *[]json.RawMessage `json:"tokens"`
	}
	if err := a.post(ctx, "/tokenize", map[string]any{"content": text, "add_special": true}, &out); err != nil {
		return nil, fmt.Errorf("the tokenizer: %w", err)
	}
	if out.Tokens == nil {
		return nil, errors.New("the tokenizer: /tokenize answered without tokens")
	}
	ids := make([]int, 0, len(*out.Tokens))
	for _, raw := range *out.Tokens {
		var id int
		if json.Unmarshal(raw, &id) != nil {
			var piece struct {
				ID int `json:"id"`
			}
			if json.Unmarshal(raw, &piece) != nil {
				return nil, errors.New("the tokenizer: /tokenize answered something that is not token ids")
			}
			id = piece.ID
		}
		ids = append(ids, id)
	}
	return ids, nil
}
