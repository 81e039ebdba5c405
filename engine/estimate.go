package engine

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
)

// TestedSpeed is what one short stream, alone on the server, measured of
// it: the endpoint Test's (and kovara-bench run's, before its warmup). The
// plan estimate is made from it (EstimatePlan), in the app before Run and
// in the CLI before the warmup.
type TestedSpeed struct {
	// PromptTokens is the measuring prompt's length (the server's count,
	// else an estimate from its words); TTFT its first token.
	PromptTokens int           `json:"prompt_tokens"`
	TTFT         time.Duration `json:"ttft"`
	// DecodeTPS is the answer's tokens after the first over the time
	// they took.
	DecodeTPS float64 `json:"decode_tps"`
}

// Usable says whether the speed can estimate a plan.
func (s TestedSpeed) Usable() bool { return s.DecodeTPS > 0 && s.TTFT > 0 }

// String says the speed in words: "38.2 tok/s for one user, first token
// in 0.4 s for a 210-token prompt".
func (s TestedSpeed) String() string {
	line := fmt.Sprintf("%.1f tok/s for one user, first token in %s", s.DecodeTPS, results.Seconds(float64(s.TTFT)/float64(time.Millisecond)))
	if s.PromptTokens > 0 {
		line += fmt.Sprintf(" for a %d-token prompt", s.PromptTokens)
	}
	return line
}

// requestTime is one request of in prompt and out answer tokens at the
// tested speed: the first token at the tested TTFT, scaled with the prompt
// (the measured TTFT includes the server's fixed overhead, so a long prompt
// is if anything overestimated), then out-1 tokens at the decode rate.
func (s TestedSpeed) requestTime(in, out int) time.Duration {
	first := float64(s.TTFT)
	if s.PromptTokens > 0 && in > s.PromptTokens {
		first *= float64(in) / float64(s.PromptTokens)
	}
	return time.Duration(first + float64(max(out-1, 0))/s.DecodeTPS*float64(time.Second))
}

// estimateCalibrations is how many prompt-length requests (answers of one
// token) calibration usually takes.
const estimateCalibrations = 2

// EstimatePlan is how long plan takes on a server of speed s serving
// slots requests at once (0: unknown, each level's users at once): its
// calibration, its warmup and every level, each wave of slots requests at
// the tested speed. A server whose answers slow down as more run at once
// takes longer than this; one that batches well, about this. 0 when s
// cannot say.
func EstimatePlan(plan Plan, s TestedSpeed, slots int) time.Duration {
	if !s.Usable() || len(plan.Concurrency) == 0 {
		return 0
	}
	one := s.requestTime(plan.InputTokens, plan.OutputTokens)
	waves := func(requests, users int) time.Duration {
		if slots > 0 {
			users = min(users, slots)
		}
		users = max(users, 1)
		return time.Duration((requests+users-1)/users) * one
	}
	total := estimateCalibrations * s.requestTime(plan.InputTokens, 1)
	if plan.Warmup > 0 {
		total += waves(plan.Warmup, min(plan.Warmup, maxConcurrency(plan)))
	}
	for _, c := range plan.Concurrency {
		total += waves(plan.Requests, c)
	}
	return total
}

// EstimateSlots is how many requests at once the estimate takes a server
// to serve, from its detection: what it says, Ollama's default of one
// when it says nothing, else 0 (each level's users at once).
func EstimateSlots(d *results.Detection) int {
	switch {
	case d == nil:
		return 0
	case d.ParallelSlots > 0:
		return d.ParallelSlots
	case d.Family == results.FamilyOllama:
		return 1
	}
	return 0
}

// FormatDuration says an estimated length of time in round words: "under
// a minute", "about 12 min", "about 4 h 20 min".
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < 90*time.Minute:
		return fmt.Sprintf("about %d min", int(d.Round(time.Minute)/time.Minute))
	}
	h := int(d / time.Hour)
	m := int((d - time.Duration(h)*time.Hour).Round(time.Minute) / time.Minute)
	if m == 60 {
		h, m = h+1, 0
	}
	if m == 0 {
		return fmt.Sprintf("about %d h", h)
	}
	return fmt.Sprintf("about %d h %d min", h, m)
}

// Measuring stream of the speed test: long enough a prompt for its first
// token to include a prefill, long enough an answer for a rate, short
// enough for a 5 tok/s server to answer in seconds.
const (
	speedWords     = 100
	speedMaxTokens = 16
)

// speedStreams is how many streams the speed test measures, after one it
// does not: a server's first answers after it starts or loads its model
// are slower than the rest (a model file mapped into memory is read from
// disk by its first passes; a backend sets up its buffers), and on
// Ollama the Test's speed read from the first stream after the probe
// was 16 times below what the run then did (docs/servers.md). Of the
// measured streams the fastest stands: a slow one is the server's or
// this machine's hiccup, never its steady speed.
const speedStreams = 2

// measureSpeed sends short streams with the accepted request form (after
// the probe, so a model the probe loaded is loaded) and reads the
// server's steady speed from them (speedStreams); ok is false when none
// says anything usable. A fresh seed each time: a prompt the server has
// cached would answer its first token at once.
func (r *runner) measureSpeed(ctx context.Context) (TestedSpeed, bool) {
	cn := r.newConn()
	defer cn.close()
	o := r.opts
	o.model, o.maxTokens, o.words = r.model, speedMaxTokens, speedWords
	seed := r.plan.Seed ^ time.Now().UnixNano()
	var best TestedSpeed
	found := false
	for i := range speedStreams + 1 {
		o.seed = seed + int64(i)
		out := cn.do(ctx, o, prompt.ProbeRequest, checkTimeout(r.ep))
		if ctx.Err() != nil {
			return TestedSpeed{}, false
		}
		sp, ok := speedOf(out, speedWords)
		if i == 0 || !ok {
			continue // the warming stream, or one that said nothing
		}
		if !found {
			best, found = sp, true
			continue
		}
		best.TTFT = min(best.TTFT, sp.TTFT)
		best.DecodeTPS = max(best.DecodeTPS, sp.DecodeTPS)
	}
	return best, found
}

// estimate tells the observer how long the plan takes at the server's
// tested speed, when it asked (Observer.Estimate).
func (r *runner) estimate(ctx context.Context) {
	if r.obs.Estimate == nil || !r.estimates {
		return
	}
	sp, ok := r.measureSpeed(ctx)
	if !ok {
		r.obs.Estimate("the server's speed could not be measured, so the plan's length is not estimated")
		return
	}
	r.obs.Estimate(EstimateLine(r.plan, sp, EstimateSlots(r.detection)))
}

// speedOf reads a finished stream's speed: its first token, and its
// tokens after the first over the time from the first to the last.
func speedOf(o outcome, words int) (TestedSpeed, bool) {
	if o.class != "" || o.interrupted || o.ttft <= 0 {
		return TestedSpeed{}, false
	}
	n := o.chunks
	if o.hasUsage && o.complTok > 0 {
		n = o.complTok
	}
	span := o.lastTok - (o.start + o.ttft)
	if o.lastTok <= 0 {
		span = o.end - (o.start + o.ttft)
	}
	if n < 2 || span <= 0 {
		return TestedSpeed{}, false
	}
	s := TestedSpeed{TTFT: o.ttft, DecodeTPS: float64(n-1) / span.Seconds(), PromptTokens: o.promptTok}
	if s.PromptTokens <= 0 {
		s.PromptTokens = int(math.Round(float64(words) * 1.3)) // English words to tokens, roughly
	}
	return s, true
}

// PlanSize says a plan's size in a few words: "concurrency 1,8,32 × 100
// requests of 1024 prompt and 256 answer tokens".
func PlanSize(p Plan) string {
	return fmt.Sprintf("concurrency %s × %d requests of %d prompt and %d answer tokens", FormatLevels(p.Concurrency), p.Requests, p.InputTokens, p.OutputTokens)
}

// EstimateLine says how long plan takes at s, for the CLI before a run
// and under the app's plan: "this plan takes about 12 min at the tested
// speed (38.2 tok/s for one user, …)"; "" when s cannot say.
func EstimateLine(plan Plan, s TestedSpeed, slots int) string {
	d := EstimatePlan(plan, s, slots)
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf("this plan takes %s at the tested speed (%s)", FormatDuration(d), s)
}
