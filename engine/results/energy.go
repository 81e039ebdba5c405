package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// What it costs to run (issue #49): every plan whose measured windows the
// GPU telemetry or the wall plug read has one energy table, the same
// columns for all of them, built here once from local.telemetry and
// local.wall. The cost is the energy priced by the person's own tariff,
// given when the figures are shown (the app's settings, --price-kwh), so
// a result read again after the tariff changed is priced anew.

// Price is what one kWh costs the person, in their currency.
type Price struct {
	PerKWh   float64
	Currency string
}

// ParsePrice checks a price per kWh and its currency as given by a flag
// or a settings field: a positive number below 100 (a price in cents or
// per MWh is the likeliest mistake above that) and a currency of one to
// eight letters or one symbol ("EUR", "USD", "€", "kr").
func ParsePrice(perKWh float64, currency string) (*Price, error) {
	currency = strings.TrimSpace(currency)
	switch {
	case math.IsNaN(perKWh) || perKWh <= 0:
		return nil, fmt.Errorf("the price per kWh must be above 0, like 0.32")
	case perKWh >= 100:
		return nil, fmt.Errorf("a price of %g per kWh is not likely: give it per kWh in whole units of the currency, like 0.32 (not cents)", perKWh)
	case currency == "":
		return nil, fmt.Errorf("the price needs its currency, like EUR or USD")
	case len([]rune(currency)) > 8:
		return nil, fmt.Errorf("the currency %q is too long: give a code like EUR or a symbol like €", currency)
	}
	for _, r := range currency {
		if !unicode.IsLetter(r) && !unicode.IsSymbol(r) {
			return nil, fmt.Errorf("the currency %q should be letters like EUR or a symbol like €", currency)
		}
	}
	return &Price{PerKWh: perKWh, Currency: currency}, nil
}

// String is "0.32 EUR/kWh".
func (p Price) String() string {
	return strconv.FormatFloat(p.PerKWh, 'f', -1, 64) + " " + p.Currency + "/kWh"
}

// joulesPerKWh: 1 kWh is 3.6 MJ.
const joulesPerKWh = 3.6e6

// Of is what energyJ joules cost.
func (p Price) Of(energyJ float64) float64 { return energyJ / joulesPerKWh * p.PerKWh }

// PerMillion is what a million output tokens cost at tokensPerJoule.
func (p Price) PerMillion(tokensPerJoule float64) float64 { return p.Of(1e6 / tokensPerJoule) }

// EnergyKey is one measured window of a plan: its key in
// local.telemetry.levels and local.wall.levels, and its name as the
// first cell of the plan's own table names it ("8", "2.5", "cold
// prefill").
type EnergyKey struct {
	Key   int
	Label string
}

// Powered is a result whose measured windows may have been read by a GPU
// source or a wall plug: each plan's result says its keys once.
type Powered interface {
	// EnergyKeys are the windows in the order of the plan's table, and
	// the heading of their first column.
	EnergyKeys() (heading string, keys []EnergyKey)
	// Power is what the GPU source and the wall plug saw; either is nil
	// without one.
	Power() (*Telemetry, *WallTelemetry)
}

// EnergyRow is one window's energy, or the whole run's (Whole). Nil
// where it was not measured.
type EnergyRow struct {
	Label string
	Whole bool
	// GPU: mean power over the window, output tokens per joule.
	GPUPowerW, GPUTokensPerJ *float64
	// The wall: mean power, the idle, the part above it, the whole
	// energy, output tokens per joule whole and above idle.
	WallPowerW, WallIdleW, WallAboveIdleW, WallEnergyJ, WallTokensPerJ, WallTokensPerJAboveIdle *float64
	// CostPerMillion prices a million output tokens at the wall's whole
	// energy (the bill), or the GPU's where no plug was read.
	CostPerMillion *float64
	// Short: the plug gave fewer than three readings in the window.
	Short bool
}

// EnergyRows are the windows of keys that a source read, in their order,
// then the whole run's when there is more than one: its energy summed,
// its power the energy over the windows' time. nil when neither source
// read any.
func EnergyRows(keys []EnergyKey, tel *Telemetry, wall *WallTelemetry, price *Price) []EnergyRow {
	var rows []EnergyRow
	var gpuJ, gpuS, gpuTok, wallJ, wallS, wallTok, aboveJ float64
	gpuAll, wallAll := true, true
	for _, k := range keys {
		var g *LevelTelemetry
		var w *WallLevel
		if tel != nil {
			if lv, ok := tel.Levels[k.Key]; ok {
				g = &lv
			}
		}
		if wall != nil {
			if lv, ok := wall.Levels[k.Key]; ok {
				w = &lv
			}
		}
		if g == nil && w == nil {
			continue
		}
		r := EnergyRow{Label: k.Label}
		if g != nil {
			r.GPUPowerW, r.GPUTokensPerJ = g.MeanPowerW, g.TokensPerJoule
			if g.EnergyJ != nil && *g.EnergyJ > 0 {
				gpuJ, gpuS, gpuTok = gpuJ+*g.EnergyJ, gpuS+g.DurationS, gpuTok+float64(g.OutputTokens)
			} else {
				gpuAll = false
			}
		} else {
			gpuAll = false
		}
		if w != nil {
			r.WallPowerW, r.WallAboveIdleW, r.WallEnergyJ = w.MeanPowerW, w.AboveIdleW, w.EnergyJ
			r.WallTokensPerJ, r.WallTokensPerJAboveIdle, r.Short = w.TokensPerJoule, w.TokensPerJouleAboveIdle, w.Short
			r.WallIdleW = wall.IdleW
			if w.EnergyJ != nil && *w.EnergyJ > 0 {
				wallJ, wallS, wallTok = wallJ+*w.EnergyJ, wallS+w.DurationS, wallTok+float64(w.OutputTokens)
				if w.AboveIdleJ != nil {
					aboveJ += *w.AboveIdleJ
				}
			} else {
				wallAll = false
			}
		} else {
			wallAll = false
		}
		r.CostPerMillion = costPerMillion(price, r.WallTokensPerJ, r.GPUTokensPerJ)
		rows = append(rows, r)
	}
	if len(rows) < 2 {
		return rows
	}
	whole := EnergyRow{Label: "whole run", Whole: true}
	if tel != nil && gpuAll && gpuS > 0 {
		whole.GPUPowerW = ptrTo(gpuJ / gpuS)
		if gpuTok > 0 {
			whole.GPUTokensPerJ = ptrTo(gpuTok / gpuJ)
		}
	}
	if wall != nil && wallAll && wallS > 0 {
		whole.WallPowerW, whole.WallEnergyJ, whole.WallIdleW = ptrTo(wallJ/wallS), ptrTo(wallJ), wall.IdleW
		if wall.IdleW != nil {
			whole.WallAboveIdleW = ptrTo(aboveJ / wallS)
			if aboveJ > 0 && wallTok > 0 {
				whole.WallTokensPerJAboveIdle = ptrTo(wallTok / aboveJ)
			}
		}
		if wallTok > 0 {
			whole.WallTokensPerJ = ptrTo(wallTok / wallJ)
		}
	}
	whole.CostPerMillion = costPerMillion(price, whole.WallTokensPerJ, whole.GPUTokensPerJ)
	return append(rows, whole)
}

// costPerMillion prices a million tokens at the wall's tokens per joule,
// else the GPU's.
func costPerMillion(price *Price, wall, gpu *float64) *float64 {
	if price == nil {
		return nil
	}
	for _, tpj := range []*float64{wall, gpu} {
		if tpj != nil && *tpj > 0 {
			return ptrTo(price.PerMillion(*tpj))
		}
	}
	return nil
}

func ptrTo(v float64) *float64 { return &v }

// energyColumn is one column of the energy table: its heading (what,
// then the unit), its name in a CSV (the names the issue promised
// spreadsheets), and its cell.
type energyColumn struct {
	heading, csv string
	gpu, wall    bool // shown when the run had a GPU source, a wall plug
	cost         bool // shown when a price was given
	cell         func(EnergyRow) string
}

var energyColumns = []energyColumn{
	{heading: "GPU\nW", csv: "gpu_power_w", gpu: true, cell: func(r EnergyRow) string { return Num(r.GPUPowerW, 0) }},
	{heading: "GPU\ntok/J", csv: "gpu_tokens_per_joule", gpu: true, cell: func(r EnergyRow) string { return Num(r.GPUTokensPerJ, 3) }},
	{heading: "Wall\nW", csv: "wall_power_w", wall: true, cell: func(r EnergyRow) string { return Num(r.WallPowerW, 1) }},
	{heading: "Idle\nW", csv: "wall_idle_w", wall: true, cell: func(r EnergyRow) string { return Num(r.WallIdleW, 1) }},
	{heading: "Above\nidle W", csv: "wall_above_idle_w", wall: true, cell: func(r EnergyRow) string { return Num(r.WallAboveIdleW, 1) }},
	{heading: "Wall\nenergy J", csv: "wall_energy_j", wall: true, cell: func(r EnergyRow) string { return Num(r.WallEnergyJ, 0) }},
	{heading: "Wall\ntok/J", csv: "wall_tokens_per_joule", wall: true, cell: func(r EnergyRow) string { return Num(r.WallTokensPerJ, 3) }},
	{heading: "Above idle\ntok/J", csv: "wall_tokens_per_joule_above_idle", wall: true, cell: func(r EnergyRow) string { return Num(r.WallTokensPerJAboveIdle, 3) }},
	// The cost's heading begins with the currency: "EUR per\n1M tok".
	{heading: costHeading, csv: "cost_per_million_tokens", cost: true, cell: func(r EnergyRow) string { return Num(r.CostPerMillion, 4) }},
}

// costHeading is the cost column's heading after its currency.
const costHeading = " per\n1M tok"

// EnergyCSVName is the CSV column name of an energy table's heading
// (either line form; the cost's after its currency) or of the
// Kovara table's GPU power and tokens per joule, or "" for any other.
func EnergyCSVName(heading string) string {
	flat := Flat(heading)
	// The Kovara table's own GPU columns are the same figures.
	switch flat {
	case Flat(EnergyColumns[0]):
		return "gpu_power_w"
	case Flat(EnergyColumns[2]):
		return "gpu_tokens_per_joule"
	}
	for _, c := range energyColumns {
		if c.cost && strings.HasSuffix(flat, Flat(costHeading)) || Flat(c.heading) == flat {
			return c.csv
		}
	}
	return ""
}

// EnergyTitle is the energy table's title wherever it is shown.
const EnergyTitle = "Energy and cost"

// EnergyTable is p's energy table: its first column the plan's own, then
// the GPU's columns when it had a GPU source, the wall's when it had a
// plug, and the cost when a price was given (its heading names the
// currency). Nil when neither source read any window.
func EnergyTable(p Powered, price *Price) *Table {
	heading, keys := p.EnergyKeys()
	tel, wall := p.Power()
	rows := EnergyRows(keys, tel, wall, price)
	if len(rows) == 0 {
		return nil
	}
	t := &Table{Columns: []string{heading}}
	var cols []energyColumn
	for _, c := range energyColumns {
		if c.gpu && tel == nil || c.wall && wall == nil || c.cost && price == nil {
			continue
		}
		h := c.heading
		if c.cost {
			h = price.Currency + h
		}
		t.Columns = append(t.Columns, h)
		cols = append(cols, c)
	}
	for _, r := range rows {
		label := r.Label
		if r.Short {
			label += " (short for the plug)"
		}
		row := []string{label}
		for _, c := range cols {
			row = append(row, c.cell(r))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// EnergyNotes say how the energy table's figures were made, under it:
// the idle window, what the cost is priced at, the run's whole energy,
// and how to see a cost when no price was given.
func EnergyNotes(p Powered, price *Price) []string {
	_, keys := p.EnergyKeys()
	tel, wall := p.Power()
	rows := EnergyRows(keys, tel, wall, price)
	if len(rows) == 0 {
		return nil
	}
	var notes []string
	if wall != nil && wall.IdleW != nil {
		notes = append(notes, fmt.Sprintf("Idle is the wall plug's mean over %.0f s read before anything was sent; above idle is the load's own cost, the whole figure the bill.", wall.IdleS))
	}
	last := rows[len(rows)-1]
	switch {
	case last.WallEnergyJ != nil:
		s := fmt.Sprintf("The measured windows drew %s at the wall", energyWords(*last.WallEnergyJ))
		if price != nil {
			s += fmt.Sprintf(", %s at %s", money(price.Of(*last.WallEnergyJ), price.Currency), price)
		}
		notes = append(notes, s+".")
	case wall == nil && tel != nil:
		if price != nil {
			notes = append(notes, fmt.Sprintf("The cost is the GPUs' energy alone at %s: the rest of the machine is not in it (a wall plug would add it).", price))
		}
	}
	if price == nil {
		notes = append(notes, "Give a price per kWh (the app's settings, or --price-kwh and --currency) to see the cost per million tokens.")
	}
	return notes
}

// energyWords is joules as people read an energy: "840 J", "12.4 kJ
// (3.4 Wh)".
func energyWords(j float64) string {
	if j < 1000 {
		return strconv.FormatFloat(j, 'f', 0, 64) + " J"
	}
	return fmt.Sprintf("%.1f kJ (%.2f Wh)", j/1000, j/3600)
}

// money is an amount with enough decimals to show a small one.
func money(v float64, currency string) string {
	prec := 2
	for a := math.Abs(v); prec < 6 && a > 0 && a < math.Pow(10, float64(1-prec)); prec++ {
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + " " + currency
}

// Each plan's windows, in the order of its table. A plan whose engine
// records no window (capacity, tune, answers) has none.

// EnergyKeys: a Kovara run's levels, keyed by concurrency.
func (f *File) EnergyKeys() (string, []EnergyKey) {
	var keys []EnergyKey
	for _, r := range f.Runs {
		keys = append(keys, EnergyKey{r.Concurrency, strconv.Itoa(r.Concurrency)})
	}
	return "Concurrency", keys
}

// Power is local.telemetry and local.wall.
func (f *File) Power() (*Telemetry, *WallTelemetry) { return f.Local.Telemetry, f.Local.Wall }

// EnergyKeys: a speculative-decoding run's levels, keyed by concurrency.
func (r *SpecDecResult) EnergyKeys() (string, []EnergyKey) {
	var keys []EnergyKey
	for _, l := range r.Levels {
		keys = append(keys, EnergyKey{l.Concurrency, strconv.Itoa(l.Concurrency)})
	}
	return "Concurrency", keys
}

// Power is local.telemetry and local.wall.
func (r *SpecDecResult) Power() (*Telemetry, *WallTelemetry) { return r.Local.Telemetry, r.Local.Wall }

// EnergyKeys: a rate sweep's rates, keyed by the order they ran in
// (1 the first), named as the table names them.
func (r *RateResult) EnergyKeys() (string, []EnergyKey) {
	order := map[*RateLevel]int{}
	for i := range r.Levels {
		order[&r.Levels[i]] = i + 1
	}
	var keys []EnergyKey
	for _, l := range r.Sorted() {
		if !l.Partial {
			keys = append(keys, EnergyKey{order[l], RateNumber(l.Rate)})
		}
	}
	return Flat(RateColumns[0]), keys
}

// Power is local.telemetry and local.wall.
func (r *RateResult) Power() (*Telemetry, *WallTelemetry) { return r.Local.Telemetry, r.Local.Wall }

// EnergyKeys: the three stages, keyed 1 (every single-user answer), 2
// (the cold prefill) and 3 (the users at once).
func (r *StagesResult) EnergyKeys() (string, []EnergyKey) {
	keys := []EnergyKey{{1, "1 user (every prompt)"}, {2, "cold prefill"}}
	users := "users at once"
	if r.Users != nil {
		users = fmt.Sprintf("%d users at once", r.Users.Users)
	}
	return StagesColumns[0], append(keys, EnergyKey{3, users})
}

// Power is local.telemetry and local.wall.
func (r *StagesResult) Power() (*Telemetry, *WallTelemetry) { return r.Local.Telemetry, r.Local.Wall }

// EnergyKeys: a context run's depths, keyed by the depth in tokens.
func (r *ContextResult) EnergyKeys() (string, []EnergyKey) {
	var keys []EnergyKey
	for _, d := range r.Depths {
		if !d.Partial {
			keys = append(keys, EnergyKey{d.Depth, DepthName(d.Depth)})
		}
	}
	return Flat(ContextColumns[0]), keys
}

// Power is local.telemetry and local.wall.
func (r *ContextResult) Power() (*Telemetry, *WallTelemetry) { return r.Local.Telemetry, r.Local.Wall }

// WarnThrottle: a GPU slowed itself during a measured window (its
// telemetry's clock event reasons; hardware.go).
const WarnThrottle = "throttle"

// HardwareSaid is what p's GPUs did in each measured window that a
// reader must know (Telemetry.HardwareFindings): each finding named by
// its window ("concurrency 8: GPU 0 slowed itself…"), the problems and
// the notes apart.
func HardwareSaid(p Powered) (problems, notes []string) {
	tel, _ := p.Power()
	if tel == nil {
		return nil, nil
	}
	heading, keys := p.EnergyKeys()
	say := func(f HardwareFinding, text string) {
		if f.Severity == SeverityProblem {
			problems = append(problems, text)
		} else {
			notes = append(notes, text)
		}
	}
	for _, k := range keys {
		for _, f := range HardwareFindings(tel, k.Key) {
			say(f, strings.ToLower(heading[:1])+heading[1:]+" "+k.Label+": "+f.Text)
		}
	}
	// What held for the whole run: other programs on the cards.
	for _, f := range RunFindings(tel) {
		say(f, f.Text)
	}
	return problems, notes
}
