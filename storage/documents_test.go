package storage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

func TestStagesAndSpecDecInTheLibrary(t *testing.T) {
	t.Parallel()
	srv, url, err := sim.Start(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ep := setup.Endpoint{URL: url, Name: "sim"}
	sp := engine.DefaultStagesPlan()
	sp.Quick, sp.Users = true, 2
	st, err := engine.RunStages(context.Background(), sp, ep, engine.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	dp := engine.DefaultSpecDecPlan()
	dp.Levels, dp.Requests, dp.MaxTokens = []int{1, 2}, 2, 16
	sd, err := engine.RunSpecDec(context.Background(), dp, ep, engine.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	l, dir := newLib(t)
	a, err := l.SaveStages("", st)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.SaveSpecDec("", sd)
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
	plans := map[string]string{}
	for _, s := range list {
		if s.Unreadable != "" {
			t.Errorf("%s unreadable: %s", s.ID, s.Unreadable)
		}
		plans[s.ID] = s.Plan
	}
	if plans[a] != PlanStages || plans[b] != PlanSpecDec {
		t.Errorf("plans %v", plans)
	}
	// The index rebuilds the same, and the documents load back.
	os.Remove(filepath.Join(dir, indexFile))
	again, _ := l.List()
	if len(again) != 3 {
		t.Errorf("after losing the index: %d", len(again))
	}
	if got, err := l.LoadStages(a); err != nil || got.Model != st.Model {
		t.Errorf("LoadStages: %v", err)
	}
	if got, err := l.LoadSpecDec(b); err != nil || len(got.Levels) != 2 {
		t.Errorf("LoadSpecDec: %v", err)
	}
	// Import takes them too.
	l2, _ := newLib(t)
	if s, err := l2.Import(l.Path(a)); err != nil || s.Plan != PlanStages {
		t.Errorf("import stages: %+v %v", s, err)
	}
}

func TestCapacityInTheLibrary(t *testing.T) {
	t.Parallel()
	srv, url, err := sim.Start(sim.Config{TokenInterval: 4 * time.Millisecond, PrefillRate: 1e6, BatchCapacity: 2}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ep := setup.Endpoint{URL: url, Name: "sim"}
	run := func(ttftMs float64) *results.CapacityResult {
		p := engine.DefaultCapacityPlan()
		p.InputTokens, p.OutputTokens, p.Warmup, p.MaxConcurrency = 64, 40, 2, 4
		p.UserTPS, p.TTFTP95Ms = 1, ttftMs
		r, err := engine.RunCapacity(context.Background(), p, ep, engine.Observer{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Two slots and 40-token answers: a third user waits ~160 ms, far
	// past the ceilings, while a served one's TTFT is a few ms (a slow
	// race-detector build on a busy machine once took 26 ms).
	c1, c2 := run(80), run(81)
	l, dir := newLib(t)
	a, err := l.SaveCapacity("", c1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.SaveCapacity("", c2)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, indexFile))
	list, err := l.List()
	if err != nil || len(list) != 2 {
		t.Fatalf("list %+v %v", list, err)
	}
	for _, s := range list {
		if s.Plan != PlanCapacity || s.Capacity != "2 users" || s.Unreadable != "" {
			t.Errorf("summary %+v, want a capacity run marked 2 users", s)
		}
	}
	var docs []Document
	for _, id := range []string{a, b} {
		d, err := l.LoadDocument(id)
		if err != nil || d.Plan != PlanCapacity || d.Capacity == nil {
			t.Fatalf("LoadDocument %s: %+v %v", id, d, err)
		}
		docs = append(docs, d)
	}
	if kind, err := ComparableKind([]string{PlanCapacity, PlanCapacity}); err != nil || kind != PlanCapacity {
		t.Errorf("ComparableKind: %q %v", kind, err)
	}
	if _, err := ComparableKind([]string{PlanCapacity, PlanKovara}); err == nil {
		t.Error("a capacity result and a Kovara run compared")
	}
	cmp := CompareOthers(PlanCapacity, docs, []string{"a", "b"})
	if cmp.Like || len(cmp.Diffs) != 1 || !strings.Contains(cmp.Diffs[0], "service level differs (per-user ≥ 1 tok/s, TTFT p95 ≤ 80 ms vs per-user ≥ 1 tok/s, TTFT p95 ≤ 81 ms") {
		t.Errorf("verdict %v %v, want the service levels named", cmp.Like, cmp.Diffs)
	}
	if cmp.Rows[0].Metric.ID != "capacity" || cmp.Rows[0].Cells[1].Value != 2 {
		t.Errorf("first row %+v, want capacity 2", cmp.Rows[0])
	}
}
