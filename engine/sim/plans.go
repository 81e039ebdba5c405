package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync/atomic"
	"time"
)

// What the simulator adds for the plans beyond the Kovara method: the
// speculative-decoding model and its /metrics counters, SGLang's names,
// thinking that chat_template_kwargs can turn off.

// SpecDecode configures simulated speculative decoding. Every decode step
// takes one TokenInterval: a draft of DraftTokens tokens is proposed and
// checked position by position, each accepted with probability Acceptance
// until the first rejection; the step emits the accepted tokens plus the
// one the target model adds, back to back. So the expected acceptance rate
// is (p + p² + … + pᵏ)/k and the expected mean acceptance length is
// 1 + p + p² + … + pᵏ (ExpectedRate, ExpectedLength), before the clamp at
// the end of a completion.
type SpecDecode struct {
	DraftTokens int     // k; default 3
	Acceptance  float64 // p, per draft position; 0 to 1, default 0.7; negative: 0 (a drafter never agreed with)
}

func (d *SpecDecode) withDefaults() *SpecDecode {
	if d == nil {
		return nil
	}
	c := *d
	if c.DraftTokens <= 0 {
		c.DraftTokens = 3
	}
	switch {
	case c.Acceptance < 0:
		c.Acceptance = 0
	case c.Acceptance == 0:
		c.Acceptance = 0.7
	}
	c.Acceptance = min(c.Acceptance, 1)
	return &c
}

// ExpectedLength is the mean number of tokens a step emits.
func (d SpecDecode) ExpectedLength() float64 {
	c := d.withDefaults()
	sum, p := 0.0, 1.0
	for i := 0; i < c.DraftTokens; i++ {
		p *= c.Acceptance
		sum += p
	}
	return 1 + sum
}

// ExpectedRate is the expected share of draft tokens accepted.
func (d SpecDecode) ExpectedRate() float64 {
	c := d.withDefaults()
	return (d.ExpectedLength() - 1) / float64(c.DraftTokens)
}

// specCounters are vLLM's lifetime speculative-decoding counters.
type specCounters struct {
	drafts, draftTokens, accepted atomic.Int64
	perPos                        [16]atomic.Int64 // accepted tokens per draft position
}

// nextDeadline is when token i (counted from the end: remaining tokens
// left, this one included) is due, given the previous token's deadline.
// Without speculative decoding every token is one interval later; with it,
// a new step begins only when the previous step's tokens are used up.
func (ru *run) nextDeadline(deadline time.Time, remaining int) time.Time {
	if ru.burst > 0 {
		ru.burst--
		return deadline
	}
	deadline = deadline.Add(ru.interval())
	if ru.spec != nil {
		ru.burst = ru.draftStep(remaining) - 1
	}
	return deadline
}

// draftStep runs one speculative step and returns how many tokens it
// emits (at least 1, at most remaining). As llama.cpp does, it drafts no
// more tokens than the answer has room for after the step's own, and the
// last token is a plain step with nothing to draft.
func (ru *run) draftStep(remaining int) int {
	cfg := ru.s.cfg.SpecDecode
	k := min(cfg.DraftTokens, remaining-1)
	if k <= 0 {
		return 1
	}
	a := 0
	for a < k && ru.spec.Float64() < cfg.Acceptance {
		a++
	}
	ru.draftN += k
	ru.draftAccepted += a
	c := &ru.s.spec
	c.drafts.Add(1)
	c.draftTokens.Add(int64(k))
	c.accepted.Add(int64(a))
	for i := 0; i < a && i < len(c.perPos); i++ {
		c.perPos[i].Add(1)
	}
	return a + 1
}

// textKey hashes a message's text: the natural-stop and draft key of an
// unnumbered request.
func textKey(parts textContent) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64() >> 1 // non-negative as an int64
}

// thinkingOff reports whether chat_template_kwargs asks for no thinking.
func thinkingOff(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	var kw struct {
		EnableThinking *bool `json:"enable_thinking"`
		Thinking       *bool `json:"thinking"`
	}
	if json.Unmarshal(raw, &kw) != nil {
		return false
	}
	return (kw.EnableThinking != nil && !*kw.EnableThinking) || (kw.Thinking != nil && !*kw.Thinking)
}

// serverInfo is SGLang's /get_server_info: its server arguments, a few
// scheduler facts and the version.
func (s *Server) serverInfo() []byte {
	return jsonBytes(map[string]any{
		"model_path":           s.cfg.Models[0],
		"served_model_name":    s.cfg.Models[0],
		"context_length":       s.cfg.ContextLength,
		"max_running_requests": s.cfg.BatchCapacity,
		"max_total_num_tokens": s.cfg.KVCacheTokens,
		"speculative_algorithm": func() any {
			if s.cfg.SpecDecode != nil {
				return "EAGLE"
			}
			return nil
		}(),
		"version": s.cfg.Version,
	})
}

// sglangMetrics writes SGLang's gauges (and its acceptance-length gauge
// when decoding speculatively).
func (s *Server) sglangMetrics(metric func(name, typ, help, labels string, v float64), running, waiting int, kv float64) {
	lab := `{model_name=` + strconv.Quote(s.cfg.Models[0]) + `}`
	metric("sglang:num_running_reqs", "gauge", "Requests running.", lab, float64(running))
	metric("sglang:num_queue_reqs", "gauge", "Requests waiting in the queue.", lab, float64(waiting))
	metric("sglang:token_usage", "gauge", "Share of the token pool in use.", lab, kv)
	metric("sglang:prompt_tokens_total", "counter", "Prompt tokens processed in total.", lab, float64(s.promptTotal.Load()))
	metric("sglang:generation_tokens_total", "counter", "Tokens generated in total.", lab, float64(s.genTotal.Load()))
	metric("sglang:cached_tokens_total", "counter", "Prompt tokens served from the prefix cache, by source.",
		lab[:len(lab)-1]+`,cache_source="device"}`, float64(s.cachedTotal.Load()))
	if s.cfg.SpecDecode != nil {
		length := 1.0
		if d := s.spec.drafts.Load(); d > 0 {
			length += float64(s.spec.accepted.Load()) / float64(d)
		}
		metric("sglang:spec_accept_length", "gauge", "Mean speculative acceptance length.", lab, length)
		rate := 0.0
		if t := s.spec.draftTokens.Load(); t > 0 {
			rate = float64(s.spec.accepted.Load()) / float64(t)
		}
		metric("sglang:spec_accept_rate", "gauge", "Mean speculative acceptance rate.", lab, rate)
	}
}

// specMetrics writes the speculative-decoding counters when decoding is
// speculative, under prefix ("vllm:" or "llamacpp:", which use the same
// names), with labels lab ("" or "{…}").
func (s *Server) specMetrics(b *bytes.Buffer, prefix, lab string) {
	cfg := s.cfg.SpecDecode
	if cfg == nil {
		return
	}
	c := &s.spec
	counter := func(name, help string, v int64) {
		name = prefix + name
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s counter\n%s%s %d\n", name, help, name, name, lab, v)
	}
	counter("spec_decode_num_drafts_total", "Speculative steps proposed.", c.drafts.Load())
	counter("spec_decode_num_draft_tokens_total", "Draft tokens proposed.", c.draftTokens.Load())
	counter("spec_decode_num_accepted_tokens_total", "Draft tokens accepted.", c.accepted.Load())
	name := prefix + "spec_decode_num_accepted_tokens_per_pos_total"
	fmt.Fprintf(b, "# HELP %s Draft tokens accepted at each position.\n# TYPE %s counter\n", name, name)
	inner := ""
	if lab != "" {
		inner = lab[1:len(lab)-1] + ","
	}
	for i := 0; i < cfg.DraftTokens && i < len(c.perPos); i++ {
		fmt.Fprintf(b, "%s{%sposition=\"%d\"} %d\n", name, inner, i, c.perPos[i].Load())
	}
}

// SpecCounters returns the speculative-decoding counters as /metrics
// shows them: steps drafted, draft tokens proposed, draft tokens accepted.
func (s *Server) SpecCounters() (drafts, draftTokens, accepted int64) {
	return s.spec.drafts.Load(), s.spec.draftTokens.Load(), s.spec.accepted.Load()
}
