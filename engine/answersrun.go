package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// The answers plan (docs/plans.md, "Compare answers"): MeasureAnswers as
// a plan of its own, its document kovara-desktop-answers, for the app's
// form and `kovara-bench answers -o`.

// AnswersRun is what the answers plan is given: the measurement's plan,
// the baseline's model, and the other setting (another endpoint, another
// model of the same one, or both).
type AnswersRun struct {
	setup.AnswersPlan
	Model string
	// Against is the other setting's endpoint; nil: the baseline's.
	Against      *setup.Endpoint
	AgainstModel string
	Simulated    bool
}

// Validate refuses a plan that reads nothing or compares a setting with
// itself by mistake.
func (p AnswersRun) Validate() error {
	switch {
	case p.Positions < 0 || p.TopK < 0 || p.Prompts < 0:
		return errors.New("positions, prompts and top tokens cannot be negative")
	case p.Prompts > len(setup.AnswerPrompts):
		return fmt.Errorf("the prompt set %s has %d prompts", setup.AnswerPromptsVersion, len(setup.AnswerPrompts))
	case p.Against == nil && p.AgainstModel == "":
		return errors.New("choose the other setting: another endpoint, another model of this one, or both")
	case p.Against == nil && p.AgainstModel == p.Model && p.Model != "":
		return fmt.Errorf("the other setting is the baseline itself (%s on the same endpoint): the baseline is read against itself anyway, as the floor", p.Model)
	}
	return nil
}

// RunAnswers compares the other setting's answer distribution with the
// baseline's at ep (docs/method.md §14) and writes the plan's document.
// The live view counts its requests as one measured stage. On an error
// nothing is returned: figures from part of the positions would say less
// than they seem to.
func RunAnswers(ctx context.Context, p AnswersRun, ep setup.Endpoint, obs Observer) (_ *results.AnswersResult, err error) {
	if err := p.Validate(); err != nil {
		return nil, &PlanError{Err: err}
	}
	plan := p.AnswersPlan.WithDefaults()
	sess, err := newSession(ep, obs)
	if err != nil {
		return nil, err
	}
	ctx, done := sess.bind(ctx)
	defer done(&err)
	total := plan.Requests()
	obs.Live.start(sess.clock, 1, total)
	// The baseline's check: what History and the document say of its
	// server (the measurement checks both again before reading).
	if err := sess.check(ctx, p.Model, true); err != nil {
		return nil, sess.stop(ctx, err)
	}
	other, odet := ep, sess.detected()
	if p.Against != nil {
		// The other endpoint's check, before any reading: a server that
		// does not answer is said now, not after the baseline's answers.
		other = *p.Against
		osess, err := newSession(other, Observer{})
		if err != nil {
			return nil, fmt.Errorf("the other setting: %w", err)
		}
		if err := osess.check(ctx, p.AgainstModel, true); err != nil {
			return nil, sess.stop(ctx, fmt.Errorf("the other setting: %w", err))
		}
		odet = osess.detected()
	}
	slots := obs.Live.beginStage(Stage{Measured: true, Index: 1, Users: 1, Requests: total, Name: "the answers token by token",
		Line: func(done, total int) string {
			return fmt.Sprintf("Comparing the answers token by token — %d of %d requests", done, total)
		}})
	step := func(int, int) {
		slots[0].done.Add(1)
		slots[0].ok.Add(1)
	}
	obs.logf("reading %d prompts × %d positions: %d requests (%s)", plan.Prompts, plan.Positions, total, setup.AnswerPromptsVersion)
	m, err := MeasureAnswers(ctx, AnswersSide{Endpoint: ep, Model: p.Model}, AnswersSide{Endpoint: other, Model: p.AgainstModel}, plan, step)
	if err != nil {
		return nil, sess.stop(ctx, err)
	}
	obs.Live.endLevel(total)
	obs.Live.setPhase(PhaseDone)
	return answersDocument(p, plan, sess, other, odet, m), nil
}

// answersDocument is the measurement m as the plan's document.
func answersDocument(p AnswersRun, plan setup.AnswersPlan, sess *session, other setup.Endpoint, odet results.Detection, m *AnswersResult) *results.AnswersResult {
	det := sess.detected()
	r := &results.AnswersResult{
		PlanHeader: results.AnswersDoc.Header(sess.t0, m.BaseModel),
		Settings: results.AnswersSettings{PromptSet: setup.AnswerPromptsVersion, Prompts: plan.Prompts, Positions: plan.Positions, TopK: plan.TopK,
			TimeoutS: plan.Timeout.Seconds(), Client: ClientName, ClientVersion: Version},
		Baseline:      results.AnswersSetting{Model: m.BaseModel, Family: det.Family, Build: det.Version},
		Other:         results.AnswersSetting{Model: m.OtherModel, Family: odet.Family, Build: odet.Version},
		Figures:       ptr(results.AnswersFigures(m.Other.Figures)),
		Floor:         ptr(results.AnswersFigures(m.Floor.Figures)),
		SameTopBeyond: m.SameTopBeyond, KLBeyond: m.KLBeyond,
		TopK:  m.TopK,
		Notes: append([]string{}, m.Notes...),
		Local: results.AnswersLocal{PlanLocal: sess.planLocal(p.Simulated), Reference: m.Reference},
	}
	r.Complete = true
	r.Local.FinishedAt = time.Now().UTC().Format(time.RFC3339)
	if d := m.Drift(); d != nil {
		r.Ruler = d.Ruler
	}
	if p.Against != nil {
		if b, err := setup.ParseBase(other.URL); err == nil {
			r.Local.OtherEndpoint, r.Local.OtherEndpointHost = b.Root, b.Host
		}
		r.Local.OtherEndpointName = other.Name
	}
	for _, k := range m.Kinds {
		r.Kinds = append(r.Kinds, results.AnswersKind{Kind: k.Kind, AnswersFigures: results.AnswersFigures(k.Figures), PartsAt: k.PartsAt})
	}
	// Each position's values, along the reference answers in order.
	at := 0
	for pi, n := range m.Compared {
		for i := range n {
			if at >= len(m.Other.KL) || at >= len(m.Floor.KL) {
				break
			}
			r.Local.Positions = append(r.Local.Positions, results.AnswersPosition{Kind: m.Kinds[pi].Kind, At: i + 1,
				KL: m.Other.KL[at], Same: m.Other.Same[at], FloorKL: m.Floor.KL[at], FloorSame: m.Floor.Same[at]})
			at++
		}
	}
	return r
}

// answerPromptTokens is about how long an answers prompt is in its chat
// template: each of the set is a sentence.
const answerPromptTokens = 40

// EstimateAnswers is about how long the answers measurement p takes:
// each prompt's reference answer on the baseline (speed base, slots as
// EstimatePlan's), then each position read on the baseline (its floor)
// and on the other setting (speed other; the baseline's where it was not
// tested), each read taking at most a short stream's first token (a
// read is a one-token step behind the prompt cache, shorter than the
// tested prompt's prefill), up to the slots at once. 0 when base cannot
// say.
func EstimateAnswers(p setup.AnswersPlan, base, other TestedSpeed, baseSlots, otherSlots int) time.Duration {
	p = p.WithDefaults()
	if !base.Usable() {
		return 0
	}
	if !other.Usable() {
		other = base
	}
	read := func(s TestedSpeed, slots int) time.Duration {
		at := max(slots, 1)
		return time.Duration(float64(s.TTFT) * s.together(at) / float64(at))
	}
	each := base.requestTime(answerPromptTokens, p.Positions) + time.Duration(p.Positions)*(read(base, baseSlots)+read(other, otherSlots))
	return time.Duration(p.Prompts) * each
}
