package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The cards a three-stage run read, reported the way the cmp.wiki
// protocol does (docs/plans.md, "GPUs"): only from nvidia-smi where the
// server runs — a local or an ssh telemetry source — with the link each
// card ran at under load, its power cap, its peak power, its memory and
// its driver.

// StagesGPUs is the three-stage document's gpus.
type StagesGPUs struct {
	Source GPUSourceKind `json:"source"`
	// Caution says why the cards may not be the server's: read on this
	// machine while the endpoint is another, or over ssh on another host
	// than the endpoint's. Empty when they are the server's own.
	Caution string    `json:"caution,omitempty"`
	Cards   []GPUCard `json:"cards"`
}

// GPUCard is one card of StagesGPUs.
type GPUCard struct {
	Index       int    `json:"index"`
	Name        string `json:"name"`
	PCIDeviceID string `json:"pci_device_id,omitempty"`
	// The PCIe link under load: the highest generation and width the
	// samples saw during the measured stages (links train down when
	// idle), else what the inventory read at the start.
	PCIeGenLoad    *int     `json:"pcie_gen_load"`
	PCIeWidthLoad  *int     `json:"pcie_width_load"`
	PowerLimitW    *float64 `json:"power_limit_w"`
	PeakPowerW     *float64 `json:"peak_power_w"`
	MemoryTotalMiB *float64 `json:"memory_total_mib"`
	Driver         string   `json:"driver,omitempty"`
}

// CardsFrom folds a run's telemetry into one card a GPU: the inventory,
// and the peaks of every measured stage's window.
func CardsFrom(t *Telemetry) []GPUCard {
	if t == nil {
		return nil
	}
	cards := make([]GPUCard, 0, len(t.Inventory))
	for _, g := range t.Inventory {
		c := GPUCard{Index: g.Index, Name: g.DisplayName(), PCIDeviceID: g.PCIDeviceID,
			PCIeGenLoad: g.PCIeGenCurrent, PCIeWidthLoad: g.PCIeWidthCurrent,
			PowerLimitW: g.PowerLimitW, MemoryTotalMiB: g.MemoryTotalMiB, Driver: g.DriverVersion}
		var gen, width *int
		for _, key := range intKeys(t.Levels) {
			for _, e := range t.Levels[key].GPUs {
				if e.Index != g.Index {
					continue
				}
				gen, width = maxInt(gen, e.PCIeGenPeak), maxInt(width, e.PCIeWidthPeak)
				c.PeakPowerW = maxFloat(c.PeakPowerW, e.PeakPowerW)
			}
		}
		if gen != nil {
			c.PCIeGenLoad = gen
		}
		if width != nil {
			c.PCIeWidthLoad = width
		}
		cards = append(cards, c)
	}
	return cards
}

func intKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func maxInt(a, b *int) *int {
	if a == nil || (b != nil && *b > *a) {
		return b
	}
	return a
}

func maxFloat(a, b *float64) *float64 {
	if a == nil || (b != nil && *b > *a) {
		return b
	}
	return a
}

// CardColumns and CardRows are the GPU table the CLI prints and the app
// shows under a three-stage result: one row a card.
var CardColumns = []string{"GPU", "Name", "Device", "PCIe under load", "Power cap W", "Peak power W", "Memory MiB", "Driver"}

// CardRows are the rows of the GPU table.
func (g *StagesGPUs) CardRows() [][]string {
	if g == nil {
		return nil
	}
	rows := make([][]string, 0, len(g.Cards))
	for _, c := range g.Cards {
		rows = append(rows, []string{strconv.Itoa(c.Index), c.Name, dashIfEmpty(c.PCIDeviceID),
			dashIfEmpty(linkText(c.PCIeGenLoad, c.PCIeWidthLoad)), wholeOrDash(c.PowerLimitW), wholeOrDash(c.PeakPowerW),
			wholeOrDash(c.MemoryTotalMiB), dashIfEmpty(c.Driver)})
	}
	return rows
}

// Heading is the line above the GPU table: where the cards were read,
// and the caution when they may not be the server's.
func (g *StagesGPUs) Heading() string {
	if g == nil {
		return ""
	}
	h := "GPUs read on this machine"
	if g.Source == GPUSourceSSH {
		h = "GPUs read over ssh"
	}
	if g.Caution != "" {
		h += " (" + g.Caution + ")"
	}
	return h
}

func linkText(gen, width *int) string {
	switch {
	case gen != nil && width != nil:
		return fmt.Sprintf("Gen%d x%d", *gen, *width)
	case gen != nil:
		return fmt.Sprintf("Gen%d", *gen)
	case width != nil:
		return fmt.Sprintf("x%d", *width)
	}
	return ""
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func wholeOrDash(v *float64) string {
	if v == nil {
		return "—"
	}
	return strconv.FormatFloat(math.Round(*v), 'f', 0, 64)
}

// wikiFields are the cards' fields of the wiki block, in order: the cards
// ("2× NVIDIA GeForce RTX 3090", or each name once, joined), their count,
// the PCIe link and width under load ("Gen4", "x16", or "mixed (…)"), the
// power cap ("350 W", or "300-350 W") and the driver when all share one.
func (g *StagesGPUs) wikiFields() [][2]string {
	if g == nil || len(g.Cards) == 0 {
		return nil
	}
	var names []string
	count := map[string]int{}
	for _, c := range g.Cards {
		if count[c.Name] == 0 {
			names = append(names, c.Name)
		}
		count[c.Name]++
	}
	var cards []string
	for _, n := range names {
		if count[n] > 1 {
			cards = append(cards, fmt.Sprintf("%d× %s", count[n], n))
		} else {
			cards = append(cards, n)
		}
	}
	out := [][2]string{{"cards", strings.Join(cards, " + ")}, {"card_count", strconv.Itoa(len(g.Cards))}}
	gens, widths, caps, drivers := map[int]bool{}, map[int]bool{}, []float64{}, map[string]bool{}
	for _, c := range g.Cards {
		if c.PCIeGenLoad != nil {
			gens[*c.PCIeGenLoad] = true
		}
		if c.PCIeWidthLoad != nil {
			widths[*c.PCIeWidthLoad] = true
		}
		if c.PowerLimitW != nil {
			caps = append(caps, math.Round(*c.PowerLimitW))
		}
		if c.Driver != "" {
			drivers[c.Driver] = true
		}
	}
	if v := oneOrMixed(gens, "Gen%d"); v != "" {
		out = append(out, [2]string{"pcie_link", v})
	}
	if v := oneOrMixed(widths, "x%d"); v != "" {
		out = append(out, [2]string{"pcie_width", v})
	}
	if len(caps) > 0 {
		lo, hi := slices.Min(caps), slices.Max(caps)
		v := fmt.Sprintf("%.0f W", lo)
		if hi != lo {
			v = fmt.Sprintf("%.0f-%.0f W", lo, hi)
		}
		out = append(out, [2]string{"power_cap", v})
	}
	if len(drivers) == 1 {
		for d := range drivers {
			out = append(out, [2]string{"driver", d})
		}
	}
	return out
}

// oneOrMixed is the one value of set in format, "mixed (a, b)" for more,
// "" for none.
func oneOrMixed(set map[int]bool, format string) string {
	keys := intKeys(set)
	switch len(keys) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(format, keys[0])
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf(format, k)
	}
	return "mixed (" + strings.Join(parts, ", ") + ")"
}
