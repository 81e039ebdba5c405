package engine

import (
	"context"
	"fmt"
	"math"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
)

// calibrationTolerance is how close the server's prompt_tokens must come to
// the target: 1 %, and never tighter than ±2 tokens.
func calibrationTolerance(target int) float64 {
	return math.Max(2, 0.01*float64(target))
}

// calibrate is step 3. With usage it fits the word count to input_tokens in
// at most four max_tokens=1 requests; without usage it uses one word per
// requested token and says the length is unknown.
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
	if p := r.probeOut.promptTok; p > 0 {
		pts = append(pts, point{probeWords, p})
		w = target - (p - probeWords)
	}
	w = max(w, 1)

	cn := r.newConn()
	defer cn.close()
	opts := r.opts
	opts.maxTokens = 1
	best := -1
	// A connection that fails is tried again without using up one of the
	// attempts (each try keeps its own request number), up to a few
	// times: calibration is about the server's tokenizer, not its sockets.
	lost := 0
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
		// Warned from the file (results.Warnings); the log says it now.
		r.obs.logf("warning: prompt calibration did not converge in %d requests: prompts are about %d tokens against the %d asked for", len(cal.Attempts), *cal.PromptTokens, target)
	}
	return nil
}

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
	var n, sx, sy, sxx, sxy float64
	for _, p := range pts {
		x, y := float64(p.words), float64(p.tokens)
		n++
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	slope := 1.0
	if d := n*sxx - sx*sx; d > 0 {
		if s := (n*sxy - sx*sy) / d; s > 0.05 {
			slope = s
		}
	}
	icept := (sy - slope*sx) / n
	return int(math.Round((float64(target) - icept) / slope))
}
