package storage

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kovara/desktop/engine"
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
