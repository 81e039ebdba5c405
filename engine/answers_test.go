package engine

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// TestAnswersAgainstAKnownDrift: the simulator's model read against
// itself on another server is within the floor; its "quantisations"
// (every logit moved by a normal of known size) drift beyond it, the
// larger further, and the measured KL divergence is a lower bound of
// the true one the simulator knows, catching most of it with top lists
// of 20.
func TestAnswersAgainstAKnownDrift(t *testing.T) {
	t.Parallel()
	base := sim.Config{Personality: sim.LlamaCpp}
	_, baseURL := startSim(t, base)
	plan := setup.AnswersPlan{Positions: 12, Prompts: 3}
	tests := []struct {
		name   string
		drift  float64
		beyond bool
	}{
		{"the same model elsewhere", 0, false},
		{"a light quantisation", 0.2, true},
		{"a heavy quantisation", 0.8, true},
		{"a ruinous one", 3, true},
	}
	var kls, sameTops []float64
	for _, tt := range tests {
		cfg := base
		cfg.Answers = sim.Distribution{Drift: tt.drift, DriftSeed: 7}
		_, url := startSim(t, cfg)
		res, err := MeasureAnswers(context.Background(), AnswersSide{Endpoint: setup.Endpoint{URL: baseURL}}, AnswersSide{Endpoint: setup.Endpoint{URL: url}}, plan, nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if res.Floor.KLMean != 0 || res.Floor.SameTop != 1 {
			t.Errorf("%s: the floor of a deterministic server %+v, want 0", tt.name, res.Floor.Figures)
		}
		if beyond := res.KLBeyond || res.SameTopBeyond; beyond != tt.beyond {
			t.Errorf("%s: beyond the floor %v, want %v (%s)", tt.name, beyond, tt.beyond, res.Line())
		}
		// The simulator's truth at the same positions.
		truth, n := 0.0, 0
		for i, ref := range res.Reference {
			ctx := cfg.Answers.Tokens(sim.Template(setup.AnswerPrompts[i].Text))
			for j := range ref {
				truth += sim.TrueKL(base.Answers, cfg.Answers, append(ctx, ref[:j]...))
				n++
			}
		}
		truth /= float64(n)
		if got := res.Other.KLMean; got > truth*(1+1e-9)+1e-12 || got < 0.5*truth {
			t.Errorf("%s: measured KL %.4g against the true %.4g: want a lower bound catching most of it", tt.name, got, truth)
		}
		t.Logf("%s: %s; the true KL %.4g", tt.name, res.Line(), truth)
		if len(res.Kinds) != plan.Prompts || res.Kinds[0].Kind != setup.AnswerPrompts[0].Kind || res.Kinds[0].Positions != plan.Positions {
			t.Errorf("%s: figures by prompt kind %+v, want one for each of the %d prompts", tt.name, res.Kinds, plan.Prompts)
		}
		kls, sameTops = append(kls, res.Other.KLMean), append(sameTops, res.Other.SameTop)
	}
	if !(kls[2] > 4*kls[1]) || !(kls[3] > 4*kls[2]) {
		t.Errorf("KL of the light quantisation %.4g, the heavy %.4g, the ruinous %.4g: want each far further", kls[1], kls[2], kls[3])
	}
	// Both figures: the ruinous one changes top tokens the lighter ones
	// keep.
	if !(sameTops[3] < sameTops[2]) {
		t.Errorf("same top token: heavy %.3f, ruinous %.3f: want the ruinous lower", sameTops[2], sameTops[3])
	}
}

// TestAnswersSayWhatTheServerDoesNotAllow: a server without token
// probabilities, one with shorter lists than asked, one whose tokenizer
// is another and one whose route is not read are each said in one
// sentence, nothing measured wrongly.
func TestAnswersSayWhatTheServerDoesNotAllow(t *testing.T) {
	t.Parallel()
	_, baseURL := startSim(t, sim.Config{Personality: sim.LlamaCpp})
	side := func(cfg sim.Config) AnswersSide {
		_, url := startSim(t, cfg)
		return AnswersSide{Endpoint: setup.Endpoint{URL: url}}
	}
	plan := setup.AnswersPlan{Positions: 4, Prompts: 1}
	base := AnswersSide{Endpoint: setup.Endpoint{URL: baseURL}}

	_, err := MeasureAnswers(context.Background(), base, side(sim.Config{Personality: sim.LlamaCpp, Answers: sim.Distribution{NoProbs: true}}), plan, nil)
	if err == nil || !strings.Contains(err.Error(), "returned no token probabilities") {
		t.Errorf("no probabilities: %v", err)
	}
	res, err := MeasureAnswers(context.Background(), base, side(sim.Config{Personality: sim.LlamaCpp, Answers: sim.Distribution{MaxProbs: 5}}), plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TopK != 5 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "listed only 5 most likely tokens where 20 were asked") {
		t.Errorf("short lists: top %d, notes %q", res.TopK, res.Notes)
	}
	_, err = MeasureAnswers(context.Background(), base, side(sim.Config{Personality: sim.LlamaCpp, TokensPerWord: 2}), plan, nil)
	if !errors.Is(err, ErrOtherTokenizer) || !strings.Contains(err.Error(), "another model family is not a drift") {
		t.Errorf("another tokenizer: %v", err)
	}
	// The chat route: a server that answers a final assistant message
	// again is said, by what its counts show, or where it counts
	// nothing by its own answer not followed; the OpenAI API itself
	// refuses the continuation's field, and says so.
	for _, tc := range []struct {
		name      string
		base, cfg sim.Config
		want      string
	}{
		{"vLLM not asked to continue", sim.Config{Personality: sim.LlamaCpp}, sim.Config{Personality: sim.VLLM, Answers: sim.Distribution{ChatRestarts: true}},
			"the other setting, along the code answer: the server does not continue a final assistant message (it answers it again from its start), so its chat route cannot be read token by token: given the answer so far, it counted 2 prompt tokens more than the answer's"},
		{"a restarting baseline without counts", sim.Config{Personality: sim.VLLM, NoUsage: true, Answers: sim.Distribution{ChatRestarts: true}}, sim.Config{Personality: sim.LlamaCpp},
			"the baseline: the server does not continue a final assistant message (it answers it again from its start), so its chat route cannot be read token by token: given its own answer so far, its most likely next token was mostly not the one it had chosen there"},
		{"the OpenAI API", sim.Config{Personality: sim.LlamaCpp}, sim.Config{Personality: sim.Strict, Models: []string{"m"}}, "continue_final_message"},
	} {
		_, b := startSim(t, tc.base)
		other := side(tc.cfg)
		if tc.cfg.Personality == sim.Strict {
			other.Model = "m"
		}
		_, err = MeasureAnswers(context.Background(), AnswersSide{Endpoint: setup.Endpoint{URL: b}}, other, plan, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant %q", tc.name, err, tc.want)
		}
		if tc.cfg.Personality != sim.Strict && !errors.Is(err, ErrNoContinuation) {
			t.Errorf("%s: %v is not ErrNoContinuation", tc.name, err)
		}
	}
}

// TestAnswersThroughTheChatRoute: a server with neither llama-server's
// nor Ollama's route (vLLM, SGLang) is read through chat completions
// with logprobs, the answer so far a final assistant message it
// continues (continue_final_message): the same model is within the
// floor against llama-server's ids, and a known drift between two
// models of one vLLM measures exactly what the same two distributions
// measure through llama-server's ids; the note says how tokens were
// told apart. A chat route that lists fewer tokens than asked is said.
func TestAnswersThroughTheChatRoute(t *testing.T) {
	t.Parallel()
	plan := setup.AnswersPlan{Positions: 8, Prompts: 2}
	heavy := sim.Distribution{Drift: 0.8, DriftSeed: 7}
	url := func(cfg sim.Config) setup.Endpoint { _, u := startSim(t, cfg); return setup.Endpoint{URL: u} }
	llama := url(sim.Config{Personality: sim.LlamaCpp})
	ctx := context.Background()
	for _, p := range []sim.Personality{sim.VLLM, sim.SGLang} {
		chat := url(sim.Config{Personality: p, Models: []string{"m", "m-q4"}, Answers: sim.Distribution{ModelDrift: map[string]float64{"m-q4": heavy.Drift}, DriftSeed: heavy.DriftSeed}})
		same, err := MeasureAnswers(ctx, AnswersSide{Endpoint: llama}, AnswersSide{Endpoint: chat, Model: "m"}, plan, nil)
		if err != nil {
			t.Fatalf("%s: llama-server against the chat route: %v", p, err)
		}
		if same.KLBeyond || same.SameTopBeyond || same.Other.KLMean != 0 || same.Other.Positions != plan.Prompts*plan.Positions {
			t.Errorf("%s: the same model: %s (%d positions)", p, same.Line(), same.Other.Positions)
		}
		if !slices.ContainsFunc(same.Notes, func(n string) bool { return strings.HasPrefix(n, "the chat route says no token ids") }) {
			t.Errorf("%s: notes %q: want the bytes said", p, same.Notes)
		}
		byChat, err := MeasureAnswers(ctx, AnswersSide{Endpoint: chat, Model: "m"}, AnswersSide{Endpoint: chat, Model: "m-q4"}, plan, nil)
		if err != nil {
			t.Fatalf("%s: two models of one server: %v", p, err)
		}
		byIDs, err := MeasureAnswers(ctx, AnswersSide{Endpoint: llama}, AnswersSide{Endpoint: url(sim.Config{Personality: sim.LlamaCpp, Answers: heavy})}, plan, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !byChat.KLBeyond || math.Abs(byChat.Other.KLMean-byIDs.Other.KLMean) > 1e-12 || byChat.Other.SameTop != byIDs.Other.SameTop {
			t.Errorf("%s: two models through the chat route: %s; through llama-server's ids: %s", p, byChat.Line(), byIDs.Line())
		}
	}
	short, err := MeasureAnswers(ctx, AnswersSide{Endpoint: llama}, AnswersSide{Endpoint: url(sim.Config{Personality: sim.VLLM, Answers: sim.Distribution{MaxProbs: 5}})}, plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if short.TopK != 5 {
		t.Errorf("a chat route listing 5: top %d, notes %q", short.TopK, short.Notes)
	}
	if _, err := MeasureAnswers(ctx, AnswersSide{Endpoint: llama}, AnswersSide{Endpoint: url(sim.Config{Personality: sim.VLLM, Answers: sim.Distribution{NoProbs: true}})}, plan, nil); err == nil || !strings.Contains(err.Error(), "returned no token probabilities") {
		t.Errorf("a chat route without probabilities: %v", err)
	}
}

// TestAnswersThroughOllama: Ollama says no token ids, so its side is
// read through /api/generate (raw, its template from /api/chat's
// rendering) with tokens told apart by their bytes. The same model on
// llama-server and on Ollama is within the floor; two models of one
// Ollama measure exactly what the same two distributions measure
// through llama-server's ids; a tokenizer that counts the prompt
// otherwise is refused; one that reads the answer's text as other
// tokens from some token on has the answer compared up to there, and
// says so; an Ollama that returns no probabilities is said.
func TestAnswersThroughOllama(t *testing.T) {
	t.Parallel()
	plan := setup.AnswersPlan{Positions: 8, Prompts: 2}
	heavy := sim.Distribution{Drift: 0.8, DriftSeed: 7}
	url := func(cfg sim.Config) setup.Endpoint { _, u := startSim(t, cfg); return setup.Endpoint{URL: u} }
	llama := url(sim.Config{Personality: sim.LlamaCpp})
	ollamaCfg := sim.Config{Personality: sim.Ollama, Models: []string{"soft", "soft-q4"}, Answers: sim.Distribution{ModelDrift: map[string]float64{"soft-q4": heavy.Drift}, DriftSeed: heavy.DriftSeed}}
	ollama := url(ollamaCfg)
	ctx := context.Background()

	same, err := MeasureAnswers(ctx, AnswersSide{Endpoint: llama}, AnswersSide{Endpoint: ollama, Model: "soft"}, plan, nil)
	if err != nil {
		t.Fatalf("llama-server against Ollama: %v", err)
	}
	if same.KLBeyond || same.SameTopBeyond || same.Other.KLMean != 0 || len(same.Reference) != plan.Prompts {
		t.Errorf("the same model on both servers: %s (reference answers %d)", same.Line(), len(same.Reference))
	}
	if !slices.ContainsFunc(same.Notes, func(n string) bool { return strings.Contains(n, "Ollama says no token ids") }) {
		t.Errorf("notes %q: want the bytes said", same.Notes)
	}

	byBytes, err := MeasureAnswers(ctx, AnswersSide{Endpoint: ollama, Model: "soft"}, AnswersSide{Endpoint: ollama, Model: "soft-q4"}, plan, nil)
	if err != nil {
		t.Fatalf("two models of one Ollama: %v", err)
	}
	byIDs, err := MeasureAnswers(ctx, AnswersSide{Endpoint: llama}, AnswersSide{Endpoint: url(sim.Config{Personality: sim.LlamaCpp, Answers: heavy})}, plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !byBytes.KLBeyond || math.Abs(byBytes.Other.KLMean-byIDs.Other.KLMean) > 1e-12 || byBytes.Other.SameTop != byIDs.Other.SameTop {
		t.Errorf("two models of one Ollama: %s; through llama-server's ids: %s", byBytes.Line(), byIDs.Line())
	}
	if len(byBytes.Reference) != 0 || !slices.Equal(byBytes.Compared, []int{plan.Positions, plan.Positions}) {
		t.Errorf("Ollama's baseline keeps reference ids %v (it says none), compared %v", byBytes.Reference, byBytes.Compared)
	}

	other := ollamaCfg
	other.TokensPerWord = 2
	if _, err := MeasureAnswers(ctx, AnswersSide{Endpoint: llama}, AnswersSide{Endpoint: url(other), Model: "soft"}, plan, nil); !errors.Is(err, ErrOtherTokenizer) {
		t.Errorf("another tokenizer on Ollama: %v", err)
	}

	split := ollamaCfg
	split.Answers.Retokenise = 5
	res, err := MeasureAnswers(ctx, AnswersSide{Endpoint: llama}, AnswersSide{Endpoint: url(split), Model: "soft"}, plan, nil)
	if err != nil {
		t.Fatalf("an answer read back as other tokens: %v", err)
	}
	if !slices.Equal(res.Compared, []int{6, 6}) || res.Other.Positions != 12 || res.Other.KLMean != 0 {
		t.Errorf("read back as other tokens from token 7: compared %v, %d positions, %s", res.Compared, res.Other.Positions, res.Line())
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "as other tokens from token 7 on") }) {
		t.Errorf("notes %q: want where the answer was cut said", res.Notes)
	}

	none := ollamaCfg
	none.Answers.NoProbs = true
	if _, err := MeasureAnswers(ctx, AnswersSide{Endpoint: llama}, AnswersSide{Endpoint: url(none), Model: "soft"}, plan, nil); err == nil || !strings.Contains(err.Error(), "returned no token probabilities") {
		t.Errorf("an Ollama without probabilities: %v", err)
	}
}

// TestAnswersLongContext: the set's long context (about 1,230 of the
// simulator's tokens) is read where the server's context holds it and
// its answer, and left out, said, where it does not — on the baseline,
// or on the other setting alone (the others compared as before).
func TestAnswersLongContext(t *testing.T) {
	t.Parallel()
	plan := setup.AnswersPlan{Positions: 4}
	url := func(ctxLen int) setup.Endpoint {
		_, u := startSim(t, sim.Config{Personality: sim.LlamaCpp, ContextLength: ctxLen})
		return setup.Endpoint{URL: u}
	}
	big, small := url(32768), url(1024)
	kinds := func(r *AnswersResult) (out []string) {
		for _, k := range r.Kinds {
			out = append(out, k.Kind)
		}
		return out
	}
	ctx := context.Background()
	res, err := MeasureAnswers(ctx, AnswersSide{Endpoint: big}, AnswersSide{Endpoint: url(32768)}, plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(res); len(got) != len(setup.AnswerPrompts) || got[len(got)-1] != setup.LongContextKind {
		t.Errorf("a large context: kinds %q, want all %d with the long context last", got, len(setup.AnswerPrompts))
	}
	for _, tc := range []struct {
		name        string
		base, other setup.Endpoint
		who         string
	}{
		{"the baseline's context too small", small, big, "the baseline's context of 1024"},
		{"the other setting's context too small", big, small, "the other setting's context of 1024"},
	} {
		res, err := MeasureAnswers(ctx, AnswersSide{Endpoint: tc.base}, AnswersSide{Endpoint: tc.other}, plan, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := kinds(res); len(got) != len(setup.AnswerPrompts)-1 || slices.Contains(got, setup.LongContextKind) {
			t.Errorf("%s: kinds %q, want all but the long context", tc.name, got)
		}
		if !slices.ContainsFunc(res.Notes, func(n string) bool {
			return strings.Contains(n, "the long context prompt was left out") && strings.Contains(n, tc.who)
		}) {
			t.Errorf("%s: notes %q, want the long context's leaving out said", tc.name, res.Notes)
		}
	}
}

// TestAnswersWhereGreedyAnswersPart: a setting whose top token changes
// somewhere parts from the baseline's greedy answer at the first such
// position of each prompt, and nowhere in a prompt whose top tokens all
// agree; the document says where.
func TestAnswersWhereGreedyAnswersPart(t *testing.T) {
	t.Parallel()
	_, base := startSim(t, sim.Config{Personality: sim.LlamaCpp})
	_, far := startSim(t, sim.Config{Personality: sim.LlamaCpp, Answers: sim.Distribution{Drift: 4, DriftSeed: 3}})
	plan := setup.AnswersPlan{Positions: 10, Prompts: 4}
	res, err := MeasureAnswers(context.Background(), AnswersSide{Endpoint: setup.Endpoint{URL: base}}, AnswersSide{Endpoint: setup.Endpoint{URL: far}}, plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	at, parted := 0, 0
	for pi, n := range res.Compared {
		want := 0
		for i, same := range res.Other.Same[at : at+n] {
			if !same {
				want = i + 1
				break
			}
		}
		at += n
		if got := res.Kinds[pi].PartsAt; got != want {
			t.Errorf("%s: parts at %d, want %d (the first top token not the baseline's)", res.Kinds[pi].Kind, got, want)
		}
		if want > 0 {
			parted++
		}
	}
	if parted == 0 {
		t.Fatalf("a drift of 4 changed no top token: %s", res.Line())
	}
}
