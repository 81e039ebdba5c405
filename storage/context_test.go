package storage

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
)

// TestContextInTheLibrary: context results are saved, listed (from the
// index and rebuilt from the files), loaded as their kind, and compared
// with each other, depth by depth, and with nothing else.
func TestContextInTheLibrary(t *testing.T) {
	t.Parallel()
	cfg := sim.ContextDemo()
	cfg.PrefillRate, cfg.TokenInterval = 200000, time.Millisecond
	srv, url, err := sim.Start(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	run := func(depths []int, output int) *results.ContextResult {
		p := setup.DefaultContextPlan()
		p.Depths, p.OutputTokens, p.Repeats = depths, output, 1
		r, err := engine.RunContext(context.Background(), p, setup.Endpoint{URL: url, Name: "lab box"}, engine.Observer{})
		if err != nil {
			t.Fatal(err)
		}
		// Said only when the test fails: what each depth measured.
		for _, d := range r.Depths {
			t.Logf("depths %v: depth %d, %d of %d conversations ok, failures %q, decode %+v, partial %v", depths, d.Depth, d.OK, d.Conversations, d.Failures, d.DecodeTPS, d.Partial)
		}
		t.Logf("depths %v: limit %q, warnings %q", depths, r.Limit, r.Warnings)
		return r
	}
	c1, c2 := run([]int{0, 1024}, 8), run([]int{0, 2048}, 12)
	l, dir := newLib(t)
	var ids []string
	for _, r := range []*results.ContextResult{c1, c2} {
		id, err := l.SaveDoc("", plans.NewContext(r))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, rebuilt := range []bool{false, true} {
		if rebuilt {
			os.Remove(filepath.Join(dir, indexFile))
		}
		list, err := l.List()
		if err != nil || len(list) != 2 {
			t.Fatalf("list %+v %v", list, err)
		}
		for _, s := range list {
			if s.Plan != results.PlanContext || s.RunKind != results.PlanContext || s.EndpointName != "lab box" || s.BestOutputTPS <= 0 || s.Levels[0] != 0 || len(s.Levels) != 2 || !s.Complete {
				t.Errorf("summary (index rebuilt %v): %+v", rebuilt, s)
			}
		}
	}
	if KindName(results.PlanContext) != "context" || plans.ByID(results.PlanContext).Results != "context results" {
		t.Errorf("names: %q, %q", KindName(results.PlanContext), plans.ByID(results.PlanContext).Results)
	}
	rDoc, err := LoadAs[plans.Context](l, ids[0])
	r := rDoc.Result
	if err != nil || len(r.Depths) != 2 {
		t.Fatalf("LoadContext: %v", err)
	}
	var docs []plans.Doc
	for _, id := range ids {
		d, err := l.LoadDocument(id)
		if err != nil || d.Kind() != plans.ByID(results.PlanContext) || d.Model() != "kovara-sim-8b" || d.CreatedAt() == "" {
			t.Fatalf("LoadDocument %s: %+v %v", id, d, err)
		}
		docs = append(docs, d)
	}
	if kind, err := plans.ComparableKind([]string{results.PlanContext, results.PlanContext}); err != nil || kind.ID != results.PlanContext {
		t.Errorf("ComparableKind: %v %v", kind, err)
	}
	if _, err := plans.ComparableKind([]string{results.PlanContext, results.PlanCapacity}); err == nil || !strings.Contains(err.Error(), "context results with context results") {
		t.Errorf("a context result compared with a capacity result: %v", err)
	}
	cmp := plans.ByID(results.PlanContext).Compare(docs, []string{"a", "b"})
	if cmp.Like || len(cmp.Diffs) != 1 || !strings.Contains(cmp.Diffs[0], "answer tokens differs (8 vs 12") {
		t.Errorf("verdict %v %v, want the answer lengths named", cmp.Like, cmp.Diffs)
	}
	var ids2 []string
	for _, row := range cmp.Rows {
		ids2 = append(ids2, row.Metric.ID)
	}
	for _, want := range []string{"prefill_tps@1024", "decode_tps@0", "decode_tps@1024", "cached_ttft@2048", "ttft@2048"} {
		if !slices.Contains(ids2, want) {
			t.Errorf("rows %v lack %s", ids2, want)
		}
	}
	if slices.Contains(ids2, "prefill_tps@0") {
		t.Errorf("rows %v: the short prompt is the prefill baseline, with no prefill of its own", ids2)
	}
	for _, row := range cmp.Rows {
		// Depth 1k only in the first run, 2k only in the second: gaps.
		// (A depth's prefill is measured above the short prompt's TTFT, so
		// a stall of the short prompt on a loaded machine can leave it
		// out: whether it is there is not this test's to say.)
		if strings.HasPrefix(row.Metric.ID, "prefill_tps@") {
			continue
		}
		switch {
		case strings.HasSuffix(row.Metric.ID, "@1024") && (!row.Cells[0].Present || row.Cells[1].Present),
			strings.HasSuffix(row.Metric.ID, "@2048") && (row.Cells[0].Present || !row.Cells[1].Present),
			strings.HasSuffix(row.Metric.ID, "@0") && (!row.Cells[0].Present || !row.Cells[1].Present || !row.Cells[1].HasDelta):
			t.Errorf("row %s: cells %+v", row.Metric.ID, row.Cells)
		}
	}
	if !strings.Contains(cmp.Sentence(), "Not like for like") {
		t.Errorf("sentence: %s", cmp.Sentence())
	}
}
