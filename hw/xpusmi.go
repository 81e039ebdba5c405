package hw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kovara/desktop/telemetry"
)

// xpuSMISource reads Intel GPUs through one long-lived `xpu-smi dump -d -1
// -m 0,1,2,3,18 -i S`: a CSV header ("Timestamp, DeviceId, …", comma and
// spaces, padded), then one row per device per tick. Its columns are found
// by their labels, which differ between versions ("Average % utilization
// of all GPU Engines" before, "GPU Utilization (%)" now); a column whose
// label is unknown is ignored. Units: W, %, MHz, °C, MiB. "N/A" or an
// empty cell is missing, never 0.
type xpuSMISource struct{ toolBase }

func newXPUSMISource(sh shell, gpus []int) *xpuSMISource {
	return &xpuSMISource{newToolBase(sh, gpus, toolXPUSMI, toolXPUSMI)}
}

// xpuMetrics are the dump's metric ids: 0 GPU utilization, 1 GPU power,
// 2 GPU frequency, 3 GPU core temperature, 18 GPU memory used.
const xpuMetrics = "0,1,2,3,18"

// xpuColumn says which reading a header label is, by its words.
func xpuColumn(label string) (Field, bool) {
	l := strings.ToLower(strings.TrimSpace(label))
	switch {
	case strings.Contains(l, "power") && strings.Contains(l, "(w)") && strings.HasPrefix(l, "gpu power"):
		return FieldPower, true
	case l == "gpu utilization (%)" || strings.Contains(l, "utilization of all gpu engines"):
		return FieldUtil, true
	case strings.HasPrefix(l, "gpu frequency") && strings.Contains(l, "(mhz)"):
		return FieldSMClock, true
	case strings.HasPrefix(l, "gpu core temperature"):
		return FieldTemp, true
	case strings.HasPrefix(l, "gpu memory used") && strings.Contains(l, "(mib)"):
		return FieldMemUsed, true
	}
	return 0, false
}

// xpuDump reads the dump's lines: the header first, then rows.
type xpuDump struct {
	cols    []Field // per column; 0 = not read
	device  int     // the DeviceId column
	hasHead bool
}

var errNoHeader = errors.New("a row before xpu-smi's header")

func (d *xpuDump) line(line string) ([]Sample, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil, nil
	}
	cells := strings.Split(line, ",")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	if strings.EqualFold(cells[0], "Timestamp") {
		d.cols, d.device, d.hasHead = make([]Field, len(cells)), -1, true
		for i, c := range cells {
			if strings.EqualFold(c, "DeviceId") {
				d.device = i
				continue
			}
			if f, ok := xpuColumn(c); ok {
				d.cols[i] = f
			}
		}
		if d.device < 0 {
			d.hasHead = false
			return nil, errors.New("xpu-smi's header has no DeviceId column")
		}
		return nil, nil
	}
	if !d.hasHead {
		return nil, errNoHeader
	}
	if len(cells) != len(d.cols) {
		return nil, fmt.Errorf("%d cells instead of %d", len(cells), len(d.cols))
	}
	idx, ok := smiInt(cells[d.device])
	if !ok {
		return nil, errBadIndex
	}
	s := Sample{GPU: idx}
	for i, f := range d.cols {
		if f == 0 {
			continue
		}
		v, ok, err := smiNumber(cells[i])
		if err != nil {
			return nil, err
		}
		if !ok || math.IsNaN(v) {
			continue
		}
		switch f {
		case FieldPower:
			s.PowerW = v
		case FieldUtil:
			s.UtilPct = v
		case FieldSMClock:
			s.SMClockMHz = v
		case FieldTemp:
			s.TempC = v
		case FieldMemUsed:
			s.MemUsedMiB = v
		}
		s.Valid |= f
	}
	return []Sample{s}, nil
}

// xpuSeconds is xpu-smi's -i: whole seconds, at least 1.
func xpuSeconds(interval time.Duration) time.Duration {
	return max(time.Second, interval.Round(time.Second))
}

func (x *xpuSMISource) Inventory(ctx context.Context) ([]telemetry.GPU, error) {
	out, err := x.sh.run(ctx, x.runTimeout, 256<<10, "xpu-smi", "dump", "-d", "-1", "-m", xpuMetrics, "-n", "1")
	if err != nil {
		return nil, err
	}
	var d xpuDump
	var gpus []telemetry.GPU
	for _, l := range strings.Split(string(out), "\n") {
		got, err := d.line(l)
		if err != nil {
			return nil, fmt.Errorf("xpu-smi on %s gave a GPU list we could not read: %v", x.sh.where(), err)
		}
		for _, s := range got {
			gpus = append(gpus, telemetry.GPU{Index: s.GPU, Name: "Intel GPU"})
		}
	}
	if len(gpus) == 0 {
		return nil, fmt.Errorf("xpu-smi on %s listed no GPUs", x.sh.where())
	}
	return x.finishInventory(gpus)
}

func (x *xpuSMISource) Start(ctx context.Context, interval time.Duration) (*Sampler, error) {
	interval, err := checkInterval(interval)
	if err != nil {
		return nil, err
	}
	interval = xpuSeconds(interval)
	d := &xpuDump{}
	return x.startLines(ctx, interval, 0, d.line, nil, 4<<10, "xpu-smi", "dump", "-d", "-1", "-m", xpuMetrics, "-i", strconv.Itoa(int(interval/time.Second)))
}
