package engine

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// PlanLike is the plan that repeats a results file's run: its model,
// lengths, levels (a stopped run's interrupted level too), requests,
// warmup and timeout, with a fresh seed (setup.PlanLike says why). A
// hardware run's manifest conditions are not carried over: they describe
// the machine it ran on, and a reproduction states its own.
func PlanLike(f *results.File) (setup.KovaraPlan, error) {
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
	p, err := setup.PlanLike(recs)
	if w := f.Local.Workload; w != nil && err == nil {
		// The same shared prefix and turns: the runs compare only so.
		p.Workload = setup.Workload{SharedPrefix: w.SharedPrefix, PrefixGroups: w.PrefixGroups, Turns: w.Turns}
	}
	return p, err
}

// RepeatGroup is each run's place in a plan repeated n times (--repeat,
// the app's Repeat): one id for them all, made of when the group began
// and a few random digits so two groups begun in one second differ, and
// the run's index 1 … n. Nil places for a single run: it is no group.
func RepeatGroup(n int, began time.Time) []*results.RunGroup {
	places := make([]*results.RunGroup, n)
	if n < 2 {
		return places
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	id := began.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
	for i := range places {
		places[i] = &results.RunGroup{ID: id, Index: i + 1, Of: n}
	}
	return places
}

// DescribeTuneReplay says what each turn of a settings comparison that
// replays a trace sends: "each setting replays the trace day.jsonl at
// its recorded times, 2 times faster, from 09:00 to 12:00".
func DescribeTuneReplay(p setup.RatePlan) string {
	if p.Replay == nil {
		return ""
	}
	r := *p.Replay
	s := "each setting replays the trace " + filepath.Base(r.File) + " at its recorded times"
	if sp := r.SpeedOr1(); sp != 1 {
		s += fmt.Sprintf(", %s times faster", strconv.FormatFloat(sp, 'f', -1, 64))
	}
	if r.From != "" {
		s += ", from " + r.From
	}
	if r.To != "" {
		s += ", to " + r.To
	}
	return s
}

// DescribePlan says a Kovara plan in one line, as "run again like this"
// shows what it will send: "model m; 1024-token prompts, 256-token
// answers; concurrency 1, 8, 32; 100 requests each after 4 warmup;
// timeout 2m0s".
func DescribePlan(p setup.KovaraPlan) string {
	model := p.Model
	if model == "" {
		model = "the one served"
	}
	s := fmt.Sprintf("model %s; %d-token prompts, %d-token answers; concurrency %s; %d requests each after %d warmup; timeout %s",
		model, p.InputTokens, p.OutputTokens, FormatLevels(p.Concurrency), p.Requests, p.Warmup, p.Timeout)
	if w := workloadWords(p.Workload); w != "" {
		s += "; " + w
	}
	return s
}

// workloadWords says a plan's shared prefix and turns as its result will
// (results.Workload.Words); "" for the method's own prompts.
func workloadWords(w setup.Workload) string {
	wl := &workload{w: w}
	return wl.settings().Words()
}
