package setup

import (
	"strings"
	"time"

	"github.com/kovara/desktop/engine/prompt"
)

// AnswerPrompt is one prompt of the answers set, with the kind of use it
// stands for.
type AnswerPrompt struct {
	Kind, Text string
}

// AnswerPrompts are the fixed prompts, one for each way people use a
// model that a setting may treat differently (docs/method.md §14); the
// long context last, so that fewer prompts leave it out first.
var AnswerPrompts = []AnswerPrompt{
	{"code", "Write a Python function that returns the n-th Fibonacci number, with a docstring."},
	{"json", "Give a JSON object with the fields name, age and city for a made-up person, and nothing else."},
	{"prose", "Explain in three sentences why the sky is blue."},
	{"reasoning", "A train leaves at 9:40 and arrives at 13:05. How long is the journey? Think step by step."},
	{"french", "Traduis en français : the cat sleeps on the sofa while the rain falls."},
	{LongContextKind, longContextPrompt()},
}

// LongContextKind is the prompt kind of the long context.
const LongContextKind = "long context"

// longContextWords is the long context's filler: about 1,550 tokens on
// a Llama-family tokenizer, so that the prompt and an answer fit a
// context of 2,048 (llama-server -c 4096 -np 2 gives each slot that).
const longContextWords = 1200

// longContextPrompt is a fact, a long text of the synthetic generator's
// words (kovara-synthetic-v1, a fixed seed and request) and a question
// about the fact: what is read at its answer has attended across the
// whole context, where a quantised KV cache, flash attention or a RoPE
// setting differ most.
func longContextPrompt() string {
	_, filler, _ := strings.Cut(prompt.Text(48, 0, longContextWords), ": ")
	return "Remember this: the locker code is 7291 and the locker is in the west hall.\n\n" + filler +
		"\n\nWhat is the locker code given at the very start, and where is the locker? Answer in one sentence."
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

// WithDefaults fills what is left zero.
func (p AnswersPlan) WithDefaults() AnswersPlan {
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
	p = p.WithDefaults()
	return p.Prompts * (1 + 2*p.Positions)
}

// ReferenceRequests and ReadRequests are a settings comparison's share of
// Requests: the first setting's reference and floor, and each other
// setting's reading.
func (p AnswersPlan) ReferenceRequests() int {
	p = p.WithDefaults()
	return p.Prompts * (1 + p.Positions)
}

// ReadRequests: see ReferenceRequests.
func (p AnswersPlan) ReadRequests() int {
	p = p.WithDefaults()
	return p.Prompts * p.Positions
}

// AnswerPromptsVersion names the fixed prompt set: figures of two sets
// are not comparable (v1 had no long context).
const AnswerPromptsVersion = "kovara-answers-v2"
