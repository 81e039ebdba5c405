package hw

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kovara/desktop/telemetry"
)

// smiSource reads nvidia-smi on this machine or through ssh.
type smiSource struct {
	sh   shell
	gpus []int
	// Time limits; tests shorten them.
	runTimeout time.Duration // one inventory command
	startGrace time.Duration // extra wait for the first line (SSH handshake)

	// hostRoot is where the machine's /proc is read beside nvidia-smi
	// ("/"), and, when set, its programs are listed at the start and the
	// end; "" reads neither (tests that do not ask).
	hostRoot string

	mu    sync.Mutex
	query []string        // the per-loop query this driver takes; nil until found
	maxSM map[int]float64 // clocks.max.sm by GPU index, from the same probe
	bus   map[string]int  // GPU index by normalised PCI bus id (gpuprocs.go)
}

func (s *smiSource) setHostRoot(root string) { s.hostRoot = root }

func newSMISource(sh shell, gpus []int) *smiSource {
	s := &smiSource{sh: sh, gpus: gpus, runTimeout: 10 * time.Second, startGrace: 5 * time.Second}
	if sh.remote() {
		s.runTimeout, s.startGrace = 20*time.Second, 10*time.Second
	}
	return s
}

func (s *smiSource) Kind() telemetry.GPUSourceKind {
	if s.sh.remote() {
		return telemetry.GPUSourceSSH
	}
	return telemetry.GPUSourceLocal
}

func (s *smiSource) Host() string {
	if s.sh.remote() {
		return s.sh.host
	}
	return "localhost"
}

func (s *smiSource) GPUs() []int { return append([]int(nil), s.gpus...) }

func (s *smiSource) toolName() string { return toolNvidiaSMI }

func (s *smiSource) String() string {
	str := "nvidia-smi on " + s.sh.where()
	if s.sh.remote() {
		str += " through ssh"
	}
	if s.gpus != nil {
		str += " (" + gpuListWords(s.gpus) + ")"
	}
	return str
}

// Inventory asks nvidia-smi for the cards, then lspci (through the same
// route) for their PCI device ids; without lspci the ids come from
// nvidia-smi's pci.device_id.
func (s *smiSource) Inventory(ctx context.Context) ([]telemetry.GPU, error) {
	gpus, err := s.querySMI(ctx, inventoryFields)
	var re *runError
	if err != nil && errors.As(err, &re) && re.code > 0 && strings.Contains(strings.ToLower(re.msg), "not a valid field") {
		gpus, err = s.querySMI(ctx, oldInventoryFields)
	}
	if err != nil {
		return nil, err
	}
	if err := checkSubset(s.gpus, gpus, s.sh.where()); err != nil {
		return nil, err
	}
	gpus = keepSelected(s.gpus, gpus)
	bus := map[string]int{}
	for _, g := range gpus {
		if g.PCIBusID != "" {
			bus[normBus(g.PCIBusID)] = g.Index
		}
	}
	s.mu.Lock()
	s.bus = bus
	s.mu.Unlock()
	_, maxSM := s.sampleQuery(ctx)
	for i := range gpus {
		if v, ok := maxSM[gpus[i].Index]; ok {
			gpus[i].SMClockMaxMHz = &v
		}
	}
	if out, err := s.sh.run(ctx, s.runTimeout, 64<<10, "lspci", "-D", "-nn", "-d", "10de:"); err == nil {
		ids := parseLspci(string(out))
		for i := range gpus {
			if id, ok := ids[gpus[i].PCIBusID]; ok {
				gpus[i].PCIDeviceID, gpus[i].PCIDeviceIDFrom = id, "lspci"
			}
		}
	} else if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return gpus, nil
}

func (s *smiSource) querySMI(ctx context.Context, fields []string) ([]telemetry.GPU, error) {
	out, err := s.sh.run(ctx, s.runTimeout, 1<<20, "nvidia-smi", "--query-gpu="+strings.Join(fields, ","), "--format=csv,noheader,nounits")
	if err != nil {
		return nil, err
	}
	gpus, err := parseInventory(string(out), fields)
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi on %s gave a GPU list we could not read: %v", s.sh.where(), err)
	}
	return gpus, nil
}

// Start runs one nvidia-smi -lms for the whole run.
func (s *smiSource) Start(ctx context.Context, interval time.Duration) (*Sampler, error) {
	interval, err := checkInterval(interval)
	if err != nil {
		return nil, err
	}
	fields, _ := s.sampleQuery(ctx)
	sctx, cancel := context.WithCancel(ctx)
	smp := newSampler(interval, s.gpus, "nvidia-smi on "+s.sh.where(), cancel)
	ms := max(interval.Milliseconds(), 1)
	cmd := s.sh.command(sctx, "nvidia-smi", "--query-gpu="+strings.Join(fields, ","), "--format=csv,noheader,nounits", "-lms", strconv.FormatInt(ms, 10))
	cmd.Stdout = &lineWriter{max: 4 << 10, line: smp.handleLine, tooLong: smp.lineTooLong}
	stderr := &capWriter{limit: 4096}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		cancel()
		killGroup(cmd)
		return nil, s.sh.explain("nvidia-smi", err, "", "")
	}
	if s.hostRoot != "" {
		smp.watchHost(sctx, s.sh, interval, s.hostRoot)
		s.watchProcs(sctx, smp)
	}
	smp.wg.Add(1)
	go smp.watch(sctx, hangIntervals*interval, hangIntervals*interval+s.startGrace, func(waited time.Duration, started bool, _ string) string {
		if !started {
			return fmt.Sprintf("%s printed nothing for %s after it started", smp.what, seconds(waited))
		}
		return fmt.Sprintf("%s printed nothing for %s", smp.what, seconds(waited))
	})
	go func() {
		err := cmd.Wait()
		killGroup(cmd)
		if sctx.Err() == nil {
			smp.fail(s.sh.explain("nvidia-smi", err, smp.firstBadLine(), stderr.String()).Error())
		}
		smp.finish()
	}()
	return smp, nil
}

// sampleQuery finds, once, which per-loop query this driver takes and each
// card's SM clock maximum. It asks nvidia-smi for
// index,clocks.max.sm,clocks_event_reasons.active; a driver that says the
// field "is not a valid field to query" (before R535) is asked again with
// clocks_throttle_reasons.active, then without either (the query stays
// baseSampleFields, and no level has clock event reasons). Any other
// failure — the tool absent, ssh refused — keeps sampleFields without
// deciding: Start's own command then says what is wrong. The maximum is
// left out for a card whose line does not read.
func (s *smiSource) sampleQuery(ctx context.Context) ([]string, map[int]float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.query != nil {
		return s.query, s.maxSM
	}
	for _, try := range []struct {
		probe, query []string
	}{
		{[]string{"index", "clocks.max.sm", fieldClockEvents}, sampleFields},
		{[]string{"index", "clocks.max.sm", fieldClockThrottle}, throttleSampleFields},
		{[]string{"index", "clocks.max.sm"}, baseSampleFields},
	} {
		out, err := s.sh.run(ctx, s.runTimeout, 1<<20, "nvidia-smi", "--query-gpu="+strings.Join(try.probe, ","), "--format=csv,noheader,nounits")
		var re *runError
		if err != nil && errors.As(err, &re) && re.code > 0 && strings.Contains(strings.ToLower(re.msg), "not a valid field") {
			continue
		}
		if err != nil {
			return sampleFields, nil
		}
		s.query, s.maxSM = try.query, parseMaxClocks(string(out), len(try.probe))
		return s.query, s.maxSM
	}
	s.query = baseSampleFields
	return s.query, nil
}

// parseMaxClocks reads the probe's "index, clocks.max.sm[, reasons]" lines
// into index → MHz; lines that do not read are skipped.
func parseMaxClocks(text string, fields int) map[int]float64 {
	out := map[int]float64{}
	for _, line := range strings.Split(text, "\n") {
		vals, ok := splitCSV(strings.TrimRight(line, "\r"), fields, -1)
		if !ok {
			continue
		}
		idx, ok := smiInt(vals[0])
		if !ok {
			continue
		}
		if v, ok, err := smiNumber(vals[1]); err == nil && ok && v > 0 {
			out[idx] = v
		}
	}
	return out
}
