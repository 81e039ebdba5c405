package engine

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// calibrationTolerance is how close the server's prompt_tokens must come to
// the target: 1 %, and never tighter than ±2 tokens.
func calibrationTolerance(target int) float64 {
	return math.Max(2, 0.01*float64(target))
}

// calibrate is step 3. With usage it fits the word count to input_tokens in
// at most four max_tokens=1 requests; without usage it uses one word per
// requested token and says the length is unknown. A calibration that
// meets the server's context — an attempt refused for it, or no prompt
// near the target that leaves room for the answers — refuses the plan
// before warmup (a *PlanError with a *ContextError naming the largest
// input that fits).
func (r *runner) calibrate(ctx context.Context) error {
	target := r.plan.InputTokens
	cal := &results.Calibration{TargetTokens: target, Attempts: []results.CalibrationAttempt{}}
	r.file.Local.Calibration = cal
	if !r.usage {
		r.opts.words, cal.Words = target, target
		return nil
	}
	r.phase(PhaseCalibrate)
	tol := calibrationTolerance(target)

	// The probe's prompt is a free first point: its words are mostly one
	// token each, so what is left over estimates the instruction and the
	// chat template.
	var pts []point
	w := target
	overhead := 0
	if p := r.probeOut.promptTok; p > 0 {
		pts = append(pts, point{probeWords, p})
		overhead = max(p-probeWords, 0)
		w = target - overhead
	}
	// Near the context, a first guess of a token a word could overshoot
	// it on a tokenizer that makes more tokens than words (1.29 on a
	// phi-3 vocabulary): start where even maxTokensPerWord fits, and let
	// the line through the points find the rest.
	window := r.contextLength()
	if window > 0 {
		w = min(w, int(float64(window-overhead-1)/maxTokensPerWord))
	}
	w = max(w, 1)

	cn := r.newConn()
	defer cn.close()
	opts := r.opts
	opts.maxTokens = 1
	best := -1
	met := contextMet{window: window}
	// A connection that fails is tried again without using up one of the
	// attempts (each try keeps its own request number), up to a few
	// times: calibration is about the server's tokenizer, not its sockets.
	lost := 0
	// Where the server counts tokens (tokenize.go), each attempt after the
	// first is aimed at the target for its own prompt; overhead is what
	// the chat request adds to the words' tokens (added; -1 until known).
	var tc *tokenCounter
	if len(opts.messages) == 0 && opts.text == "" {
		tc = r.newTokenCounter()
	}
	if tc != nil {
		defer tc.close()
	}
	added := -1
	for i := 0; i < prompt.CalibrationAttempts; {
		opts.words = w
		out := cn.do(ctx, opts, prompt.CalibrationRequest(i), checkTimeout(r.ep))
		if out.interrupted {
			return ErrInterrupted
		}
		if (out.class == ClassConnection || out.class == ClassTimeout) && lost < calibrationConnRetries {
			lost++
			r.obs.logf("calibration request %d: %s; trying it again", i+1, out.msg)
			continue
		}
		if tokens, holds, ok := contextRefusal(out.class, out.msg); ok {
			// The prompt did not fit: a point when the server said how
			// long it was, and never again this many words.
			i++
			met.refused(w, tokens, holds, refusalWords(out.class, out.msg))
			r.obs.logf("calibration request %d: %d words were refused for the server's context (%s)", i, w, out.msg)
			if tokens > 0 {
				cal.Attempts = append(cal.Attempts, results.CalibrationAttempt{Words: w, PromptTokens: tokens, Refused: true})
				pts = append(pts, point{w, tokens})
				w = min(nextWords(pts, target), w-1)
			} else {
				w = w * 2 / 3
			}
			w = max(w, 1)
			continue
		}
		if !out.ok() || !out.hasUsage || out.promptTok <= 0 {
			msg := out.msg
			if out.class == "" {
				msg = "no prompt_tokens in its usage"
			}
			r.warn("calibration request %d failed (%s): the prompt length is estimated, not measured", i+1, msg)
			break
		}
		i++
		cal.Attempts = append(cal.Attempts, results.CalibrationAttempt{Words: w, PromptTokens: out.promptTok})
		if ce := truncated(cal.Attempts, target, r.plan.OutputTokens, r.detection); ce != nil {
			// Every prompt would be cut: no run on the wrong length.
			return &PlanError{Err: ce}
		}
		d := math.Abs(float64(out.promptTok - target))
		if best < 0 || d < math.Abs(float64(cal.Attempts[best].PromptTokens-target)) {
			best = len(cal.Attempts) - 1
		}
		if d <= tol {
			cal.Converged = true
			break
		}
		pts = append(pts, point{w, out.promptTok})
		next := nextWords(pts, target)
		if next == w { // always move toward the target
			if out.promptTok < target {
				next++
			} else {
				next--
			}
		}
		w = min(max(next, 1), 8*target+64)
		if tc != nil && i < prompt.CalibrationAttempts {
			if c, err := tc.count(ctx, prompt.Text(opts.seed, prompt.CalibrationRequest(i-1), cal.Attempts[len(cal.Attempts)-1].Words)); err == nil {
				added = out.promptTok - c
			} else {
				r.obs.logf("calibration: the server's /tokenize did not count (%v); calibrating from its answers alone", err)
				tc = nil
			}
		}
		if tc != nil && added >= 0 {
			perWord := float64(out.promptTok-added) / float64(max(cal.Attempts[len(cal.Attempts)-1].Words, 1))
			if aimed, ok := tc.aim(ctx, opts.seed, prompt.CalibrationRequest(i), w, target, added, perWord); ok {
				w = min(max(aimed, 1), 8*target+64)
				cal.Tokenized = true
			}
		}
		if met.below > 0 {
			w = min(w, met.below-1)
		}
	}
	if ce := met.refuse(cal, best, r.plan, pts, r.detection); ce != nil {
		return &PlanError{Err: ce}
	}
	if best >= 0 {
		a := cal.Attempts[best]
		cal.Words = a.Words
		pt := a.PromptTokens
		cal.PromptTokens = &pt
	} else {
		cal.Words = w
	}
	r.opts.words = cal.Words
	if !cal.Converged && best >= 0 {
		// Said from the file (results.Warnings, a note within
		// CalibrationNoteMiss); the log says it now.
		word := "warning"
		if math.Abs(float64(*cal.PromptTokens-target)) <= results.CalibrationNoteMiss*float64(target) {
			word = "note"
		}
		r.obs.logf("%s: prompt calibration did not converge in %d requests: prompts are about %d tokens against the %d asked for", word, len(cal.Attempts), *cal.PromptTokens, target)
	}
	return nil
}

// maxTokensPerWord bounds how many tokens one of the method's words may
// cost on a tokenizer, for a first calibration guess that must not
// overshoot the context: everyday English words are 1 to 1.3 tokens
// each on the vocabularies seen (1.29 on phi-3's).
const maxTokensPerWord = 1.5

// contextLength is the context a request must fit, as the endpoint check
// (or the probe's second look) read it; 0 when the server said none.
func (r *runner) contextLength() int {
	if r.detection == nil {
		return 0
	}
	return r.detection.ContextLength
}

// contextMet is what calibration learnt of the server's context: the
// window a request must fit (the check's, or the one a refusal named),
// the fewest words refused, and the first refusal's words.
type contextMet struct {
	window int
	below  int    // the fewest words refused; 0 when none was
	said   string // the first refusal, as the server put it
	tokens int    // its prompt's tokens, when the server said
}

func (m *contextMet) refused(words, tokens, window int, said string) {
	if window > 0 {
		m.window = window
	}
	if m.below == 0 || words < m.below {
		m.below = words
	}
	if m.said == "" {
		m.said, m.tokens = said, tokens
	}
}

// refuse is the plan's refusal when calibration met the context: a
// prompt was refused for it and none near the target was measured, or
// the prompt kept leaves no room for the plan's answers. Nil when the
// plan fits.
func (m *contextMet) refuse(cal *results.Calibration, best int, plan setup.KovaraPlan, pts []point, d *results.Detection) *ContextError {
	kept := 0
	if best >= 0 {
		kept = cal.Attempts[best].PromptTokens
	}
	// After a refusal only a prompt at the target fits the plan: one that
	// stopped short of it stopped at the context.
	fits := best >= 0 && (m.window <= 0 || kept+plan.OutputTokens <= m.window) && (cal.Converged || m.below == 0)
	if fits || best < 0 && m.below == 0 {
		// It fits, or calibration failed for another reason and said so.
		return nil
	}
	ce := &ContextError{Input: plan.InputTokens, Output: plan.OutputTokens, Context: m.window, Calibrated: true}
	if m.window > 0 {
		ce.Largest = largestInput(m.window, plan.OutputTokens)
	}
	for _, a := range cal.Attempts {
		if !a.Refused {
			ce.Accepted = max(ce.Accepted, a.PromptTokens)
		}
	}
	if d != nil {
		ce.Family, ce.Source = d.Family, d.ContextSource
	}
	if len(pts) >= 2 {
		slope, icept := fitLine(pts)
		ce.TokensPerWord, ce.Overhead = slope, int(math.Round(icept))
	}
	switch {
	case m.tokens > 0:
		ce.Met = fmt.Sprintf("a calibration prompt of %d tokens was refused (%s)", m.tokens, m.said)
	case m.said != "":
		ce.Met = fmt.Sprintf("a calibration prompt was refused (%s)", m.said)
	default:
		ce.Met = fmt.Sprintf("the calibrated prompt came out at %d tokens", kept)
	}
	return ce
}

// largestInput is the longest prompt, in tokens, that fits a context of
// window tokens with answers of output tokens and the calibration's
// tolerance: the numbers FitContext holds a plan to.
func largestInput(window, output int) int {
	l := window - output
	for l > 0 && l+output+int(math.Ceil(calibrationTolerance(l))) > window {
		l--
	}
	return max(l, 0)
}

// contextRefusal reads a refused request's answer for the server saying
// the prompt does not fit its context, and what it said of the prompt's
// tokens and the context's (0 where it did not say): llama.cpp
// ("request (9010 tokens) exceeds the available context size (8192
// tokens)"; b4748 without numbers, in a stream's error event when the
// request streamed), vLLM ("maximum context length is N
// tokens … (M in the messages …)"), SGLang ("The input (M tokens) is
// longer than the model's context length (N tokens)") and the simulator.
func contextRefusal(class, msg string) (tokens, window int, ok bool) {
	switch class {
	case httpClass(http.StatusBadRequest), httpClass(http.StatusRequestEntityTooLarge), httpClass(http.StatusUnprocessableEntity):
	case ClassErrorEvent:
		// llama.cpp b4748 refuses a streamed request inside the stream
		// (engine/testdata/llamacpp-b4748/context-stream.sse).
	default:
		return 0, 0, false
	}
	low := strings.ToLower(msg)
	if !strings.Contains(low, "context") || !strings.Contains(low, "exceed") && !strings.Contains(low, "maximum context") &&
		!strings.Contains(low, "longer than") && !strings.Contains(low, "context holds") {
		return 0, 0, false
	}
	for _, p := range contextPatterns {
		if m := p.re.FindStringSubmatch(low); m != nil {
			if p.tokens > 0 {
				tokens, _ = strconv.Atoi(m[p.tokens])
			}
			if p.window > 0 {
				window, _ = strconv.Atoi(m[p.window])
			}
			break
		}
	}
	if window == 0 {
		if m := windowPattern.FindStringSubmatch(low); m != nil {
			window, _ = strconv.Atoi(m[1])
		}
	}
	if tokens == 0 {
		if m := messagesPattern.FindStringSubmatch(low); m != nil {
			tokens, _ = strconv.Atoi(m[1])
		}
	}
	return tokens, window, true
}

// refusalWords is a refusal as a person reads it: "HTTP 400: request
// (19285 tokens) exceeds …", the server's own message taken out of the
// JSON an error event carries.
func refusalWords(class, msg string) string {
	if m := errorMessage.FindStringSubmatch(msg); m != nil {
		msg = m[1]
	}
	return results.ClassName(class) + ": " + msg
}

var (
	errorMessage    = regexp.MustCompile(`"message"\s*:\s*"([^"]*)"`)
	contextPatterns = []struct {
		re             *regexp.Regexp
		tokens, window int // submatch indexes; 0 for none
	}{
		{regexp.MustCompile(`request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)`), 1, 2},
		{regexp.MustCompile(`input \((\d+) tokens\) is longer than the model's context length \((\d+) tokens\)`), 1, 2},
	}
	windowPattern   = regexp.MustCompile(`(?:maximum context length is|context holds) (\d+) tokens`)
	messagesPattern = regexp.MustCompile(`\((\d+) in the messages`)
)

// truncated says when the server cut the prompts: the last attempt sent
// at least a tenth more words than an earlier one yet counted no more
// than 1 % more prompt tokens, still short of the target. A server that
// says its context is refused before calibration (FitContext); this is
// for one that does not, and silently truncates (Ollama does).
func truncated(att []results.CalibrationAttempt, target, output int, d *results.Detection) *ContextError {
	if len(att) < 2 {
		return nil
	}
	last := att[len(att)-1]
	if float64(last.PromptTokens) >= float64(target)-calibrationTolerance(target) {
		return nil
	}
	for _, a := range att[:len(att)-1] {
		if a.Refused {
			continue
		}
		if float64(last.Words) >= 1.1*float64(a.Words) && float64(last.PromptTokens) <= 1.01*float64(a.PromptTokens) {
			family := ""
			if d != nil {
				family = d.Family
			}
			return &ContextError{Input: target, Output: output, Context: last.PromptTokens, Family: family, Truncated: true,
				Source: fmt.Sprintf("%d words gave %d prompt tokens, %d words %d", a.Words, a.PromptTokens, last.Words, last.PromptTokens)}
		}
	}
	return nil
}

// calibrationConnRetries bounds how many connection failures calibration
// shrugs off before it gives up.
const calibrationConnRetries = 3

// point is one calibration request: words sent, prompt tokens counted.
type point struct{ words, tokens int }

// nextWords is the word count expected to give target tokens, from a
// least-squares line through every point so far. Each point is a
// different prompt (its own request number, so its own words), and how
// many tokens a word costs varies from word to word: a line through the
// last two points alone follows that noise and can even slope backwards.
// With one point, the words move by the token difference.
func nextWords(pts []point, target int) int {
	last := pts[len(pts)-1]
	if len(pts) == 1 {
		return last.words + (target - last.tokens)
	}
	slope, icept := fitLine(pts)
	return int(math.Round((float64(target) - icept) / slope))
}
