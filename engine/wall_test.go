package engine

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
)

// TestRunWithWallPlug: a Kovara run with a wall plug reads it idle
// before anything is sent, then every level: a stand-in Shelly that
// draws 100 W until the server's first chat request and 250 W after it
// gives an idle of 100 W, each level 250 W with 150 W above idle, its
// energy the level's length times that, and its output tokens per joule
// at the wall and above idle from those; the table shows them; nothing
// of the plug is published.
func TestRunWithWallPlug(t *testing.T) {
	// Not parallel: it reads the stand-in faster than a real plug
	// updates (wallIdle, wallEvery).
	idle, every := wallIdle, wallEvery
	wallIdle, wallEvery = 300*time.Millisecond, 25*time.Millisecond
	t.Cleanup(func() { wallIdle, wallEvery = idle, every })

	var busy atomic.Bool
	target := sim.New(fastSim())
	t.Cleanup(func() { target.Close() })
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			busy.Store(true)
		}
		target.ServeHTTP(w, r)
	}))
	t.Cleanup(server.Close)
	plug := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/rpc/Shelly.GetStatus" {
			http.NotFound(w, r)
			return
		}
		power := 100.0
		if busy.Load() {
			power = 250
		}
		// A Gen2 Shelly's status, its shape as the captured Plus 1PM's
		// (hw/testdata/captured).
		fmt.Fprintf(w, `{"switch:0":{"id":0, "source":"init", "output":true, "apower":%.1f, "voltage":230.1},"sys":{"mac":"3C6105799168"}}`, power)
	}))
	t.Cleanup(plug.Close)

	p := smallPlan()
	p.OutputTokens = 80 // levels long enough for several of the plug's readings
	f, err := Run(context.Background(), p, Endpoint{URL: server.URL, Wall: plug.URL}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	mustValid(t, f)
	wall := f.Local.Wall
	if wall == nil || wall.Family != "shelly-gen2" || wall.IdleW == nil || *wall.IdleW != 100 {
		t.Fatalf("wall %+v", wall)
	}
	measured := 0
	for _, r := range f.Runs {
		lv := wall.Levels[r.Concurrency]
		if lv.EnergyJ == nil {
			// A machine busy enough to hold the sampler past the gap
			// limit at an edge leaves the level without a figure, as it
			// would a GPU's: said, not guessed.
			t.Logf("level %d: no wall figure (%d readings)", r.Concurrency, lv.Samples)
			continue
		}
		measured++
		near := func(p *float64, want float64) bool { return p != nil && math.Abs(*p-want) < 1e-9*want }
		if !near(lv.MeanPowerW, 250) || !near(lv.AboveIdleW, 150) || lv.TokensPerJoule == nil || lv.TokensPerJouleAboveIdle == nil {
			t.Errorf("level %d: %+v, want 250 W, 150 W above idle", r.Concurrency, lv)
			continue
		}
		if got, want := *lv.EnergyJ, 250*lv.DurationS; math.Abs(got-want) > 1e-6*want {
			t.Errorf("level %d: %.3f J over %.3f s, want %.3f", r.Concurrency, got, lv.DurationS, want)
		}
		tokens := *lv.TokensPerJoule * *lv.EnergyJ
		if above := *lv.TokensPerJouleAboveIdle * *lv.AboveIdleJ; math.Abs(tokens-above) > 1e-6*tokens || tokens <= 0 {
			t.Errorf("level %d: %.3f tokens by the wall's figure, %.3f by the one above idle", r.Concurrency, tokens, above)
		}
	}
	if measured == 0 {
		t.Fatal("no level has a wall figure")
	}
	table := results.ResultTable(f)
	if got := strings.Join(table.Columns[len(table.Columns)-3:], "|"); got != strings.Join(results.WallColumns, "|") || !slices.Contains([]string{"250.0", results.Missing}, table.Rows[0][len(table.Columns)-3]) {
		t.Errorf("table columns %q, first row %q", table.Columns, table.Rows[0])
	}
	data, err := results.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	payload, reasons := results.PublishCheck(data)
	if payload == nil {
		t.Fatalf("not publishable: %q", reasons)
	}
	if host := strings.TrimPrefix(plug.URL, "http://"); strings.Contains(string(payload), host) || strings.Contains(string(payload), "idle_w") {
		t.Errorf("the published payload holds the plug: %s", payload)
	}
}
