package results

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// Every plan whose engine records measured windows (session.gpuWindow)
// says its keys: a plan left out would show no energy anywhere.
var (
	_ Powered = (*File)(nil)
	_ Powered = (*SpecDecResult)(nil)
	_ Powered = (*RateResult)(nil)
	_ Powered = (*StagesResult)(nil)
	_ Powered = (*ContextResult)(nil)
)

func TestParsePrice(t *testing.T) {
	for _, c := range []struct {
		perKWh   float64
		currency string
		ok       bool
	}{
		{0.32, "EUR", true}, {0.32, " € ", true}, {0.12, "kr", true},
		{0, "EUR", false}, {-1, "EUR", false}, {math.NaN(), "EUR", false},
		{32, "EUR", true}, {320, "EUR", false}, // cents, not a price per kWh
		{0.32, "", false}, {0.32, "E1", false}, {0.32, "EURODOLLAR", false},
	} {
		p, err := ParsePrice(c.perKWh, c.currency)
		if got := err == nil; got != c.ok {
			t.Errorf("ParsePrice(%v, %q) = %v, %v; want ok %v", c.perKWh, c.currency, p, err, c.ok)
		}
	}
	p := Price{PerKWh: 0.30, Currency: "EUR"}
	// 1 kWh is 3.6 MJ: 3.6 MJ costs 0.30, and a million tokens at 2 tok/J
	// take 0.5 MJ.
	if got := p.Of(3.6e6); math.Abs(got-0.30) > 1e-12 {
		t.Errorf("Of(3.6 MJ) = %v, want 0.30", got)
	}
	if got, want := p.PerMillion(2), 0.30*0.5e6/3.6e6; math.Abs(got-want) > 1e-12 {
		t.Errorf("PerMillion(2 tok/J) = %v, want %v", got, want)
	}
}

// energyDoc is a Kovara file with two levels read by both sources.
func energyDoc(wall, gpu bool) *File {
	f := &File{Runs: []Run{{Concurrency: 1}, {Concurrency: 8}}}
	v := func(x float64) *float64 { return &x }
	if gpu {
		f.Local.Telemetry = &Telemetry{Levels: map[int]LevelTelemetry{
			1: {Concurrency: 1, LevelEnergy: LevelEnergy{DurationS: 10, EnergyJ: v(2000), MeanPowerW: v(200)}, OutputTokens: 1000, TokensPerJoule: v(0.5)},
			8: {Concurrency: 8, LevelEnergy: LevelEnergy{DurationS: 10, EnergyJ: v(3000), MeanPowerW: v(300)}, OutputTokens: 6000, TokensPerJoule: v(2)},
		}}
	}
	if wall {
		f.Local.Wall = &WallTelemetry{IdleW: v(100), IdleS: 5, Levels: map[int]WallLevel{
			1: {DurationS: 10, MeanPowerW: v(300), EnergyJ: v(3000), AboveIdleW: v(200), AboveIdleJ: v(2000), OutputTokens: 1000, TokensPerJoule: v(1000.0 / 3000), TokensPerJouleAboveIdle: v(0.5)},
			8: {DurationS: 10, MeanPowerW: v(500), EnergyJ: v(5000), AboveIdleW: v(400), AboveIdleJ: v(4000), OutputTokens: 6000, TokensPerJoule: v(6000.0 / 5000), TokensPerJouleAboveIdle: v(1.5)},
		}}
	}
	return f
}

func TestEnergyTable(t *testing.T) {
	price := &Price{PerKWh: 0.30, Currency: "EUR"}
	for _, c := range []struct {
		name      string
		wall, gpu bool
		price     *Price
		columns   []string
		// The whole run's row.
		whole []string
	}{
		{"wall and GPU, priced", true, true, price,
			[]string{"gpu_power_w", "gpu_tokens_per_joule", "wall_power_w", "wall_idle_w", "wall_above_idle_w", "wall_energy_j", "wall_tokens_per_joule", "wall_tokens_per_joule_above_idle", "cost_per_million_tokens"},
			// 5000 J over 20 s; 7000 tokens over 8000 J; 0.875 tok/J at
			// the wall prices a million at 0.30 × 1e6/0.875/3.6e6.
			[]string{"whole run", "250", "1.400", "400.0", "100.0", "300.0", "8000", "0.875", "1.167", "0.0952"}},
		{"GPU only, unpriced", false, true, nil, []string{"gpu_power_w", "gpu_tokens_per_joule"}, []string{"whole run", "250", "1.400"}},
		{"wall only, priced", true, false, price,
			[]string{"wall_power_w", "wall_idle_w", "wall_above_idle_w", "wall_energy_j", "wall_tokens_per_joule", "wall_tokens_per_joule_above_idle", "cost_per_million_tokens"},
			[]string{"whole run", "400.0", "100.0", "300.0", "8000", "0.875", "1.167", "0.0952"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := energyDoc(c.wall, c.gpu)
			tbl := EnergyTable(f, c.price)
			if tbl == nil {
				t.Fatal("no table")
			}
			var names []string
			for _, h := range tbl.Columns[1:] {
				names = append(names, EnergyCSVName(h))
			}
			if !slices.Equal(names, c.columns) {
				t.Errorf("columns %q, want %q", names, c.columns)
			}
			if got := tbl.Rows[len(tbl.Rows)-1]; !slices.Equal(got, c.whole) {
				t.Errorf("whole run %q, want %q", got, c.whole)
			}
		})
	}
	if EnergyTable(energyDoc(false, false), price) != nil {
		t.Error("a run that read no power has an energy table")
	}
	notes := strings.Join(EnergyNotes(energyDoc(true, false), price), "\n")
	if !strings.Contains(notes, "8.0 kJ (2.22 Wh) at the wall") || !strings.Contains(notes, "0.00067 EUR at 0.3 EUR/kWh") {
		t.Errorf("notes %q should give the run's energy and its price", notes)
	}
	if notes := strings.Join(EnergyNotes(energyDoc(true, false), nil), "\n"); !strings.Contains(notes, "--price-kwh") {
		t.Errorf("notes %q should say how to see a cost", notes)
	}
}
