package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// powerFile is a finished Kovara run of two levels that a GPU source and
// a wall plug (at a private address) read.
func powerFile(t *testing.T) *results.File {
	v := func(x float64) *float64 { return &x }
	f := planstest.LlamaKovara(t)
	if len(f.Runs) < 2 {
		t.Fatalf("the capture has %d levels, want 2 or more", len(f.Runs))
	}
	f.Runs = f.Runs[:2]
	f.Local.PartialRun = nil
	a, b := f.Runs[0].Concurrency, f.Runs[1].Concurrency
	f.Local.Telemetry = &results.Telemetry{Host: "gpubox.lan", Levels: map[int]results.LevelTelemetry{
		a: {Concurrency: 1, LevelEnergy: results.LevelEnergy{DurationS: 10, EnergyJ: v(2000), MeanPowerW: v(200)}, OutputTokens: 1000, TokensPerJoule: v(0.5)},
		b: {Concurrency: 8, LevelEnergy: results.LevelEnergy{DurationS: 10, EnergyJ: v(3000), MeanPowerW: v(300),
			ThrottledShare: v(0.4), ClockEventS: map[string]float64{"sw_power_cap": 4}, SMClockShare: v(0.88), PeakTempC: v(79)}, OutputTokens: 6000, TokensPerJoule: v(2)},
	}}
	// Another program on the card: its name is the person's own.
	procs := []results.GPUProcess{{GPU: 0, PID: 4242, Name: "/home/me/secret-trainer.py", UsedMiB: v(6000)}}
	f.Local.Telemetry.GPUProcesses = &results.GPUProcesses{Start: procs, End: procs}
	f.Local.Wall = &results.WallTelemetry{Family: "shelly-gen2", Host: "plug-under-the-desk.lan", IdleW: v(100), IdleS: 5,
		Warnings: []string{"the wall plug at plug-under-the-desk.lan missed a reading"},
		Series:   &results.WallSeries{TS: []float64{0, 6, 12, 18, 24}, PowerW: []float64{100, 300, 300, 500, 500}},
		Levels: map[int]results.WallLevel{
			a: {StartS: 5, EndS: 15, DurationS: 10, MeanPowerW: v(300), EnergyJ: v(3000), AboveIdleW: v(200), AboveIdleJ: v(2000), OutputTokens: 1000, TokensPerJoule: v(1000.0 / 3000), TokensPerJouleAboveIdle: v(0.5)},
			b: {StartS: 15, EndS: 25, DurationS: 10, MeanPowerW: v(500), EnergyJ: v(5000), AboveIdleW: v(400), AboveIdleJ: v(4000), OutputTokens: 6000, TokensPerJoule: v(1.2), TokensPerJouleAboveIdle: v(1.5)},
		}}
	return f
}

// The CSV of a run that read power carries the energy table's figures
// on each level's row under the names a spreadsheet looks for, the
// whole run on a row of its own; the Markdown and the HTML have the
// table; none says the plug's or the GPU host's address, or the name of
// another program on the card.
func TestEnergyInReports(t *testing.T) {
	t.Parallel()
	d := plans.Kovara{File: powerFile(t)}
	price := &results.Price{PerKWh: 0.30, Currency: "EUR"}
	r, err := Of(d, WithPrice(price))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := CSV(&b, r); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	head := recs[0]
	col := func(name string) int {
		i := slices.Index(head, name)
		if i < 0 {
			t.Fatalf("no %q among the headers %q", name, head)
		}
		return i
	}
	for _, c := range []struct {
		row   int
		name  string
		value string
	}{
		{1, "gpu_power_w", "200"}, {2, "gpu_power_w", "300"}, {2, "gpu_tokens_per_joule", "2.00"},
		{1, "wall_power_w", "300.0"}, {1, "wall_idle_w", "100.0"}, {1, "wall_energy_j", "3000"}, {2, "wall_tokens_per_joule", "1.200"},
		{2, "cost_per_million_tokens", "0.0694"}, // 0.30 EUR × 1e6 / 1.2 tok/J / 3.6e6 J
		{3, "wall_energy_j", "8000"},             // the whole run
		{2, "Slowed % of time", "40.0"}, {2, "Slowed for", "power cap"}, {1, "Slowed % of time", ""},
	} {
		if got := recs[c.row][col(c.name)]; got != c.value {
			t.Errorf("row %d %s = %q, want %q (%q)", c.row, c.name, got, c.value, recs[c.row])
		}
	}
	if got := recs[3][0]; got != "whole run" {
		t.Errorf("the last row is %q, want the whole run's", recs[3])
	}
	if n := strings.Count(strings.Join(head, ","), "gpu_power_w"); n != 1 {
		t.Errorf("gpu_power_w is %d columns: %q", n, head)
	}
	sd, err := Shareable(d)
	if err != nil {
		t.Fatal(err)
	}
	shared, err := sd.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(r)
	var page bytes.Buffer
	if err := HTML(&page, []plans.Doc{d}, nil, WithPrice(price)); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"csv": b.String(), "markdown": md, "html": page.String(), "shareable document": string(shared)} {
		if strings.Contains(text, "plug-under-the-desk") || strings.Contains(text, "gpubox") {
			t.Errorf("the %s says a private address", name)
		}
		if strings.Contains(text, "secret-trainer") {
			t.Errorf("the %s names another program on the card", name)
		}
	}
	if !strings.Contains(md, results.EnergyTitle) || !strings.Contains(md, "EUR per 1M tok") {
		t.Errorf("the Markdown has no energy table:\n%s", md)
	}
	if !strings.Contains(page.String(), "Power over the run") {
		t.Error("the HTML page has no power chart")
	}
	// What the card did: its table in the Markdown and the HTML, its
	// chart in the HTML.
	if !strings.Contains(md, results.HardwareTitle) || !strings.Contains(md, "power cap") || !strings.Contains(md, "40.0") {
		t.Errorf("the Markdown does not say the card was capped for 40 %% of level 8:\n%s", md)
	}
	if !strings.Contains(page.String(), results.HardwareTitle) || !strings.Contains(page.String(), "What the cards did") {
		t.Error("the HTML page has no hardware table or chart")
	}
}

// TestEnergyOfCapturedRun: a real llama-server run read by a plug
// (planstest.LlamaKovaraWall) reports its wall figures on each level's
// CSV row, under the names promised, as a spreadsheet reads them, and its
// HTML page draws the power over the run; neither says the plug's
// address.
func TestEnergyOfCapturedRun(t *testing.T) {
	t.Parallel()
	f := planstest.LlamaKovaraWall(t)
	d := plans.Kovara{File: f}
	price := &results.Price{PerKWh: 0.32, Currency: "EUR"}
	r, err := Of(d, WithPrice(price))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := CSV(&b, r); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(f.Runs)+2 {
		t.Fatalf("%d records, want a header, a row a level and the whole run's:\n%s", len(recs), b.String())
	}
	for _, name := range []string{"wall_power_w", "wall_idle_w", "wall_energy_j", "wall_tokens_per_joule", "cost_per_million_tokens"} {
		i := slices.Index(recs[0], name)
		if i < 0 {
			t.Fatalf("no %s among %q", name, recs[0])
		}
		for _, rec := range recs[1:] {
			if _, err := strconv.ParseFloat(rec[i], 64); err != nil {
				t.Errorf("%s of %q is %q, not a figure", name, rec[0], rec[i])
			}
		}
	}
	var page bytes.Buffer
	if err := HTML(&page, []plans.Doc{d}, nil, WithPrice(price)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `alt="Power over the run"`) {
		t.Error("the page draws no power over the run")
	}
	for name, text := range map[string]string{"csv": b.String(), "html": page.String()} {
		if strings.Contains(text, "127.0.0.1:8099") {
			t.Errorf("the %s says the plug's address", name)
		}
	}
}
