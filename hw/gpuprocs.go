package hw

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/kovara/desktop/telemetry"
)

// The programs on the cards (issue #50): nvidia-smi's compute programs,
// read once when sampling starts and once when it stops (not every tick:
// the list changes when a program starts or ends, and each read costs
// nvidia-smi a pass over every process). The GPU each is on is joined by
// its PCI bus id with the inventory's pci.bus_id: gpu_uuid would do the
// same, but UUIDs are never queried (see "What is never read").

// GPUProcess is one program on one GPU (local.telemetry.gpu_processes).
type GPUProcess = telemetry.GPUProcess

// computeAppsFields is the query's columns, in parseComputeApps' order.
const computeAppsFields = "gpu_bus_id,pid,process_name,used_memory"

// procsTimeout bounds each process list; the one at the end holds up
// Stop, so it is kept short.
const procsTimeout = 5 * time.Second

// parseComputeApps reads --query-compute-apps lines "GPU, pid, name,
// memory" (noheader; with or without nounits) into processes on the GPUs
// gpu finds (false: a GPU not chosen, or not known). A name with commas
// is joined back; "[Not Found]" is ""; memory "[N/A]" (Windows' WDDM) is
// nil. Lines that do not read — a header, a blank — are skipped: the list
// is empty, never nil, when nothing is listed.
func parseComputeApps(text string, gpu func(key string) (int, bool)) []GPUProcess {
	out := []GPUProcess{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Split(strings.TrimRight(line, "\r"), ",")
		if len(f) < 4 {
			continue
		}
		v := strings.TrimSpace(f[1])
		pid, err := strconv.Atoi(v)
		if err != nil || !isDigits(v) || len(v) > 10 {
			continue // pids reach 4194304 on Linux: more digits than smiInt takes
		}
		idx, ok := gpu(strings.TrimSpace(f[0]))
		if !ok {
			continue
		}
		p := GPUProcess{GPU: idx, PID: pid, Name: smiText(strings.Join(f[2:len(f)-1], ","))}
		if v, ok, err := smiNumber(f[len(f)-1]); err == nil && ok {
			p.UsedMiB = &v
		}
		out = append(out, p)
	}
	return out
}

// readProcs lists the programs on the chosen GPUs; nil when nvidia-smi
// could not (the list then stays unknown).
func (s *smiSource) readProcs(ctx context.Context) []GPUProcess {
	bus := s.busIndex(ctx)
	if len(bus) == 0 {
		return nil
	}
	out, err := s.sh.run(ctx, procsTimeout, 1<<20, "nvidia-smi", "--query-compute-apps="+computeAppsFields, "--format=csv,noheader,nounits")
	if err != nil {
		return nil
	}
	return parseComputeApps(string(out), func(key string) (int, bool) {
		i, ok := bus[normBus(key)]
		return i, ok && selected(s.gpus, i)
	})
}

// busIndex is each GPU's index by its normalised PCI bus id: the
// inventory's, or, when Start came without one, asked of nvidia-smi.
func (s *smiSource) busIndex(ctx context.Context) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bus != nil {
		return s.bus
	}
	out, err := s.sh.run(ctx, procsTimeout, 1<<20, "nvidia-smi", "--query-gpu=index,pci.bus_id", "--format=csv,noheader,nounits")
	if err != nil {
		return nil
	}
	bus := map[string]int{}
	for _, line := range strings.Split(string(out), "\n") {
		vals, ok := splitCSV(strings.TrimRight(line, "\r"), 2, -1)
		if !ok {
			continue
		}
		if i, ok := smiInt(vals[0]); ok && vals[1] != "" {
			bus[normBus(vals[1])] = i
		}
	}
	s.bus = bus
	return bus
}

// watchProcs reads the process list now (in the background) and once
// more when s stops. Call it before the goroutine that calls s.finish
// starts.
func (s *smiSource) watchProcs(ctx context.Context, smp *Sampler) {
	smp.wg.Add(1)
	go func() {
		defer smp.wg.Done()
		if got := s.readProcs(ctx); got != nil {
			smp.setProcs(got, true)
		}
	}()
	smp.mu.Lock()
	smp.beforeStop = func() {
		if got := s.readProcs(ctx); got != nil {
			smp.setProcs(got, false)
		}
	}
	smp.mu.Unlock()
}

func (s *Sampler) setProcs(p []GPUProcess, start bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if start {
		s.procs.Start = p
	} else {
		s.procs.End = p
	}
	s.procsRead = true
}

// gpuProcesses is what was read, nil when neither list was.
func (s *Sampler) gpuProcesses() *telemetry.GPUProcesses {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.procsRead {
		return nil
	}
	p := s.procs
	return &p
}
