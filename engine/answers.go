package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/kovara/desktop/engine/drift"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// The answers measurement (docs/method.md §14): the baseline's greedy
// answers to fixed prompts with their top lists, then the baseline again
// (its floor) and the other setting read at every position of those
// answers, through llama-server's token route: /completion with the
// prompt's text and the answer's token ids so far, one token at a time
// (the prompt cache makes each a one-token step); or Ollama's
// /api/generate, raw, with the prompt's text and the answer's bytes so
// far, tokens told apart by their bytes since Ollama says no ids; any
// other server (vLLM, SGLang, LM Studio, …) through its chat route: the
// answer so far as a final assistant message the server continues
// (vLLM's and SGLang's continue_final_message), with logprobs and
// top_logprobs, tokens told apart by their bytes. A server that answers
// that message again from its start is said, not measured.

// TuneAnswersLine says before a settings comparison what its answers
// check asks: "The answers check asks each setting 10 fixed prompts and
// reads 6 prompts of its own token by token: 198 short requests for
// f32, 192 for each other setting."
func TuneAnswersLine(first string) string {
	return fmt.Sprintf("The answers check asks each setting %d fixed prompts and reads %d prompts of its own token by token: %d short requests for %s, %d for each other setting.",
		len(SpecDecPrompts), len(setup.AnswerPrompts), tuneDriftPlan.ReferenceRequests(), first, tuneDriftPlan.ReadRequests())
}

// AnswersSide is one setting: an endpoint and the model asked of it ("":
// the only one served).
type AnswersSide struct {
	Endpoint setup.Endpoint
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
	// local; never a word of it leaves); none where the baseline's server
	// says no ids (Ollama).
	Reference [][]int
	// Compared is how many positions of each prompt's answer were
	// compared: all read, unless a tokenizer split the answer's text
	// otherwise from some token on (a note says where).
	Compared []int
	// Kinds are the other setting's figures prompt by prompt, in the
	// set's order.
	Kinds []AnswersKind
}

// AnswersKind is one prompt kind's figures, and the token (from 1) of
// the baseline's answer where the other setting's greedy answer would
// part from it, 0 where it did not in the positions read.
type AnswersKind struct {
	Kind string
	drift.Figures
	PartsAt int
}

// partsAt is where a greedy answer of the lists' setting parts from ref:
// the first position whose most likely token is not ref's. Up to there
// the two answers are the same tokens, so the lists read along ref are
// the ones its own greedy answer would have met.
func partsAt(lists []drift.Position, ref []int) int {
	for i, l := range lists {
		if top, ok := l.Top(); ok && top.ID != ref[i] {
			return i + 1
		}
	}
	return 0
}

// Drift is the measurement as a settings comparison keeps it, the
// ruler's words with it where the setting is beyond the floor.
func (r *AnswersResult) Drift() *results.TuneDrift {
	d := &results.TuneDrift{
		Prompts: setup.AnswerPromptsVersion, Positions: r.Other.Positions,
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

// MeasureAnswers reads other against base (docs/method.md §14);
// progress, when set, is told each request done of the total.
func MeasureAnswers(ctx context.Context, base, other AnswersSide, plan setup.AnswersPlan, progress func(done, total int)) (*AnswersResult, error) {
	plan = plan.WithDefaults()
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
	plan  setup.AnswersPlan
	model string
	// For each prompt: the template's text, its tokens by the baseline's
	// tokenizer (ids where the server says them, else only their
	// count), the reference answer's tokens, and the baseline's lists at
	// each position, generating and read again (the floor).
	kinds   []string
	prompts []string
	texts   []string
	tokens  []promptTokens
	refs    [][]wireAlt
	base    [][][]wireAlt
	floor   [][][]wireAlt
	// byText: the baseline's server says no token ids (Ollama), so
	// tokens are told apart by their bytes.
	byText bool
	// chat: the baseline was read through its chat route, so texts are
	// the prompts themselves, not a template's.
	chat  bool
	who   string
	topK  int
	notes []string
}

// ReferenceAnswers makes base's reference (AnswersReference); step,
// when set, is called after each request.
func ReferenceAnswers(ctx context.Context, base AnswersSide, plan setup.AnswersPlan, step func()) (*AnswersReference, error) {
	plan = plan.WithDefaults()
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
	ref := &AnswersReference{plan: b.plan, model: b.model, topK: b.plan.TopK, byText: b.byText(), chat: b.route == routeChat, who: b.who()}
	for _, p := range setup.AnswerPrompts[:b.plan.Prompts] {
		text, err := b.template(ctx, p.Text)
		if err != nil {
			return nil, err
		}
		var toks promptTokens
		if b.route == routeTokens {
			if toks, err = b.tokenize(ctx, text); err != nil {
				return nil, fmt.Errorf("the baseline: %w", err)
			}
			if !b.fits(toks.n) {
				ref.notes = append(ref.notes, b.tooLong("the baseline", p.Kind, toks.n))
				continue
			}
		}
		c, err := b.complete(ctx, text, toks, nil, b.plan.Positions)
		if err != nil {
			return nil, fmt.Errorf("the baseline's answer to the %s prompt: %w", p.Kind, err)
		}
		step()
		if !b.fits(c.promptN) {
			ref.notes = append(ref.notes, b.tooLong("the baseline", p.Kind, c.promptN))
			continue
		}
		if c.promptN > 0 {
			// The prompt's tokens as the server counted them generating:
			// each position read after it counts one more (readPositions).
			// Ollama says only this count, no ids.
			toks.n = c.promptN
		}
		answer, lists := c.chosen, c.lists
		floor, cut, err := readPositions(ctx, b, text, toks, answer, step)
		if err != nil {
			return nil, fmt.Errorf("the baseline read again along its %s answer: %w", p.Kind, err)
		}
		if b.route == routeChat && !continued(answer[:cut], floor) {
			// Where a server does not count the prompt, its own greedy
			// answer tells: continuing it, its most likely token at each
			// position is the one it chose there.
			return nil, fmt.Errorf("the baseline: %w", errRestarted(0))
		}
		if cut < len(answer) {
			ref.notes = append(ref.notes, retokenisedNote("the baseline", p.Kind, cut))
			answer, lists = answer[:cut], lists[:cut]
		}
		ref.kinds, ref.prompts, ref.texts, ref.tokens = append(ref.kinds, p.Kind), append(ref.prompts, p.Text), append(ref.texts, text), append(ref.tokens, toks)
		ref.refs, ref.base, ref.floor = append(ref.refs, answer), append(ref.base, lists), append(ref.floor, floor)
	}
	return ref, nil
}

// fits says whether a prompt of n tokens and the answer's positions fit
// the server's context a request (unknown: they are taken to).
func (b *answerReader) fits(n int) bool {
	return b.context <= 0 || n <= 0 || n+b.plan.Positions <= b.context
}

// tooLong says a prompt was left out for the server's context.
func (b *answerReader) tooLong(who, kind string, n int) string {
	return fmt.Sprintf("the %s prompt was left out: its %d tokens and %d of an answer do not fit %s's context of %d tokens a request (llama-server divides -c among its -np slots)", kind, n, b.plan.Positions, who, b.context)
}

// retokenisedNote says where a server's tokenizer read the answer's text
// as other tokens, from which on nothing of that answer was compared.
func retokenisedNote(who, kind string, at int) string {
	return fmt.Sprintf("%s read the %s answer's text as other tokens from token %d on (its tokenizer splits the text differently from how it was generated): that answer was compared up to there", who, kind, at+1)
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
	res := &AnswersResult{TopK: ref.topK, BaseModel: ref.model, OtherModel: o.model, Notes: append([]string{}, ref.notes...)}
	// Where either server says no token ids, tokens are told apart by
	// their bytes on both sides: the same GGUF's tokens are the same
	// bytes whichever server reads it.
	k := keyer{byText: ref.byText || o.byText(), ids: map[string]int{}}
	var refs []int
	var baseLists, floorLists, otherLists []drift.Position
	for pi, text := range ref.texts {
		kind := ref.kinds[pi]
		if !o.fits(ref.tokens[pi].n) {
			res.Notes = append(res.Notes, o.tooLong("the other setting", kind, ref.tokens[pi].n))
			continue
		}
		if o.route == routeTokens && !ref.byText {
			toks, err := o.tokenize(ctx, text)
			if err != nil {
				return nil, fmt.Errorf("the other setting: %w", err)
			}
			if err := sameTokens(ref.tokens[pi], toks); err != nil {
				return nil, err
			}
		}
		// A chat route is sent the prompt and applies its own template;
		// a token route after a chat route's baseline, its own template's
		// text (the prompt counts say whether the two agree).
		switch {
		case o.route == routeChat:
			text = ref.prompts[pi]
		case ref.chat:
			var err error
			if text, err = o.template(ctx, ref.prompts[pi]); err != nil {
				return nil, fmt.Errorf("the other setting: %w", err)
			}
		}
		answer := ref.refs[pi]
		lists, cut, err := readPositions(ctx, o, text, ref.tokens[pi], answer, step)
		if err != nil {
			return nil, fmt.Errorf("the other setting, along the %s answer: %w", kind, err)
		}
		base, floor := ref.base[pi], ref.floor[pi]
		if cut < len(answer) {
			res.Notes = append(res.Notes, retokenisedNote("the other setting", kind, cut))
			answer, base, floor = answer[:cut], base[:cut], floor[:cut]
		}
		ids, bl, fl, ol := k.refIDs(answer), k.positions(base), k.positions(floor), k.positions(lists)
		// The prompt kind's own figures: a setting may keep prose and
		// lose code.
		m, err := drift.Compare(bl, ol, ids)
		if err != nil {
			return nil, err
		}
		res.Kinds = append(res.Kinds, AnswersKind{Kind: kind, Figures: m.Figures, PartsAt: partsAt(ol, ids)})
		res.noteShort(bl)
		res.noteShort(fl)
		res.noteShort(ol)
		refs, baseLists, floorLists, otherLists = append(refs, ids...), append(baseLists, bl...), append(floorLists, fl...), append(otherLists, ol...)
		res.Compared = append(res.Compared, len(answer))
		if !ref.byText {
			res.Reference = append(res.Reference, ids)
		}
	}
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
	if k.byText {
		who := ref.who
		if !ref.byText {
			who = o.who()
		}
		res.Notes = append(res.Notes, who+" says no token ids: tokens were told apart by their bytes, and the tokenizers checked by the number of tokens of each prompt and of each answer read so far (docs/method.md §14)")
	}
	return res, nil
}

// readPositions reads r's next-token list at every position of answer
// after the prompt text (toks its tokens), up to r.slots at once, and
// returns them in order. cut is the first position the server counted
// other tokens than the prompt's and the answer's so far (its tokenizer
// read the answer's text otherwise), len(answer) when none: the lists
// from there on are not of the reference's tokens and are left out. At
// the first position such a count means the prompt itself is read as
// other tokens: another tokenizer, refused.
func readPositions(ctx context.Context, r *answerReader, text string, toks promptTokens, answer []wireAlt, step func()) ([][]wireAlt, int, error) {
	lists := make([][]wireAlt, len(answer))
	counted := make([]int, len(answer))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	next := make(chan int)
	for range max(1, min(r.slots, len(answer))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c, err := r.complete(ctx, text, toks, answer[:i], 1)
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("at token %d: %w", i+1, err)
					cancel()
				}
				if err == nil {
					lists[i], counted[i] = c.lists[0], c.promptN
					step() // one at a time: the caller's counter is not shared
				}
				mu.Unlock()
			}
		}()
	}
	for i := range answer {
		select {
		case next <- i:
			continue
		case <-ctx.Done():
		}
		break
	}
	close(next)
	wg.Wait()
	if first != nil {
		return nil, 0, first
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if e := restartedBy(counted, toks.n); e > 0 {
		return nil, 0, errRestarted(e)
	}
	cut := len(answer)
	for i, n := range counted {
		if n != 0 && toks.n != 0 && n != toks.n+i {
			if i == 0 {
				return nil, 0, fmt.Errorf("%w (the prompt is %d tokens to one and %d to the other): another model family is not a drift, so nothing is compared", ErrOtherTokenizer, toks.n, n)
			}
			cut = i
			break
		}
	}
	return lists[:cut], cut, nil
}

// ErrNoContinuation says a server answered the final assistant message
// of the chat route again from its start instead of continuing it: what
// it lists there is not the next token of the answer, so nothing is
// measured.
var ErrNoContinuation = errors.New("the server does not continue a final assistant message (it answers it again from its start), so its chat route cannot be read token by token")

// errRestarted is ErrNoContinuation with what showed it: the prompt
// counted e tokens more than the answer so far (the template closed the
// message and opened another), or, e 0, the server's own greedy answer
// not followed.
func errRestarted(e int) error {
	how := "given its own answer so far, its most likely next token was mostly not the one it had chosen there"
	if e > 0 {
		how = fmt.Sprintf("given the answer so far, it counted %d prompt tokens more than the answer's, as where its template closes the message and begins another", e)
	}
	return fmt.Errorf("%w: %s, though asked to continue it (continue_final_message, which vLLM and SGLang follow)", ErrNoContinuation, how)
}

// restartedBy is how many tokens more than the prompt n0 and the answer
// so far a chat route counted at every position after the first, where
// that is the same positive number throughout (a template that closes
// the final message and opens a new one adds the same tokens each
// time); 0 otherwise. A tokenizer reading an answer's text otherwise
// merges its pieces (fewer tokens), from some position on, not from the
// first.
func restartedBy(counted []int, n0 int) int {
	if n0 <= 0 || len(counted) < 2 || counted[1] == 0 {
		return 0
	}
	e := counted[1] - (n0 + 1)
	if e <= 0 {
		return 0
	}
	for i, n := range counted[1:] {
		if n != 0 && n-(n0+i+1) != e {
			return 0
		}
	}
	return e
}

// continued says a server's lists read along its own greedy answer
// mostly have that answer's token first, as a server continuing the
// answer's text must (a GPU's nondeterminism moves a few); one that
// starts the answer again lists its first tokens instead.
func continued(answer []wireAlt, lists [][]wireAlt) bool {
	same := 0
	for i, l := range lists {
		if len(l) > 0 && slices.MaxFunc(l, func(a, b wireAlt) int { return cmp.Compare(a.LogProb, b.LogProb) }).key() == answer[i].key() {
			same++
		}
	}
	return 2*same > len(lists)
}

// noteShort keeps the shortest top list seen.
func (r *AnswersResult) noteShort(lists []drift.Position) {
	for _, l := range lists {
		r.TopK = min(r.TopK, len(l))
	}
}

// wireAlt is one token as both servers list it: llama-server's
// completion_probabilities and Ollama's logprobs entries and their
// top_logprobs alike, the id only in llama-server's.
type wireAlt struct {
	ID      *int    `json:"id"`
	Token   string  `json:"token"`
	Bytes   []int   `json:"bytes"`
	LogProb float64 `json:"logprob"`
}

// wireToken is one generated token with its top list.
type wireToken struct {
	wireAlt
	Top []wireAlt `json:"top_logprobs"`
}

// key is the token's bytes (its text where a server gave none).
func (a wireAlt) key() string {
	if len(a.Bytes) == 0 {
		return a.Token
	}
	b := make([]byte, len(a.Bytes))
	for i, v := range a.Bytes {
		b[i] = byte(v)
	}
	return string(b)
}

// keyer turns the servers' tokens into drift's ids: their own ids, or
// where a server says none, one number for each distinct token's bytes.
type keyer struct {
	byText bool
	ids    map[string]int
}

func (k keyer) id(a wireAlt) int {
	if !k.byText && a.ID != nil {
		return *a.ID
	}
	key := a.key()
	id, ok := k.ids[key]
	if !ok {
		id = len(k.ids)
		k.ids[key] = id
	}
	return id
}

func (k keyer) refIDs(answer []wireAlt) []int {
	out := make([]int, len(answer))
	for i, a := range answer {
		out[i] = k.id(a)
	}
	return out
}

func (k keyer) positions(lists [][]wireAlt) []drift.Position {
	out := make([]drift.Position, len(lists))
	for i, l := range lists {
		p := make(drift.Position, len(l))
		for j, a := range l {
			p[j] = drift.Alt{ID: k.id(a), LogProb: a.LogProb}
		}
		out[i] = p
	}
	return out
}

// promptTokens is a prompt's tokens: their ids where the server says
// them (llama-server's /tokenize), and how many.
type promptTokens struct {
	ids []int
	n   int
}

// answerReader reads one setting's server.
type answerReader struct {
	c     *http.Client
	ep    setup.Endpoint
	b     setup.Base
	model string
	plan  setup.AnswersPlan
	// route is how the server is read.
	route answersRoute
	// slots is how many positions are read at once: the server's
	// parallel slots (each a one-token step after its prompt cache).
	slots int
	// context is the tokens a request may hold, 0 when the server does
	// not say (llama-server's a slot's).
	context int
	// family is the server's (results.Family*), "" unknown.
	family string
}

// answersRoute is a server's way to its next-token lists.
type answersRoute int

const (
	// routeTokens is llama-server's /completion with token ids.
	routeTokens answersRoute = iota
	// routeOllama is Ollama's /api/generate, raw, its template from
	// /api/chat.
	routeOllama
	// routeChat is any server's chat completions with logprobs, the
	// answer so far a final assistant message it continues.
	routeChat
)

// byText: the route says no token ids, so tokens are told apart by
// their bytes.
func (a *answerReader) byText() bool { return a.route != routeTokens }

// who names the route's server in a note.
func (a *answerReader) who() string {
	switch a.route {
	case routeOllama:
		return "Ollama"
	case routeChat:
		return "the chat route"
	}
	return "llama-server"
}

// maxAnswersSlots bounds the positions read at once, whatever a server
// says it serves.
const maxAnswersSlots = 8

// answersReader checks side's endpoint (its models, its family) and
// refuses a server the measurement cannot read.
func answersReader(ctx context.Context, side AnswersSide, plan setup.AnswersPlan) (*answerReader, error) {
	sess, err := newSession(side.Endpoint, Observer{})
	if err != nil {
		return nil, err
	}
	r := &runner{session: sess, plan: setup.DefaultPlan()}
	r.plan.Model = side.Model
	if err := r.session.check(ctx, side.Model, true); err != nil {
		return nil, err
	}
	family := ""
	if r.detection != nil {
		family = r.detection.Family
	}
	route := routeChat
	switch family {
	case results.FamilyLlamaCpp:
		route = routeTokens
	case results.FamilyOllama:
		route = routeOllama
	}
	c := checkClient(r.ep, r.base)
	// A reference answer of a few dozen tokens with its lists takes a
	// slow server longer than a check's 15 s: the plan's timeout bounds
	// each request.
	c.Timeout = plan.Timeout
	slots := min(max(EstimateSlots(r.detection), 1), maxAnswersSlots)
	ctxLen := 0
	if r.detection != nil {
		ctxLen = r.detection.ContextLength
	}
	return &answerReader{c: c, ep: r.ep, b: r.base, model: r.model, plan: plan, route: route, family: family, slots: slots, context: ctxLen}, nil
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

// template is the chat template's text of one user message, as the
// server would send it to the model: llama-server's /apply-template,
// Ollama's /api/chat rendering only (_debug_render_only).
func (a *answerReader) template(ctx context.Context, text string) (string, error) {
	if a.route == routeChat {
		return text, nil // the server applies its template itself
	}
	msgs := []map[string]string{{"role": "user", "content": text}}
	if a.route == routeOllama {
		var out struct {
			Debug *struct {
				Rendered string `json:"rendered_template"`
			} `json:"_debug_info"`
		}
		body := map[string]any{"model": a.model, "messages": msgs, "stream": false, "_debug_render_only": true}
		if err := a.post(ctx, "/api/chat", body, &out); err != nil {
			return "", fmt.Errorf("the chat template: %w", err)
		}
		if out.Debug == nil {
			return "", errors.New("the chat template: this Ollama does not say its rendered template (/api/chat with _debug_render_only), so its prompts cannot be read token by token; a newer Ollama does")
		}
		return out.Debug.Rendered, nil
	}
	var out struct {
		Prompt *string `json:"prompt"`
	}
	if err := a.post(ctx, "/apply-template", map[string]any{"messages": msgs}, &out); err != nil {
		return "", fmt.Errorf("the chat template: %w", err)
	}
	if out.Prompt == nil {
		return "", errors.New("the chat template: /apply-template answered without a prompt")
	}
	return *out.Prompt, nil
}

// completion is what one request read: the tokens chosen, the top list
// at each, and how many tokens the server counted in the prompt.
type completion struct {
	chosen  []wireAlt
	lists   [][]wireAlt
	promptN int
}

// complete asks n tokens at temperature 0 with the top lists after the
// prompt text (toks its tokens) and the answer's tokens so far: on
// llama-server the prompt as text and token ids where the ids are known
// (its prompt cache makes each a one-token step), else the text and the
// answer's bytes, raw, with Ollama's penalties off, so that its lists
// and its choice are the model's own.
func (a *answerReader) complete(ctx context.Context, text string, toks promptTokens, answer []wireAlt, n int) (completion, error) {
	var out struct {
		Llama  *[]wireToken `json:"completion_probabilities"`
		Ollama *[]wireToken `json:"logprobs"`
		Chat   []struct {
			Logprobs *struct {
				Content *[]wireToken `json:"content"`
			} `json:"logprobs"`
		} `json:"choices"`
		// The prompt's tokens as the server counted them.
		LlamaN  int `json:"tokens_evaluated"`
		OllamaN int `json:"prompt_eval_count"`
		Usage   struct {
			N int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	var err error
	var probs *[]wireToken
	switch a.route {
	case routeChat:
		if err = a.post(ctx, "/v1/chat/completions", a.chatBody(text, answer, n), &out); err == nil && len(out.Chat) > 0 && out.Chat[0].Logprobs != nil {
			probs = out.Chat[0].Logprobs.Content
		}
	case routeOllama:
		body := map[string]any{"model": a.model, "prompt": text + joinBytes(answer), "raw": true, "stream": false,
			"logprobs": true, "top_logprobs": a.plan.TopK,
			// The lists are the model's before any penalty; a repeat
			// penalty (Ollama's default 1.1) would choose another token
			// than the list's first at temperature 0.
			"options": map[string]any{"temperature": 0, "num_predict": n, "repeat_penalty": 1, "presence_penalty": 0, "frequency_penalty": 0, "seed": 1}}
		if err = a.post(ctx, "/api/generate", body, &out); err == nil {
			probs = out.Ollama
		}
	default:
		prompt := []any{text}
		if withIDs(answer) {
			for _, t := range answer {
				prompt = append(prompt, *t.ID)
			}
		} else {
			prompt = []any{text + joinBytes(answer)}
		}
		body := map[string]any{"prompt": prompt, "n_predict": n, "temperature": 0, "n_probs": a.plan.TopK, "cache_prompt": true}
		if a.model != "" {
			body["model"] = a.model
		}
		if err = a.post(ctx, "/completion", body, &out); err == nil {
			probs = out.Llama
		}
	}
	if err != nil {
		return completion{}, err
	}
	if probs == nil {
		return completion{}, errors.New("the server returned no token probabilities, so the answers cannot be compared")
	}
	if len(*probs) != n {
		return completion{}, fmt.Errorf("the server answered %d tokens where %d were asked", len(*probs), n)
	}
	c := completion{promptN: max(out.LlamaN, out.OllamaN, out.Usage.N)}
	for i, p := range *probs {
		if len(p.Top) == 0 {
			return completion{}, fmt.Errorf("the server listed no likely tokens at token %d", i+1)
		}
		if a.route == routeTokens && (p.ID == nil || slices.ContainsFunc(p.Top, func(t wireAlt) bool { return t.ID == nil })) {
			return completion{}, errors.New("the server listed tokens without their ids")
		}
		c.chosen, c.lists = append(c.chosen, p.wireAlt), append(c.lists, p.Top)
	}
	return c, nil
}

// chatBody is the chat route's request: the prompt as the user's
// message and the answer so far as the assistant's, continued (vLLM's
// and SGLang's continue_final_message; llama-server and Ollama continue
// a final assistant message of themselves, or not at all), greedy, with
// every penalty a server may apply by default off so that its choice is
// its list's first.
func (a *answerReader) chatBody(text string, answer []wireAlt, n int) map[string]any {
	msgs := []map[string]string{{"role": "user", "content": text}}
	body := map[string]any{"messages": msgs, "max_tokens": n, "temperature": 0, "seed": 1, "stream": false,
		"logprobs": true, "top_logprobs": a.plan.TopK, "presence_penalty": 0, "frequency_penalty": 0}
	if a.model != "" {
		body["model"] = a.model
	}
	if len(answer) > 0 {
		body["messages"] = append(msgs, map[string]string{"role": "assistant", "content": joinBytes(answer)})
		body["continue_final_message"], body["add_generation_prompt"] = true, false
	}
	if a.family == results.FamilyVLLM || a.family == results.FamilySGLang {
		// Their defaults come from the model's generation_config.json,
		// which may set a repetition penalty.
		body["repetition_penalty"] = 1
	}
	return body
}

// withIDs: every token has the server's id.
func withIDs(answer []wireAlt) bool {
	return !slices.ContainsFunc(answer, func(t wireAlt) bool { return t.ID == nil })
}

// joinBytes is the answer's text: its tokens' bytes one after another.
func joinBytes(answer []wireAlt) string {
	var b strings.Builder
	for _, t := range answer {
		b.WriteString(t.key())
	}
	return b.String()
}

// ErrOtherTokenizer says the two settings tokenise the prompts
// differently: another model family, whose distributions are over other
// tokens, is not a drift.
var ErrOtherTokenizer = errors.New("the two settings tokenise the prompts differently")

// sameTokens refuses two settings whose tokenisers part on the same
// text (bt the baseline's tokens, ot the other's).
func sameTokens(bt, ot promptTokens) error {
	if slices.Equal(bt.ids, ot.ids) {
		return nil
	}
	at := 0
	for at < min(len(bt.ids), len(ot.ids)) && bt.ids[at] == ot.ids[at] {
		at++
	}
	return fmt.Errorf("%w (%d and %d tokens, parting at token %d): another model family is not a drift, so nothing is compared", ErrOtherTokenizer, len(bt.ids), len(ot.ids), at+1)
}

// tokenize is text's token ids by llama-server's tokenizer, special
// tokens added as a prompt gets them.
func (a *answerReader) tokenize(ctx context.Context, text string) (promptTokens, error) {
	var out struct {
		Tokens *[]json.RawMessage `json:"tokens"`
	}
	if err := a.post(ctx, "/tokenize", map[string]any{"content": text, "add_special": true}, &out); err != nil {
		return promptTokens{}, fmt.Errorf("the tokenizer: %w", err)
	}
	if out.Tokens == nil {
		return promptTokens{}, errors.New("the tokenizer: /tokenize answered without tokens")
	}
	ids := make([]int, 0, len(*out.Tokens))
	for _, raw := range *out.Tokens {
		var id int
		if json.Unmarshal(raw, &id) != nil {
			var piece struct {
				ID int `json:"id"`
			}
			if json.Unmarshal(raw, &piece) != nil {
				return promptTokens{}, errors.New("the tokenizer: /tokenize answered something that is not token ids")
			}
			id = piece.ID
		}
		ids = append(ids, id)
	}
	return promptTokens{ids: ids, n: len(ids)}, nil
}
