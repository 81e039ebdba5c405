package storage

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
)

func TestStagesAndSpecDecInTheLibrary(t *testing.T) {
	t.Parallel()
	srv, url, err := sim.Start(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ep := setup.Endpoint{URL: url, Name: "sim"}
	sp := setup.DefaultStagesPlan()
	sp.Quick, sp.Users = true, 2
	st, err := engine.RunStages(context.Background(), sp, ep, engine.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	dp := setup.DefaultSpecDecPlan()
	dp.Levels, dp.Requests, dp.MaxTokens = []int{1, 2}, 2, 16
	sd, err := engine.RunSpecDec(context.Background(), dp, ep, engine.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	l, dir := newLib(t)
	a, err := l.SaveDoc("", plans.NewStages(st))
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.SaveDoc("", plans.NewSpecDec(sd))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Save("", sample(t)); err != nil {
		t.Fatal(err)
	}
	list, err := l.List()
	if err != nil || len(list) != 3 {
		t.Fatalf("list %+v %v", list, err)
	}
	kinds := map[string]string{}
	for _, s := range list {
		if s.Unreadable != "" {
			t.Errorf("%s unreadable: %s", s.ID, s.Unreadable)
		}
		kinds[s.ID] = s.Plan
	}
	if kinds[a] != results.PlanStages || kinds[b] != results.PlanSpecDec {
		t.Errorf("plans %v", kinds)
	}
	// History lists what each document says of itself, from the index
	// and from the files again once the index is lost: the levels or
	// users, the best tok/s, the engine and whether it is complete.
	docs := map[string]plans.Doc{a: plans.NewStages(st), b: plans.NewSpecDec(sd)}
	listed := func(how string, list []Summary) {
		t.Helper()
		for _, s := range list {
			d, ok := docs[s.ID]
			if !ok {
				continue
			}
			want := d.Summary()
			if !reflect.DeepEqual(s.Summary, want) {
				t.Errorf("%s: History lists %+v, the document says %+v", how, s.Summary, want)
			}
			if len(want.Levels) == 0 || want.BestOutputTPS <= 0 || want.Engine == "" || !want.Complete || want.Model == "" {
				t.Errorf("%s: the %s summary lacks a level, tok/s, engine, model or completeness: %+v", how, want.Plan, want)
			}
		}
	}
	listed("kept", list)
	// The index rebuilds the same, and the documents load back.
	os.Remove(filepath.Join(dir, indexFile))
	again, _ := l.List()
	if len(again) != 3 {
		t.Errorf("after losing the index: %d", len(again))
	}
	listed("rebuilt", again)
	if got, err := LoadAs[plans.Stages](l, a); err != nil || got.Result.Model != st.Model {
		t.Errorf("LoadStages: %v", err)
	}
	if got, err := LoadAs[plans.SpecDec](l, b); err != nil || len(got.Result.Levels) != 2 {
		t.Errorf("LoadSpecDec: %v", err)
	}
	// Import takes them too.
	l2, _ := newLib(t)
	if s, err := l2.Import(l.Path(a)); err != nil || s.Plan != results.PlanStages {
		t.Errorf("import stages: %+v %v", s, err)
	}
}

// capacityDoc is a capacity result as the plan writes it, built here: the
// library's summary and comparison read the document, not how it was
// measured. Two users held under ttftMs and three missed it; the search
// probed 1, 2, 4, 3 and repeated 2 and 3.
func capacityDoc(ttftMs float64, created string) *results.CapacityResult {
	f := func(v float64) *float64 { return &v }
	knee := 2
	met := func(c int, step string, tps, ttft float64) results.CapacityProbe {
		return results.CapacityProbe{Concurrency: c, Requests: 20, Step: step, Met: true, UserTPSP50: f(240), UserTPSP5: f(230), TTFTP95Ms: f(ttft), OutputTPS: tps}
	}
	missed := func(c int, step string, tps float64) results.CapacityProbe {
		return results.CapacityProbe{Concurrency: c, Requests: 20, Step: step, Missed: []string{results.LimitTTFT}, UserTPSP50: f(240), UserTPSP5: f(230), TTFTP95Ms: f(160), OutputTPS: tps}
	}
	return &results.CapacityResult{
		PlanHeader: results.PlanHeader{Format: results.FormatCapacity, FormatVersion: 1, Complete: true, CreatedAt: created, Model: "kovara-sim-8b"},
		Settings:   results.CapacitySettings{UserTPS: 1, TTFTP95Ms: ttftMs, InputTokens: 64, OutputTokens: 40, MaxConcurrency: 4},
		Probes: []results.CapacityProbe{
			met(1, results.StepDouble, 240, 3), met(2, results.StepDouble, 470, 4), missed(4, results.StepDouble, 480),
			missed(3, results.StepBisect, 475), met(2, results.StepRepeat, 468, 4), missed(3, results.StepRepeat, 476),
		},
		Answer: results.CapacityAnswer{Capacity: 2, Held: 2, Missed: 3, MissedAt: 3, MissedOn: []string{results.LimitTTFT}, RangeHigh: 2, Knee: &knee},
		Local:  results.Local{Simulated: true, EndpointName: "sim", Plan: results.PlanCapacity},
	}
}

func TestCapacityInTheLibrary(t *testing.T) {
	t.Parallel()
	c1, c2 := capacityDoc(80, "2026-05-01T10:00:00Z"), capacityDoc(81, "2026-05-01T11:00:00Z")
	l, dir := newLib(t)
	a, err := l.SaveDoc("", plans.NewCapacity(c1))
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.SaveDoc("", plans.NewCapacity(c2))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, indexFile))
	list, err := l.List()
	if err != nil || len(list) != 2 {
		t.Fatalf("list %+v %v", list, err)
	}
	for _, s := range list {
		if s.Plan != results.PlanCapacity || s.Capacity != "2 users" || s.Unreadable != "" {
			t.Errorf("summary %+v, want a capacity run marked 2 users", s)
		}
	}
	var docs []plans.Doc
	for _, id := range []string{a, b} {
		d, err := l.LoadDocument(id)
		if err != nil || d.Kind() != plans.ByID(results.PlanCapacity) {
			t.Fatalf("LoadDocument %s: %+v %v", id, d, err)
		}
		docs = append(docs, d)
	}
	if kind, err := plans.ComparableKind([]string{results.PlanCapacity, results.PlanCapacity}); err != nil || kind.ID != results.PlanCapacity {
		t.Errorf("ComparableKind: %v %v", kind, err)
	}
	if _, err := plans.ComparableKind([]string{results.PlanCapacity, results.PlanKovara}); err == nil {
		t.Error("a capacity result and a Kovara run compared")
	}
	cmp := plans.ByID(results.PlanCapacity).Compare(docs, []string{"a", "b"})
	if cmp.Like || len(cmp.Diffs) != 1 || !strings.Contains(cmp.Diffs[0], "service level differs (per-user ≥ 1 tok/s, TTFT p95 ≤ 80 ms vs per-user ≥ 1 tok/s, TTFT p95 ≤ 81 ms") {
		t.Errorf("verdict %v %v, want the service levels named", cmp.Like, cmp.Diffs)
	}
	if cmp.Rows[0].Metric.ID != "capacity" || cmp.Rows[0].Cells[1].Value != 2 {
		t.Errorf("first row %+v, want capacity 2", cmp.Rows[0])
	}
	// The other answers' marks, from the document's answer alone.
	for _, tc := range []struct {
		edit func(*results.CapacityAnswer)
		want string
	}{
		{func(a *results.CapacityAnswer) { a.Uncertain, a.RangeHigh = true, 3 }, "2–3 users?"},
		{func(a *results.CapacityAnswer) { a.Capacity, a.RangeHigh, a.MissedAt, a.ReachedMax = 4, 4, 0, true }, "≥ 4 users"},
		{func(a *results.CapacityAnswer) { a.Capacity, a.RangeHigh, a.MissedAt = 0, 0, 1 }, "none"},
	} {
		r := capacityDoc(80, "2026-05-01T12:00:00Z")
		tc.edit(&r.Answer)
		l, _ := newLib(t)
		if _, err := l.SaveDoc("", plans.NewCapacity(r)); err != nil {
			t.Fatal(err)
		}
		if list, err := l.List(); err != nil || len(list) != 1 || list[0].Capacity != tc.want {
			t.Errorf("answer %+v: list %+v %v, want it marked %q", r.Answer, list, err, tc.want)
		}
	}
}
