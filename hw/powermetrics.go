package hw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kovara/desktop/telemetry"
)

// powermetricsSource reads an Apple Silicon Mac through Apple's own
// powermetrics, which only root may run. It is never found by the search:
// it runs only where the person chose it (?tool=powermetrics, kept as
// local.telemetry.tool), and then as `sudo -n powermetrics …`, so sudo
// never stops to ask for a password: without a sudoers rule that lets
// this user run powermetrics without one, it fails at once and says so.
//
// One long-lived `powermetrics --samplers cpu_power,gpu_power,ane_power,
// thermal -f plist -i MS -b 1` prints one XML plist a sample, each
// followed by a NUL byte (the man page: "machine-readable property list,
// NUL-separated"). Read as macmon is: the one GPU's PowerW is CPU + GPU +
// ANE (processor.combined_power, else the three summed when all three are
// there), the parts beside it; units are powermetrics': power in mW,
// energy in mJ over elapsed_ns (used when a power key is absent),
// gpu.freq_hz in MHz despite its name, gpu.idle_ratio 0–1 (use is 1 −
// idle). It gives no memory and no temperature. Its thermal_pressure
// becomes the clock event reasons (thermalPressureMask).
type powermetricsSource struct{ toolBase }

func newPowermetricsSource(sh shell, gpus []int) *powermetricsSource {
	b := newToolBase(sh, gpus, toolPowermetrics, toolPowermetrics)
	b.hint = powermetricsHint
	return &powermetricsSource{b}
}

// powermetricsSamplers are the samplers asked for: power of the CPU, GPU
// and Neural Engine, the GPU's residency and frequency, thermal pressure.
const powermetricsSamplers = "cpu_power,gpu_power,ane_power,thermal"

// powermetricsArgs is the command after sudo: -i is the interval in ms,
// -b 1 makes powermetrics flush each line into our pipe (its output is
// block-buffered otherwise, and a sample would wait for the next), -n 1
// when count is 1 (the inventory's one sample).
func powermetricsArgs(interval time.Duration, count int) []string {
	a := []string{"-n", "powermetrics", "--samplers", powermetricsSamplers, "-f", "plist", "-i", macmonMS(interval), "-b", "1"}
	if count > 0 {
		a = append(a, "-n", strconv.Itoa(count))
	}
	return a
}

// powermetricsHint adds what to do to the sentences that mean sudo wants a
// password or powermetrics wants root.
func powermetricsHint(msg string) string {
	l := strings.ToLower(msg)
	if strings.Contains(l, "password is required") || strings.Contains(l, "superuser") || strings.Contains(l, "a terminal is required") {
		return msg + "; powermetrics needs root: let this user run it without a password (a sudoers line such as `me ALL=(root) NOPASSWD: /usr/bin/powermetrics`), or choose macmon, which needs none"
	}
	return msg
}

// thermalPressureSW is the clock event bit a Mac's thermal pressure above
// Nominal sets: NVML's sw_thermal_slowdown (0x20), "the clocks are reduced
// by software because of heat". macOS's thermal pressure is exactly that —
// the OS's thermal manager asking every process and the SoC's performance
// controller to do less — and powermetrics reports the level it asked
// for, not a clamp the hardware itself applied, which is what NVML's
// hw_thermal_slowdown (0x40) means. So every level above Nominal,
// Trapping and Sleeping included, is this one bit; the results' per-level
// throttled share and "slowed for heat" figures then read as for a card.
const thermalPressureSW uint64 = 0x20

// thermalPressureMask turns powermetrics' thermal_pressure into the clock
// event reasons: Nominal is none (0, known); Moderate, Heavy, Trapping
// and Sleeping (macOS's OSThermalPressureLevel, libkern/
// OSThermalNotification.h) and Light (a level only iOS's side of that
// header has, taken in case a powermetrics prints it) are
// thermalPressureSW; any other word is unknown (ok false: no reasons that
// tick).
func thermalPressureMask(level string) (uint64, bool) {
	switch strings.ToLower(strings.TrimSpace(level)) {
	case "nominal":
		return 0, true
	case "light", "moderate", "heavy", "trapping", "sleeping":
		return thermalPressureSW, true
	}
	return 0, false
}

// pmReading is what one powermetrics sample says that we keep.
type pmReading struct {
	hwModel                    string
	cpuMW, gpuMW, aneMW, allMW opt
	gpuFreqMHz, gpuActive      opt
	thermal                    string // "" when the sample has none
}

// parsePowermetricsPlist reads one sample (one plist document, without
// its NUL). A plist without any of processor, gpu or thermal_pressure is
// not one of powermetrics' samples.
func parsePowermetricsPlist(doc []byte) (pmReading, error) {
	var r pmReading
	v, err := decodePlist(doc)
	if err != nil {
		return r, err
	}
	top, ok := v.(map[string]any)
	if !ok {
		return r, errors.New("a plist that is not a dict")
	}
	proc, _ := top["processor"].(map[string]any)
	gpu, _ := top["gpu"].(map[string]any)
	thermal, _ := top["thermal_pressure"].(string)
	if proc == nil && gpu == nil && thermal == "" {
		return r, errors.New("a plist without powermetrics' readings")
	}
	r.hwModel, _ = top["hw_model"].(string)
	r.thermal = strings.TrimSpace(thermal)
	secs := plistNumber(top, "elapsed_ns").div(1e9)
	// Power in mW, else energy in mJ over the sample's length.
	power := func(d map[string]any, powerKey, energyKey string) opt {
		if p := plistNumber(d, powerKey); p.ok {
			return p
		}
		e := plistNumber(d, energyKey)
		if !e.ok || !secs.ok || secs.v <= 0 {
			return opt{}
		}
		return opt{e.v / secs.v, true}
	}
	r.cpuMW = power(proc, "cpu_power", "cpu_energy")
	r.gpuMW = power(proc, "gpu_power", "gpu_energy")
	if !r.gpuMW.ok {
		r.gpuMW = power(gpu, "gpu_power", "gpu_energy")
	}
	r.aneMW = power(proc, "ane_power", "ane_energy")
	r.allMW = plistNumber(proc, "combined_power")
	if !r.allMW.ok && r.cpuMW.ok && r.gpuMW.ok && r.aneMW.ok {
		r.allMW = opt{r.cpuMW.v + r.gpuMW.v + r.aneMW.v, true}
	}
	r.gpuFreqMHz = plistNumber(gpu, "freq_hz")
	if idle := plistNumber(gpu, "idle_ratio"); idle.ok && idle.v <= 1 {
		r.gpuActive = opt{1 - idle.v, true}
	}
	return r, nil
}

// plistNumber is d[key] when it is a number that is neither negative nor
// NaN nor infinite; anything else (absent, a string such as "N/A") is
// missing.
func plistNumber(d map[string]any, key string) opt {
	f, ok := d[key].(float64)
	if !ok || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return opt{}
	}
	return opt{f, true}
}

func (r pmReading) sample() Sample {
	s := Sample{GPU: 0}
	setFloat(&s.PowerW, &s.Valid, FieldPower, r.allMW.div(1000))
	setFloat(&s.GPUPowerW, &s.Valid, FieldGPUPower, r.gpuMW.div(1000))
	setFloat(&s.CPUPowerW, &s.Valid, FieldCPUPower, r.cpuMW.div(1000))
	setFloat(&s.ANEPowerW, &s.Valid, FieldANEPower, r.aneMW.div(1000))
	setFloat(&s.UtilPct, &s.Valid, FieldUtil, r.gpuActive.percent())
	setFloat(&s.SMClockMHz, &s.Valid, FieldSMClock, r.gpuFreqMHz)
	if m, ok := thermalPressureMask(r.thermal); ok {
		s.ClockEvents = m
		s.Valid |= FieldClockEvents
	}
	return s
}

func (r pmReading) gpu() telemetry.GPU {
	name := "Apple Silicon"
	if m := strings.TrimSpace(r.hwModel); m != "" && len(m) <= 40 {
		name += " (" + m + ")"
	}
	return telemetry.GPU{Index: 0, Name: name + " GPU (unified memory)"}
}

// plistStream gathers powermetrics' output, line by line, into one plist
// document at a time: a document ends at its </plist> line, and the NUL
// powermetrics writes after each (which starts the next line we get) is
// dropped. A document longer than maxDoc bytes is not one of ours.
type plistStream struct {
	maxDoc int
	buf    []byte
	mu     sync.Mutex
	first  string // the first line of the unfinished document
}

const powermetricsMaxDoc = 4 << 20

// line takes one line of output (Sampler.parse). A NUL inside it ends a
// document too: one still open there was cut short.
func (p *plistStream) line(line string) ([]Sample, error) {
	pieces := strings.Split(line, "\x00")
	var got []Sample
	var firstErr error
	for i, piece := range pieces {
		if i > 0 && len(p.buf) > 0 {
			shown := firstLine(string(p.buf))
			p.reset()
			if firstErr == nil {
				firstErr = &blockError{shown: shown, err: errors.New("a plist cut short")}
			}
		}
		s, err := p.piece(piece, i == len(pieces)-1)
		got = append(got, s...)
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return got, firstErr
}

// piece takes text between NULs; lineEnd says a newline followed it.
func (p *plistStream) piece(text string, lineEnd bool) ([]Sample, error) {
	if len(p.buf) == 0 {
		switch t := strings.TrimSpace(text); {
		case t == "":
			return nil, nil
		case !strings.HasPrefix(t, "<?xml") && !strings.HasPrefix(t, "<!DOCTYPE") && !strings.HasPrefix(t, "<plist"):
			// Outside a document only a document's start may come:
			// this is powermetrics' text output, or not powermetrics.
			return nil, errors.New("not a line of powermetrics' plist output")
		}
	}
	if len(p.buf)+len(text) > p.maxDoc {
		shown := firstLine(string(p.buf))
		p.reset()
		return nil, &blockError{shown: shown, err: fmt.Errorf("a sample longer than %d MiB", p.maxDoc>>20)}
	}
	if len(p.buf) == 0 {
		p.mu.Lock()
		p.first = firstLine(text)
		p.mu.Unlock()
	}
	p.buf = append(p.buf, text...)
	if lineEnd {
		p.buf = append(p.buf, '\n')
	}
	if !strings.HasSuffix(strings.TrimSpace(text), "</plist>") {
		return nil, nil
	}
	doc := p.buf
	p.reset()
	r, err := parsePowermetricsPlist(doc)
	if err != nil {
		return nil, &blockError{shown: firstLine(string(doc)), err: err}
	}
	return []Sample{r.sample()}, nil
}

func (p *plistStream) reset() {
	p.buf = nil
	p.mu.Lock()
	p.first = ""
	p.mu.Unlock()
}

// pending is the first line of a document powermetrics began and never
// ended.
func (p *plistStream) pending() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}

// splitPlists cuts a whole output (the inventory's one sample) at its
// NULs and gives the documents that hold more than white space.
func splitPlists(out []byte) [][]byte {
	var docs [][]byte
	for _, d := range strings.Split(string(out), "\x00") {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func (p *powermetricsSource) Inventory(ctx context.Context) ([]telemetry.GPU, error) {
	out, err := p.sh.run(ctx, p.runTimeout, powermetricsMaxDoc, "sudo", powermetricsArgs(200*time.Millisecond, 1)...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, errors.New(powermetricsHint(strings.Replace(err.Error(), "sudo on ", "powermetrics (through sudo) on ", 1)))
	}
	docs := splitPlists(out)
	if len(docs) == 0 {
		return nil, fmt.Errorf("powermetrics on %s printed nothing", p.sh.where())
	}
	r, err := parsePowermetricsPlist(docs[0])
	if err != nil {
		return nil, fmt.Errorf("powermetrics on %s gave a reading we could not read: %v", p.sh.where(), err)
	}
	return p.finishInventory([]telemetry.GPU{r.gpu()})
}

func (p *powermetricsSource) Start(ctx context.Context, interval time.Duration) (*Sampler, error) {
	interval, err := checkInterval(interval)
	if err != nil {
		return nil, err
	}
	interval = max(interval, 100*time.Millisecond)
	stream := &plistStream{maxDoc: powermetricsMaxDoc}
	// Slack: powermetrics prints its first sample one interval after it
	// starts, and a sample is a few hundred lines.
	return p.startLines(ctx, interval, interval, stream.line, stream.pending, 64<<10, "sudo", powermetricsArgs(interval, 0)...)
}
