package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/internal/shellwords"
)

// TestRunWithWallPlug: a Kovara run with a wall plug reads it idle
// before anything is sent, then every level: a stand-in Shelly that
// draws 100 W until the server's first chat request and 250 W after it
// gives an idle of 100 W, each level 250 W with 150 W above idle, its
// energy the level's length times that, and its output tokens per joule
// at the wall and above idle from those; the energy table prices them;
// the series and the windows are kept for the chart; nothing of the plug
// is published.
func TestRunWithWallPlug(t *testing.T) {
	fastWall(t)
	server, plug := busyPlug(t)
	p := smallPlan()
	p.OutputTokens = 80 // levels long enough for several of the plug's readings
	f, err := Run(context.Background(), p, setup.Endpoint{URL: server, Wall: plug}, Observer{})
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
	// The energy table prices the bill: 250 W over each level's time, its
	// output tokens, at 0.30 EUR a kWh.
	price := &results.Price{PerKWh: 0.30, Currency: "EUR"}
	rows := results.EnergyRows(keysOf(f), nil, wall, price)
	for _, row := range rows {
		if row.Whole {
			continue
		}
		lv := wall.Levels[atoi(t, row.Label)]
		if lv.EnergyJ == nil {
			continue
		}
		want := 0.30 * 250 * lv.DurationS / float64(lv.OutputTokens) * 1e6 / 3.6e6
		if row.CostPerMillion == nil || math.Abs(*row.CostPerMillion-want) > 0.02*want {
			t.Errorf("level %s: cost per million %v, want %.6f EUR (250 W, %.3f s, %d tokens)", row.Label, row.CostPerMillion, want, lv.DurationS, lv.OutputTokens)
		}
	}
	if s := wall.Series; s == nil || len(s.TS) < 3 || len(s.TS) != len(s.PowerW) {
		t.Errorf("the power series: %+v", s)
	} else {
		for c, lv := range wall.Levels {
			if lv.StartS <= s.TS[0] || lv.EndS <= lv.StartS || lv.EndS > s.TS[len(s.TS)-1]+1 {
				t.Errorf("level %d: window %.3f–%.3f s, the series %.3f–%.3f s", c, lv.StartS, lv.EndS, s.TS[0], s.TS[len(s.TS)-1])
			}
		}
	}
	data, err := results.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	payload, reasons := results.PublishCheck(data)
	if payload == nil {
		t.Fatalf("not publishable: %q", reasons)
	}
	if host := strings.TrimPrefix(plug, "http://"); strings.Contains(string(payload), host) || strings.Contains(string(payload), "idle_w") {
		t.Errorf("the published payload holds the plug: %s", payload)
	}
}

// busyPlug is a simulator and a stand-in Shelly that draws 100 W until
// the server's first chat request and 250 W from then on; it returns
// both addresses. Tests that use it shorten wallIdle and wallEvery.
func busyPlug(t *testing.T) (server, plug string) {
	t.Helper()
	var busy atomic.Bool
	target := sim.New(fastSim())
	t.Cleanup(func() { target.Close() })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			busy.Store(true)
		}
		target.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	pl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	t.Cleanup(pl.Close)
	return srv.URL, pl.URL
}

// fastWall reads the stand-in plug faster than a real plug updates, for
// the rest of the test (not parallel: the settings are the package's).
func fastWall(t *testing.T) {
	idle, every := wallIdle, wallEvery
	wallIdle, wallEvery = 300*time.Millisecond, 25*time.Millisecond
	t.Cleanup(func() { wallIdle, wallEvery = idle, every })
}

func keysOf(p results.Powered) []results.EnergyKey { _, k := p.EnergyKeys(); return k }

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRateRunWithWallPlug: a rate run reads the plug as a Kovara run
// does: each rate's window at 250 W, its tokens per joule its output
// tokens over 250 W × its time, the cost per million at 0.30 EUR a kWh
// from those (within 2 %), and its energy table names the rates.
func TestRateRunWithWallPlug(t *testing.T) {
	fastWall(t)
	server, plug := busyPlug(t)
	p := ratePlan(4, 8)
	p.OutputTokens = 60
	res, err := RunRate(context.Background(), p, setup.Endpoint{URL: server, Wall: plug}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	wall := res.Local.Wall
	if wall == nil || wall.IdleW == nil || *wall.IdleW != 100 {
		t.Fatalf("wall %+v", wall)
	}
	price := &results.Price{PerKWh: 0.30, Currency: "EUR"}
	table := results.EnergyTable(res, price)
	if table == nil {
		t.Fatal("no energy table")
	}
	measured := 0
	for i, row := range results.EnergyRows(keysOf(res), nil, wall, price) {
		if row.Whole {
			continue
		}
		lv := wall.Levels[i+1]
		if got, want := table.Rows[i][0], results.RateNumber(res.Levels[i].Rate); !strings.HasPrefix(got, want) {
			t.Errorf("row %d names %q, want rate %q", i, got, want)
		}
		if lv.EnergyJ == nil {
			continue
		}
		measured++
		tpj := float64(lv.OutputTokens) / (250 * lv.DurationS)
		cost := 0.30 / tpj * 1e6 / 3.6e6
		if row.WallTokensPerJ == nil || math.Abs(*row.WallTokensPerJ-tpj) > 0.02*tpj || row.CostPerMillion == nil || math.Abs(*row.CostPerMillion-cost) > 0.02*cost {
			t.Errorf("rate %s: %v tok/J, %v EUR per million; want %.4f, %.6f", row.Label, row.WallTokensPerJ, row.CostPerMillion, tpj, cost)
		}
	}
	if measured == 0 {
		t.Fatal("no rate has a wall figure")
	}
}

// TestTuneWithWallPlug: a settings comparison whose two settings differ
// only in a power limit their command before each turn sets (written to
// a file a stand-in Shelly reads: it draws the limit while a request is
// in flight, 100 W otherwise). The server's speed is the same, so the
// 200 W setting gets 300/200 = 1.5 times the tokens per joule at the
// wall: the verdict judges it better beyond noise and names it the
// cheaper per token (and not faster: the speed's verdict is its own),
// and the trade-off chart puts its rounds left of the 300 W setting's.
func TestTuneWithWallPlug(t *testing.T) {
	fastWall(t)
	cfg := fastSim()
	cfg.Models = []string{"m"}
	target := sim.New(cfg)
	t.Cleanup(func() { target.Close() })
	var inFlight atomic.Int64
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			inFlight.Add(1)
			defer inFlight.Add(-1)
		}
		target.ServeHTTP(w, r)
	}))
	t.Cleanup(server.Close)
	limit := filepath.Join(t.TempDir(), "power-limit")
	plug := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		power := 100.0
		if inFlight.Load() > 0 {
			b, _ := os.ReadFile(limit)
			if v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil {
				power = v
			}
		}
		fmt.Fprintf(w, `{"switch:0":{"id":0, "source":"init", "output":true, "apower":%.1f, "voltage":230.1},"sys":{"mac":"3C6105799168"}}`, power)
	}))
	t.Cleanup(plug.Close)
	inner := tinyTunePlan()
	inner.OutputTokens = 120 // levels long enough for tens of the plug's readings
	plan := setup.TunePlan{
		Settings: []setup.TuneSetting{
			{Name: "300 W", How: setup.ByModel, Model: "m", Before: "sh -c " + shellwords.Quote("echo 300 > "+limit)},
			{Name: "200 W", How: setup.ByModel, Model: "m", Before: "sh -c " + shellwords.Quote("echo 200 > "+limit)},
		},
		// Four rounds: three left a t interval on a busy machine up to
		// ±20 % of a 50 % change.
		Rounds: 4, Inner: inner, NoAnswers: true,
	}
	var log tuneLog
	res, err := RunTune(context.Background(), plan, setup.Endpoint{URL: server.URL, Wall: plug.URL}, log.observer())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Verdicts, func(v results.TuneVerdict) bool { return v.Concurrency == 2 && v.Metric == "wall_tokens_per_joule" })
	if i < 0 {
		t.Fatalf("no verdict on tokens per joule at the wall: %+v", res.Verdicts)
	}
	if v := res.Verdicts[i]; v.Verdict != results.TuneBetter || math.Abs(v.Change-0.5) > 0.1 {
		t.Errorf("200 W against 300 W: %+v, want better by about 50 %%", v)
	}
	if h := res.Headline(); !strings.Contains(h, "Per token, 200 W is cheaper to run than 300 W: tokens per joule at the wall +") || strings.Contains(h, "faster") {
		t.Errorf("headline %q should name the cheaper setting", h)
	}
	// The runs' levels drew their setting's limit at the wall: the
	// median level within 2 % (a level's edges, where no request is out
	// for a moment, read 100 W and pull a few down by a percent or two),
	// and its cost per million tokens at 0.30 EUR a kWh the limit's over
	// its tokens per second, within 2 % too.
	price := &results.Price{PerKWh: 0.30, Currency: "EUR"}
	for setting, limit := range map[string]float64{"300 W": 300, "200 W": 200} {
		type level struct{ power, cost, want float64 }
		var levels []level
		for _, f := range log.saved {
			if f.Local.Tune.Setting != setting {
				continue
			}
			for _, row := range results.EnergyRows(keysOf(f), nil, f.Local.Wall, price) {
				if row.Whole || row.WallPowerW == nil || row.CostPerMillion == nil {
					continue
				}
				lv := f.Local.Wall.Levels[atoi(t, row.Label)]
				want := 0.30 * limit * lv.DurationS / float64(lv.OutputTokens) * 1e6 / 3.6e6
				levels = append(levels, level{*row.WallPowerW, *row.CostPerMillion, want})
			}
		}
		if len(levels) == 0 {
			t.Fatalf("%s: no level read the plug", setting)
		}
		slices.SortFunc(levels, func(a, b level) int { return cmp.Compare(a.power, b.power) })
		m := levels[len(levels)/2]
		if math.Abs(m.power-limit) > 0.02*limit || math.Abs(m.cost-m.want) > 0.02*m.want {
			t.Errorf("%s: the median level drew %.1f W at %.6f EUR per million tokens, want %.0f W and %.6f EUR", setting, m.power, m.cost, limit, m.want)
		}
	}
	spec, ok := chart.TuneTradeOff(res, 2, chart.Light())
	if !ok || len(spec.Series) != 2 || len(spec.Series[0].X) != 4 || len(spec.Series[1].X) != 4 {
		t.Fatalf("trade-off chart %+v", spec.Series)
	}
	if slices.Max(spec.Series[1].X) >= slices.Min(spec.Series[0].X) {
		t.Errorf("joules per token: 200 W %v, 300 W %v; want 200 W's all lower", spec.Series[1].X, spec.Series[0].X)
	}
}
