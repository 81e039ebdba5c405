package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// TestRunAnswersDocument: the answers plan's document holds the
// measurement as made — the demo's drifted model beyond the floor, the
// figures by prompt kind, each position's values and the reference
// tokens in local —, the live view counts every request of it, and the
// other endpoint is named only in local.
func TestRunAnswersDocument(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, sim.AnswersDemo())
	_, otherURL := startSim(t, sim.AnswersDemo())
	plan := setup.AnswersPlan{Prompts: 2, Positions: 6}
	tests := []struct {
		name    string
		run     AnswersRun
		other   string // the other endpoint's host in local, "" for the same
		beyond  bool
		otherIs string
	}{
		{"two models of one server", AnswersRun{AnswersPlan: plan, Model: "kovara-sim-8b-f16", AgainstModel: "kovara-sim-8b-q4", Simulated: true}, "", true, "kovara-sim-8b-q4"},
		{"the same model on another server", AnswersRun{AnswersPlan: plan, Model: "kovara-sim-8b-f16", Against: &setup.Endpoint{URL: otherURL, Name: "box"}, AgainstModel: "kovara-sim-8b-f16"}, hostOf(t, otherURL), false, "kovara-sim-8b-f16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := NewLive()
			r, err := RunAnswers(context.Background(), tt.run, setup.Endpoint{URL: url}, Observer{Live: live})
			if err != nil {
				t.Fatal(err)
			}
			if r.Format != results.FormatAnswers || !r.Complete || r.Model != "kovara-sim-8b-f16" || r.Other.Model != tt.otherIs {
				t.Errorf("header %+v, other %q", r.PlanHeader, r.Other.Model)
			}
			if r.Figures == nil || r.Floor == nil {
				t.Fatalf("no figures: %+v", r)
			}
			if got := r.SameTopBeyond || r.KLBeyond; got != tt.beyond {
				t.Errorf("beyond the floor %v, want %v: %s", got, tt.beyond, r.Headline())
			}
			if r.Baseline.Family != results.FamilyLlamaCpp || r.Other.Family != results.FamilyLlamaCpp {
				t.Errorf("families %q and %q, want llama.cpp", r.Baseline.Family, r.Other.Family)
			}
			if got, want := len(r.Kinds), 2; got != want {
				t.Errorf("%d kinds, want %d", got, want)
			}
			if got, want := len(r.Local.Positions), r.Figures.Positions; got != want || want != 12 {
				t.Errorf("%d positions kept, figures over %d, want 12", got, want)
			}
			if got := len(r.Local.Reference); got != 2 {
				t.Errorf("%d reference answers kept, want 2", got)
			}
			if r.Local.OtherEndpointHost != tt.other {
				t.Errorf("the other endpoint in local %q, want %q", r.Local.OtherEndpointHost, tt.other)
			}
			// Each position's values are the figures' own.
			same := 0
			for _, p := range r.Local.Positions {
				if p.Same {
					same++
				}
			}
			if got, want := float64(same)/12, r.Figures.SameTop; got != want {
				t.Errorf("positions say same top %.3f, the figures %.3f", got, want)
			}
			s := live.Snapshot()
			if total := plan.Requests(); s.LevelDone != total || s.OverallDone != total || s.OverallTotal != total {
				t.Errorf("live view: %d (stage) and %d of %d requests, want %d of %d", s.LevelDone, s.OverallDone, s.OverallTotal, total, total)
			}
			t.Log(r.Headline())
			data, err := results.MarshalDocument(r)
			if err != nil {
				t.Fatal(err)
			}
			back, err := results.AnswersDoc.Decode(data)
			if err != nil || back.Figures == nil || *back.Figures != *r.Figures {
				t.Errorf("read back: %v, %+v", err, back)
			}
		})
	}
}

// TestRunAnswersRefuses: bad input is a plan error before any request; a
// server the measurement cannot read ends the run with its reason and no
// document.
func TestRunAnswersRefuses(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, sim.AnswersDemo())
	_, vllm := startSim(t, sim.Config{Personality: sim.VLLM, Models: []string{"m"}, Answers: sim.Distribution{ChatRestarts: true}})
	tests := []struct {
		name string
		run  AnswersRun
		plan bool
		want string
	}{
		{"no other setting", AnswersRun{Model: "kovara-sim-8b-f16"}, true, "choose the other setting"},
		{"itself", AnswersRun{Model: "kovara-sim-8b-f16", AgainstModel: "kovara-sim-8b-f16"}, true, "the baseline itself"},
		{"too many prompts", AnswersRun{AnswersPlan: setup.AnswersPlan{Prompts: 99}, AgainstModel: "x"}, true, "has 6 prompts"},
		{"a server that does not continue", AnswersRun{AnswersPlan: setup.AnswersPlan{Prompts: 1, Positions: 2}, Model: "kovara-sim-8b-f16", Against: &setup.Endpoint{URL: vllm}}, false, "does not continue a final assistant message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := RunAnswers(context.Background(), tt.run, setup.Endpoint{URL: url}, Observer{})
			if err == nil || r != nil {
				t.Fatalf("got %v, %v; want an error", r, err)
			}
			var pe *PlanError
			if errors.As(err, &pe) != tt.plan || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q (plan error %v), want %q (plan error %v)", err, errors.As(err, &pe), tt.want, tt.plan)
			}
		})
	}
}

func hostOf(t *testing.T, url string) string {
	b, err := setup.ParseBase(url)
	if err != nil {
		t.Fatal(err)
	}
	return b.Host
}
