package engine

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// TestedSpeed is what short streams measured of a server: the endpoint
// Test's (and kovara-bench run's, before its warmup). The plan estimate
// is made from it (EstimatePlan), in the app before Run and in the CLI
// before the warmup. One short stream alone gives its first token and
// decode rate; where it was quick to do, one stream of a plan-length
// prompt says how both grow with the prompt, and streams sent together
// how much each slows when the server serves several at once (a CPU
// server shares its cores: at two at once each took twice as long on
// llama-server -np 2 on two cores, where the short stream alone had made
// the default plan look half as long as it ran).
type TestedSpeed struct {
	// PromptTokens is the measuring prompt's length (the server's count,
	// else an estimate from its words); TTFT its first token.
	PromptTokens int           `json:"prompt_tokens"`
	TTFT         time.Duration `json:"ttft"`
	// DecodeTPS is the answer's tokens after the first over the time
	// they took.
	DecodeTPS float64 `json:"decode_tps"`
	// LongPromptTokens, LongTTFT and LongDecodeTPS are the same of one
	// stream of a plan-length prompt, alone; 0 when not measured.
	LongPromptTokens int           `json:"long_prompt_tokens,omitempty"`
	LongTTFT         time.Duration `json:"long_ttft,omitempty"`
	LongDecodeTPS    float64       `json:"long_decode_tps,omitempty"`
	// Together is how many short streams were sent at once, and
	// TogetherSlowdown how much longer each took on average than the
	// fastest alone; 0 when not measured.
	Together         int     `json:"together,omitempty"`
	TogetherSlowdown float64 `json:"together_slowdown,omitempty"`
}

// Usable says whether the speed can estimate a plan.
func (s TestedSpeed) Usable() bool { return s.DecodeTPS > 0 && s.TTFT > 0 }

// String says the speed in words: "38.2 tok/s for one user, first token
// in 0.4 s for a 210-token prompt, 2.9 s for 1,050; 2 at once each took
// 1.9× as long".
func (s TestedSpeed) String() string {
	line := fmt.Sprintf("%.1f tok/s for one user, first token in %s", s.DecodeTPS, results.Seconds(float64(s.TTFT)/float64(time.Millisecond)))
	if s.PromptTokens > 0 {
		line += fmt.Sprintf(" for a %d-token prompt", s.PromptTokens)
	}
	if s.long() {
		line += fmt.Sprintf(", %s for %d", results.Seconds(float64(s.LongTTFT)/float64(time.Millisecond)), s.LongPromptTokens)
	}
	if s.Together > 1 && s.TogetherSlowdown > 0 {
		line += fmt.Sprintf("; %d at once each took %.1f× as long", s.Together, s.TogetherSlowdown)
	}
	return line
}

// long says whether a plan-length prompt was measured.
func (s TestedSpeed) long() bool {
	return s.LongPromptTokens > s.PromptTokens && s.PromptTokens > 0 && s.LongTTFT > 0 && s.LongDecodeTPS > 0
}

// requestTime is one request of in prompt and out answer tokens alone on
// the server at the tested speed. Its first token: with a plan-length
// prompt measured, on the line through the two measured prompts (a
// server's fixed overhead and its per-token prefill; a prompt longer than
// both is extrapolated on it); else the tested TTFT scaled with the
// prompt (which counts the fixed overhead with every token, so a long
// prompt is if anything overestimated). Then out-1 tokens at the decode
// rate of the nearer measured depth, linear in the time per token
// between them.
func (s TestedSpeed) requestTime(in, out int) time.Duration {
	first := float64(s.TTFT)
	perToken := 1 / s.DecodeTPS
	switch {
	case s.long() && in > s.PromptTokens:
		share := float64(in-s.PromptTokens) / float64(s.LongPromptTokens-s.PromptTokens)
		first += max(float64(s.LongTTFT-s.TTFT), 0) * share
		perToken += (1/s.LongDecodeTPS - perToken) * min(share, 1)
	case s.PromptTokens > 0 && in > s.PromptTokens:
		first *= float64(in) / float64(s.PromptTokens)
	}
	return time.Duration(first + float64(max(out-1, 0))*perToken*float64(time.Second))
}

// together is how many times longer each of users requests takes when
// they run at once than one alone: 1 + a(users-1), the a measured by the
// streams sent together (0 where they were not, as for a server that
// batches perfectly). A server that shares its compute among its
// sequences (a CPU) has a near 1; one with compute to spare (a GPU at
// small batches) near 0.
func (s TestedSpeed) together(users int) float64 {
	if s.Together < 2 || s.TogetherSlowdown <= 0 || users < 2 {
		return 1
	}
	a := min(max((s.TogetherSlowdown-1)/float64(s.Together-1), 0), maxTogetherSlope)
	return 1 + a*float64(users-1)
}

// maxTogetherSlope bounds the slowdown per added user read from the
// streams sent together: more than that is a hiccup of the server or of
// this machine during them, not its way of serving.
const maxTogetherSlope = 1.5

// estimateCalibrations is how many prompt-length requests (answers of one
// token) calibration usually takes.
const estimateCalibrations = 2

// EstimatePlan is how long plan takes on a server of speed s serving
// slots requests at once (0: unknown, each level's users at once): its
// calibration, its warmup and every level, each wave of slots requests
// taking one request's time at the tested speed, stretched by how much
// requests slowed when sent together (TestedSpeed.together). 0 when s
// cannot say.
func EstimatePlan(plan setup.KovaraPlan, s TestedSpeed, slots int) time.Duration {
	if !s.Usable() || len(plan.Concurrency) == 0 {
		return 0
	}
	one := s.requestTime(plan.InputTokens, plan.OutputTokens)
	waves := func(requests, users int) time.Duration {
		if slots > 0 {
			users = min(users, slots)
		}
		users = max(users, 1)
		wave := time.Duration(float64(one) * s.together(users))
		return time.Duration((requests+users-1)/users) * wave
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
// server's steady speed from them (speedStreams); then, where each is
// quick, one stream of the plan's prompt length (measureLong) and short
// streams sent together (measureTogether). ok is false when the short
// streams say nothing usable. A fresh seed each time: a prompt the
// server has cached would answer its first token at once.
func (r *runner) measureSpeed(ctx context.Context) (TestedSpeed, bool) {
	cn := r.newConn()
	defer cn.close()
	o := r.opts
	o.model, o.maxTokens, o.words = r.model, speedMaxTokens, speedWords
	seed := r.plan.Seed ^ time.Now().UnixNano()
	var best TestedSpeed
	var alone time.Duration // the fastest short stream's whole time
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
			best, alone, found = sp, out.end-out.start, true
			continue
		}
		best.TTFT = min(best.TTFT, sp.TTFT)
		best.DecodeTPS = max(best.DecodeTPS, sp.DecodeTPS)
		alone = min(alone, out.end-out.start)
	}
	if !found {
		return TestedSpeed{}, false
	}
	seed += speedStreams + 1
	r.measureLong(ctx, cn, o, seed, &best)
	r.measureTogether(ctx, o, seed+1, alone, &best)
	if ctx.Err() != nil {
		return TestedSpeed{}, false
	}
	return best, true
}

// longTTFTBudget is the most a plan-length prompt's first token may take,
// judged from the short stream's, for the speed test to send one: on a
// slow server the Test would wait too long for it, and the estimate
// scales the short prompt's first token instead.
const longTTFTBudget = 5 * time.Second

// measureLong sends one stream of about the plan's prompt length when it
// is much longer than the short stream's and quick enough
// (longTTFTBudget), and keeps its first token and decode rate in sp: on
// two CPU cores a 1,048-token prompt's first token took 287 ms where the
// short stream's scaled said 84 ms, and its decode ran at 454 tok/s
// against the short stream's 786 (llama-server b4748, the tiny model).
func (r *runner) measureLong(ctx context.Context, cn *conn, o requestOpts, seed int64, sp *TestedSpeed) {
	in := r.plan.InputTokens
	if in < 2*sp.PromptTokens || sp.PromptTokens <= 0 {
		return
	}
	if guess := time.Duration(float64(sp.TTFT) * float64(in) / float64(sp.PromptTokens)); guess > longTTFTBudget {
		return
	}
	o.words = max(speedWords*in/sp.PromptTokens, speedWords+1)
	o.maxTokens = min(max(int(sp.DecodeTPS*longDecodeTime.Seconds()), speedMaxTokens), longMaxTokens)
	o.seed = seed
	out := cn.do(ctx, o, prompt.ProbeRequest, checkTimeout(r.ep))
	long, ok := speedOf(out, o.words)
	if !ok || long.PromptTokens <= sp.PromptTokens {
		return
	}
	// A token is never computed faster over a longer context: a faster
	// reading is the short stream's noise (16 tokens of a fast server
	// come in tens of milliseconds, in bursts on Ollama).
	sp.LongPromptTokens, sp.LongTTFT, sp.LongDecodeTPS = long.PromptTokens, long.TTFT, min(long.DecodeTPS, sp.DecodeTPS)
}

// The plan-length stream's answer: as many tokens as the short stream's
// rate makes in longDecodeTime, from speedMaxTokens to longMaxTokens. A
// rate read from 16 tokens that came in 40 ms was 440 tok/s on Ollama
// where its answers of 256 ran at 230.
const (
	longDecodeTime = time.Second
	longMaxTokens  = 96
)

// togetherStreams is the most short streams the speed test sends at
// once: enough to see whether the server's requests slow each other,
// few enough to cost a moment.
const togetherStreams = 4

// measureTogether sends short streams at once, as many as the server
// serves at once (togetherStreams when it does not say; none when it
// serves one, or the plan never has two users), and keeps in sp how much
// longer each took on average than alone the fastest short stream did.
// Any that fails leaves sp as it was.
func (r *runner) measureTogether(ctx context.Context, o requestOpts, seed int64, alone time.Duration, sp *TestedSpeed) {
	n := EstimateSlots(r.detection)
	if n == 0 || n > togetherStreams {
		n = togetherStreams
	}
	if len(r.plan.Concurrency) > 0 {
		n = min(n, maxConcurrency(r.plan))
	}
	if n < 2 || alone <= 0 || ctx.Err() != nil {
		return
	}
	outs := make([]outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cn := r.newConn()
			defer cn.close()
			o := o
			o.seed = seed + int64(i)
			outs[i] = cn.do(ctx, o, prompt.ProbeRequest, checkTimeout(r.ep))
		}()
	}
	wg.Wait()
	var sum time.Duration
	for _, out := range outs {
		if _, ok := speedOf(out, speedWords); !ok {
			return
		}
		sum += out.end - out.start
	}
	sp.Together = n
	sp.TogetherSlowdown = float64(sum) / float64(n) / float64(alone)
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
func PlanSize(p setup.KovaraPlan) string {
	return fmt.Sprintf("concurrency %s × %d requests of %d prompt and %d answer tokens", FormatLevels(p.Concurrency), p.Requests, p.InputTokens, p.OutputTokens)
}

// EstimateLine says how long plan takes at s, for the CLI before a run
// and under the app's plan: "this plan takes about 12 min at the tested
// speed (38.2 tok/s for one user, …)"; "" when s cannot say.
func EstimateLine(plan setup.KovaraPlan, s TestedSpeed, slots int) string {
	d := EstimatePlan(plan, s, slots)
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf("this plan takes %s at the tested speed (%s)", FormatDuration(d), s)
}
