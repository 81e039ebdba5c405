package hw

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kovara/desktop/internal/clip"
	"github.com/kovara/desktop/telemetry"
)

// Summary is a short inventory line for the Test screen: "2 × NVIDIA
// GeForce RTX 3090 (24576 MiB), driver 550.54.14"; mixed cards are listed
// one by one.
func Summary(gpus []telemetry.GPU) string {
	if len(gpus) == 0 {
		return "no GPUs found"
	}
	same := true
	for _, g := range gpus[1:] {
		if g.Name != gpus[0].Name || !sameFloat(g.MemoryTotalMiB, gpus[0].MemoryTotalMiB) {
			same = false
		}
	}
	var s string
	if same {
		s = fmt.Sprintf("%d × %s", len(gpus), gpus[0].DisplayName())
		if gpus[0].MemoryTotalMiB != nil {
			s += fmt.Sprintf(" (%.0f MiB)", *gpus[0].MemoryTotalMiB)
		}
	} else {
		names := make([]string, len(gpus))
		for i, g := range gpus {
			names[i] = g.DisplayName()
		}
		s = strings.Join(names, " + ")
	}
	if d := gpus[0].DriverVersion; d != "" {
		s += ", driver " + d
	}
	return s
}

func sameFloat(a, b *float64) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

var busRe = regexp.MustCompile(`^(?:([0-9A-Fa-f]{1,8}):)?([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$`)

// normBus writes a PCI address the way lspci -D does: nvidia-smi's
// "00000000:41:00.0" and lspci's "41:00.0" both become "0000:41:00.0".
// Anything else is returned trimmed and lower-cased.
func normBus(s string) string {
	s = strings.TrimSpace(s)
	m := busRe.FindStringSubmatch(s)
	if m == nil {
		return strings.ToLower(s)
	}
	dom := uint64(0)
	if m[1] != "" {
		dom, _ = strconv.ParseUint(m[1], 16, 32)
	}
	return fmt.Sprintf("%04x:%s:%s.%s", dom, strings.ToLower(m[2]), strings.ToLower(m[3]), m[4])
}

// deviceIDFromSMI reads nvidia-smi's pci.device_id ("0x268410DE": device in
// the high half, vendor in the low half) as "10de:2684".
func deviceIDFromSMI(s string) string {
	s = strings.TrimSpace(s)
	if len(s) != 10 || !strings.HasPrefix(strings.ToLower(s), "0x") {
		return ""
	}
	v, err := strconv.ParseUint(s[2:], 16, 32)
	if err != nil {
		return ""
	}
	return deviceIDFromNumber(uint32(v))
}

func deviceIDFromNumber(v uint32) string {
	dev, vendor := v>>16, v&0xffff
	if vendor == 0 || dev == 0 {
		return ""
	}
	return fmt.Sprintf("%04x:%04x", vendor, dev)
}

var lspciIDRe = regexp.MustCompile(`\[([0-9A-Fa-f]{4}):([0-9A-Fa-f]{4})\]`)

// parseLspci reads `lspci -D -nn` (or plain -nn) output into bus →
// "vendor:device" for NVIDIA functions.
func parseLspci(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		bus, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		ids := lspciIDRe.FindAllStringSubmatch(rest, -1)
		if len(ids) == 0 {
			continue
		}
		id := ids[len(ids)-1]
		vendor := strings.ToLower(id[1])
		if vendor != "10de" {
			continue
		}
		out[normBus(bus)] = vendor + ":" + strings.ToLower(id[2])
	}
	return out
}

// inventoryFields are queried at the start; oldInventoryFields is the
// fallback for drivers that reject a field of the first list.
var (
	inventoryFields    = []string{"index", "name", "pci.bus_id", "pci.device_id", "memory.total", "pcie.link.gen.current", "pcie.link.width.current", "pcie.link.gen.max", "pcie.link.width.max", "power.limit", "driver_version"}
	oldInventoryFields = []string{"index", "name", "pci.bus_id", "memory.total", "pcie.link.gen.current", "pcie.link.width.current", "power.limit", "driver_version"}
)

// parseInventory reads `nvidia-smi --query-gpu=<fields>
// --format=csv,noheader,nounits` for one of the two field lists above.
func parseInventory(text string, fields []string) ([]telemetry.GPU, error) {
	var gpus []telemetry.GPU
	nameAt := indexOf(fields, "name")
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		vals, ok := splitCSV(line, len(fields), nameAt)
		if !ok {
			return nil, fmt.Errorf("line %d has %d fields, not %d: %q", n+1, len(vals), len(fields), clip.Line(line, 160))
		}
		var g telemetry.GPU
		for i, f := range fields {
			v := vals[i]
			switch f {
			case "index":
				idx, ok := smiInt(v)
				if !ok {
					return nil, fmt.Errorf("line %d: the GPU index %q is not a number", n+1, clip.Line(v, 160))
				}
				g.Index = idx
			case "name":
				g.Name = smiText(v)
			case "pci.bus_id":
				if t := smiText(v); t != "" {
					g.PCIBusID = normBus(t)
				}
			case "pci.device_id":
				if id := deviceIDFromSMI(v); id != "" {
					g.PCIDeviceID, g.PCIDeviceIDFrom = id, "nvidia-smi"
				}
			case "memory.total":
				g.MemoryTotalMiB = smiFloatPtr(v)
			case "pcie.link.gen.current":
				g.PCIeGenCurrent = smiIntPtr(v)
			case "pcie.link.width.current":
				g.PCIeWidthCurrent = smiIntPtr(v)
			case "pcie.link.gen.max":
				g.PCIeGenMax = smiIntPtr(v)
			case "pcie.link.width.max":
				g.PCIeWidthMax = smiIntPtr(v)
			case "power.limit":
				g.PowerLimitW = smiFloatPtr(v)
			case "driver_version":
				g.DriverVersion = smiText(v)
			}
		}
		gpus = append(gpus, g)
	}
	if len(gpus) == 0 {
		return nil, fmt.Errorf("it listed no GPUs")
	}
	return gpus, nil
}

func indexOf(fields []string, f string) int {
	for i, x := range fields {
		if x == f {
			return i
		}
	}
	return -1
}

// splitCSV splits one nvidia-smi CSV line into want fields. nvidia-smi does
// not quote, so a comma inside a free-text field (the name) shows up as an
// extra field: those are joined back into the field at mergeAt.
func splitCSV(line string, want, mergeAt int) ([]string, bool) {
	vals := strings.Split(line, ",")
	if len(vals) > want && mergeAt >= 0 {
		extra := len(vals) - want
		merged := strings.Join(vals[mergeAt:mergeAt+extra+1], ",")
		vals = append(append(vals[:mergeAt:mergeAt], merged), vals[mergeAt+extra+1:]...)
	}
	for i := range vals {
		vals[i] = strings.TrimSpace(vals[i])
	}
	return vals, len(vals) == want
}

// smiText is a free-text field, "" when nvidia-smi could not say.
func smiText(v string) string {
	v = strings.TrimSpace(v)
	if missingMark(v) {
		return ""
	}
	return v
}

func smiFloatPtr(v string) *float64 {
	f, ok, _ := smiNumber(v)
	if !ok {
		return nil
	}
	return &f
}

func smiIntPtr(v string) *int {
	f, ok, _ := smiNumber(v)
	if !ok || f != float64(int(f)) {
		return nil
	}
	n := int(f)
	return &n
}
