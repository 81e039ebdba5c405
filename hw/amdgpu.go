package hw

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kovara/desktop/telemetry"
)

// amdgpuSource reads the amdgpu kernel driver's sysfs files, with no ROCm:
// every /sys/class/drm/cardN/device whose vendor is 0x1002. On this
// machine the files are read directly every interval; through ssh one
// shell loop prints each file's name and value, one pass a tick.
//
// Units: gpu_busy_percent %, mem_info_* bytes, hwmon power1_average or
// power1_input and power1_cap µW, temp1_input m°C, freq1_input Hz (sclk).
// A file that is absent or cannot be read (gpu_busy_percent fails with
// EOPNOTSUPP on some cards) is a missing reading, never 0.
type amdgpuSource struct {
	toolBase
	root string // the sysfs mount, "/sys"; tests point it elsewhere
	fsys fs.FS  // how root is read on this machine; nil: os.DirFS(root)
}

func newAMDGPUSource(sh shell, gpus []int) *amdgpuSource {
	return &amdgpuSource{toolBase: newToolBase(sh, gpus, toolAMDGPU, "amdgpu sysfs"), root: "/sys"}
}

// amdCard is one card's files: name → content, only those read.
type amdCard struct {
	card  string // "card0"
	files map[string]string
}

// amdDeviceFiles are read in cardN/device, amdHwmonFiles in its first
// hwmon directory.
var (
	amdDeviceFiles = []string{"vendor", "device", "product_name", "gpu_busy_percent", "mem_info_vram_used", "mem_info_vram_total", "mem_info_gtt_used", "mem_info_gtt_total"}
	amdHwmonFiles  = []string{"power1_average", "power1_input", "power1_cap", "temp1_input", "freq1_input"}
)

var cardNameRe = regexp.MustCompile(`^card([0-9]+)$`)

func (a *amdgpuSource) fs() fs.FS {
	if a.fsys != nil {
		return a.fsys
	}
	return os.DirFS(a.root)
}

// readLocal reads every amdgpu card's files under the sysfs root.
func (a *amdgpuSource) readLocal() ([]amdCard, error) {
	fsys := a.fs()
	entries, err := fs.ReadDir(fsys, "class/drm")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var cards []amdCard
	for _, e := range entries {
		if !cardNameRe.MatchString(e.Name()) {
			continue
		}
		dev := "class/drm/" + e.Name() + "/device"
		if v, err := fs.ReadFile(fsys, dev+"/vendor"); err != nil || strings.TrimSpace(string(v)) != "0x1002" {
			continue
		}
		c := amdCard{card: e.Name(), files: map[string]string{}}
		for _, f := range amdDeviceFiles {
			if v, err := fs.ReadFile(fsys, dev+"/"+f); err == nil {
				c.files[f] = strings.TrimSpace(string(v))
			}
		}
		if hw, _ := fs.Glob(fsys, dev+"/hwmon/hwmon*"); len(hw) > 0 {
			slices.Sort(hw)
			for _, f := range amdHwmonFiles {
				if v, err := fs.ReadFile(fsys, hw[0]+"/"+f); err == nil {
					c.files[f] = strings.TrimSpace(string(v))
				}
			}
		}
		if ue, err := fs.ReadFile(fsys, dev+"/uevent"); err == nil {
			for _, l := range strings.Split(string(ue), "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(l), "PCI_SLOT_NAME="); ok {
					c.files["bus"] = v
				}
			}
		}
		cards = append(cards, c)
	}
	sortCards(cards)
	return cards, nil
}

func sortCards(cards []amdCard) {
	num := func(c amdCard) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(c.card, "card"))
		return n
	}
	slices.SortFunc(cards, func(a, b amdCard) int { return num(a) - num(b) })
}

// passScript is one pass over the cards in sh: "card card0", then
// "name value" for each file read, then "bus 0000:03:00.0".
func (a *amdgpuSource) passScript() string {
	var dev, hw strings.Builder
	for _, f := range amdDeviceFiles {
		dev.WriteString(` "$d/` + f + `"`)
	}
	for _, f := range amdHwmonFiles {
		hw.WriteString(` "$h/` + f + `"`)
	}
	return `for c in ` + shellQuote(a.root) + `/class/drm/card*; do ` +
		`case ${c##*/} in *-*) continue;; esac; d=$c/device; ` +
		`[ "$(cat "$d/vendor" 2>/dev/null)" = 0x1002 ] || continue; ` +
		`echo "card ${c##*/}"; h=; for x in "$d"/hwmon/hwmon*; do [ -d "$x" ] && { h=$x; break; }; done; ` +
		`for f in` + dev.String() + `; do v=$(cat "$f" 2>/dev/null) && echo "${f##*/} $v"; done; ` +
		`[ -n "$h" ] && for f in` + hw.String() + `; do v=$(cat "$f" 2>/dev/null) && echo "${f##*/} $v"; done; ` +
		`u=$(grep '^PCI_SLOT_NAME=' "$d/uevent" 2>/dev/null) && echo "bus ${u#*=}"; ` +
		`done; true`
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// parseAMDPass reads one pass of passScript's output.
func parseAMDPass(text string) ([]amdCard, error) {
	var cards []amdCard
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, val, _ := strings.Cut(line, " ")
		if name == "card" {
			if !cardNameRe.MatchString(val) {
				return nil, fmt.Errorf("%q is not a card", val)
			}
			cards = append(cards, amdCard{card: val, files: map[string]string{}})
			continue
		}
		if len(cards) == 0 {
			return nil, errors.New("a value before any card")
		}
		if name == "bus" || slices.Contains(amdDeviceFiles, name) || slices.Contains(amdHwmonFiles, name) {
			cards[len(cards)-1].files[name] = strings.TrimSpace(val)
		} else {
			return nil, fmt.Errorf("an unknown file %q", name)
		}
	}
	sortCards(cards)
	return cards, nil
}

// num reads a file holding one non-negative whole or decimal number.
func (c amdCard) num(f string) opt {
	v, ok := c.files[f]
	if !ok {
		return opt{}
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return opt{}
	}
	return opt{n, true}
}

// apuCarveOut is the most VRAM an APU's firmware carve-out is taken to
// be: a card with no more than this is an APU whose model lives in GTT
// (system memory the GPU maps), so GTT counts as its memory too. No
// discrete card one would serve a model from has so little.
const apuCarveOut = 2 << 30

func (c amdCard) apu() bool {
	total, gtt := c.num("mem_info_vram_total"), c.num("mem_info_gtt_total")
	return total.ok && gtt.ok && total.v <= apuCarveOut
}

// memory is VRAM (plus GTT on an APU) in MiB from the given files.
func (c amdCard) memory(vram, gtt string) opt {
	v := c.num(vram)
	if !v.ok {
		return opt{}
	}
	if c.apu() {
		g := c.num(gtt)
		if !g.ok {
			return opt{}
		}
		v.v += g.v
	}
	return v.div(1 << 20)
}

func (c amdCard) power() opt {
	if p := c.num("power1_average"); p.ok {
		return p.div(1e6)
	}
	return c.num("power1_input").div(1e6)
}

func (c amdCard) sample(index int) Sample {
	s := Sample{GPU: index}
	setFloat(&s.PowerW, &s.Valid, FieldPower, c.power())
	setFloat(&s.UtilPct, &s.Valid, FieldUtil, c.num("gpu_busy_percent"))
	setFloat(&s.MemUsedMiB, &s.Valid, FieldMemUsed, c.memory("mem_info_vram_used", "mem_info_gtt_used"))
	setFloat(&s.SMClockMHz, &s.Valid, FieldSMClock, c.num("freq1_input").div(1e6))
	setFloat(&s.TempC, &s.Valid, FieldTemp, c.num("temp1_input").div(1000))
	return s
}

func (c amdCard) gpu(index int) telemetry.GPU {
	g := telemetry.GPU{Index: index, Name: c.files["product_name"]}
	if g.Name == "" {
		g.Name = "AMD GPU"
	}
	if bus := c.files["bus"]; bus != "" {
		g.PCIBusID = normBus(bus)
	}
	vendor, device := strings.TrimPrefix(c.files["vendor"], "0x"), strings.TrimPrefix(c.files["device"], "0x")
	if len(vendor) == 4 && len(device) == 4 {
		if _, err := strconv.ParseUint(vendor+device, 16, 32); err == nil {
			g.PCIDeviceID, g.PCIDeviceIDFrom = strings.ToLower(vendor+":"+device), "sysfs"
		}
	}
	g.MemoryTotalMiB = floatPtr(c.memory("mem_info_vram_total", "mem_info_gtt_total"))
	g.PowerLimitW = floatPtr(c.num("power1_cap").div(1e6))
	return g
}

// cards reads the cards once, here or through ssh.
func (a *amdgpuSource) cards(ctx context.Context, timeout time.Duration) ([]amdCard, error) {
	if !a.sh.remote() {
		cards, err := a.readLocal()
		if err != nil {
			return nil, fmt.Errorf("the amdgpu driver's files on this machine could not be read (%v)", err)
		}
		return cards, nil
	}
	out, err := a.sh.run(ctx, timeout, 256<<10, "sh", "-c", a.passScript())
	if err != nil {
		return nil, err
	}
	cards, err := parseAMDPass(string(out))
	if err != nil {
		return nil, fmt.Errorf("the amdgpu driver's files on %s gave a reading we could not read: %v", a.sh.where(), err)
	}
	return cards, nil
}

func (a *amdgpuSource) noCards() error {
	return fmt.Errorf("%s has no GPU driven by amdgpu (no /sys/class/drm/card*/device with vendor 0x1002)", a.sh.where())
}

func (a *amdgpuSource) Inventory(ctx context.Context) ([]telemetry.GPU, error) {
	cards, err := a.cards(ctx, a.runTimeout)
	if err != nil {
		return nil, err
	}
	if len(cards) == 0 {
		return nil, a.noCards()
	}
	gpus := make([]telemetry.GPU, len(cards))
	for i, c := range cards {
		gpus[i] = c.gpu(i)
	}
	return a.finishInventory(gpus)
}

func samplesOf(cards []amdCard) []Sample {
	out := make([]Sample, len(cards))
	for i, c := range cards {
		out[i] = c.sample(i)
	}
	return out
}

func (a *amdgpuSource) Start(ctx context.Context, interval time.Duration) (*Sampler, error) {
	interval, err := checkInterval(interval)
	if err != nil {
		return nil, err
	}
	if !a.sh.remote() {
		return startPolling(ctx, interval, 0, a.gpus, a.what(), a.hostRoot, func(context.Context) ([]Sample, error) {
			cards, err := a.readLocal()
			if err == nil && len(cards) == 0 {
				err = a.noCards()
			}
			return samplesOf(cards), err
		}), nil
	}
	parse := blockLines(tickMark, 64<<10, func(block string) ([]Sample, error) {
		cards, err := parseAMDPass(block)
		if err == nil && len(cards) == 0 {
			err = a.noCards()
		}
		return samplesOf(cards), err
	})
	return a.startLines(ctx, interval, 0, parse.line, parse.pending, 4<<10, "sh", "-c", loopScript(a.passScript(), interval))
}
