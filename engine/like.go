package engine

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// PlanLike is the plan that repeats a results file's run: its model,
// lengths, levels (a stopped run's interrupted level too), requests,
// warmup and timeout, with a fresh seed (setup.PlanLike says why). A
// hardware run's manifest conditions are not carried over: they describe
// the machine it ran on, and a reproduction states its own.
func PlanLike(f *results.File) (Plan, error) {
	runs := f.Runs
	if f.Local.PartialRun != nil {
		runs = append(append([]results.Run(nil), runs...), *f.Local.PartialRun)
	}
	recs := make([]setup.Recorded, 0, len(runs))
	for _, r := range runs {
		recs = append(recs, setup.Recorded{
			Model: r.ModelID, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
			Concurrency: r.Concurrency, Requests: r.Requests, Warmup: r.Warmup,
			TimeoutS: r.Environment.TimeoutS,
		})
	}
	return setup.PlanLike(recs)
}

// NewGroupID names a repeated plan's group: when it began, and a few
// random digits so two groups begun in one second differ.
func NewGroupID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// DescribePlan says a Kovara plan in one line, as "run again like this"
// shows what it will send: "model m; 1024-token prompts, 256-token
// answers; concurrency 1, 8, 32; 100 requests each after 4 warmup;
// timeout 2m0s".
func DescribePlan(p Plan) string {
	model := p.Model
	if model == "" {
		model = "the one served"
	}
	return fmt.Sprintf("model %s; %d-token prompts, %d-token answers; concurrency %s; %d requests each after %d warmup; timeout %s",
		model, p.InputTokens, p.OutputTokens, FormatLevels(p.Concurrency), p.Requests, p.Warmup, p.Timeout)
}
