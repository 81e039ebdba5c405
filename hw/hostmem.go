package hw

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kovara/desktop/telemetry"
)

// The server machine's memory (issue #50): whether it swapped during a
// level, and how little memory it had left. A local or ssh source reads
// /proc/vmstat's pswpin and pswpout and /proc/meminfo's MemTotal,
// MemAvailable, SwapTotal and SwapFree once per sampling interval, beside
// its GPU tool and for as long: locally from the files themselves, through
// ssh from one `sh -c` loop (one process per source, in its own process
// group, ended with the sampler). A machine without /proc (a Mac) gives
// nothing and says nothing: its levels have no Host figures.

// pageSize is what one count of pswpin and pswpout is: a page, 4 KiB on
// Linux x86-64 and on arm64 as distributions build it. (An arm64 kernel
// built with 16 or 64 KiB pages — Apple Silicon under Asahi, some arm
// servers — would be undercounted 4 or 16 times; vmstat carries no unit,
// and asking getconf through ssh for a rare case is not worth a second
// command.)
const pageSize = 4096

// hostMemFields are the /proc/meminfo lines read.
var hostMemFields = []string{"MemTotal", "MemAvailable", "SwapTotal", "SwapFree"}

// hostField marks which readings a hostReading has.
type hostField uint8

const (
	hostSwapIn hostField = 1 << iota
	hostSwapOut
	hostMemTotal
	hostMemAvail
	hostSwapTotal
	hostSwapFree
)

// hostReading is one pass over vmstat and meminfo.
type hostReading struct {
	T                time.Duration
	has              hostField
	swapIn, swapOut  uint64 // pages since boot
	memTotal         uint64 // KiB, as meminfo's "kB" are
	memAvail         uint64
	swapTotal, swapF uint64
}

// parseHostMem reads vmstat's "pswpin 12" and meminfo's "MemAvailable:
// 22192204 kB" lines, in any order, other lines ignored. A pass with
// neither the swap counters nor MemAvailable is not one of ours.
func parseHostMem(text string) (hostReading, error) {
	var r hostReading
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch key := strings.TrimSuffix(f[0], ":"); {
		case f[0] == "pswpin":
			r.swapIn, r.has = v, r.has|hostSwapIn
		case f[0] == "pswpout":
			r.swapOut, r.has = v, r.has|hostSwapOut
		case key == f[0]:
			// vmstat's other counters
		case key == "MemTotal":
			r.memTotal, r.has = v, r.has|hostMemTotal
		case key == "MemAvailable":
			r.memAvail, r.has = v, r.has|hostMemAvail
		case key == "SwapTotal":
			r.swapTotal, r.has = v, r.has|hostSwapTotal
		case key == "SwapFree":
			r.swapF, r.has = v, r.has|hostSwapFree
		}
	}
	if r.has&(hostSwapIn|hostSwapOut|hostMemAvail) == 0 {
		return r, errors.New("no swap counters or MemAvailable")
	}
	return r, nil
}

// readHostFiles reads this machine's /proc under root ("/").
func readHostFiles(root string) (hostReading, error) {
	var b strings.Builder
	for _, name := range []string{"vmstat", "meminfo"} {
		data, err := os.ReadFile(filepath.Join(root, "proc", name))
		if err != nil {
			return hostReading{}, err
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return parseHostMem(b.String())
}

// hostScript is the loop read through ssh: the lines parseHostMem wants,
// then tickMark, once per interval; it ends (and so gives nothing) where
// there is no /proc/meminfo.
func hostScript(root string, interval time.Duration) string {
	proc := strings.TrimSuffix(root, "/") + "/proc/"
	body := "grep -E '^(pswpin|pswpout) ' " + shellQuote(proc+"vmstat") +
		"; grep -E '^(" + strings.Join(hostMemFields, "|") + "):' " + shellQuote(proc+"meminfo")
	return loopScript(body, interval)
}

// watchHost starts reading the memory of sh's machine into s until ctx
// ends; root is where its /proc is ("/"). It must be called before the
// goroutine that calls s.finish starts: the reader is one of s.wg's.
func (s *Sampler) watchHost(ctx context.Context, sh shell, interval time.Duration, root string) {
	if !sh.remote() {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			tk := time.NewTicker(interval)
			defer tk.Stop()
			for {
				if r, err := readHostFiles(root); err == nil {
					s.addHost(r)
				} else if !s.hostGot() {
					return // no /proc here: nothing, silently
				}
				select {
				case <-ctx.Done():
					return
				case <-tk.C:
				}
			}
		}()
		return
	}
	cmd := sh.command(ctx, "sh", "-c", hostScript(root, interval))
	var block strings.Builder
	cmd.Stdout = &lineWriter{max: 4 << 10, line: func(line string) {
		if strings.TrimSpace(line) != tickMark {
			if block.Len() < 16<<10 {
				block.WriteString(line)
				block.WriteByte('\n')
			}
			return
		}
		if r, err := parseHostMem(block.String()); err == nil {
			s.addHost(r)
		}
		block.Reset()
	}, tooLong: func() {}}
	stderr := &capWriter{limit: 1024}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		killGroup(cmd)
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := cmd.Wait()
		killGroup(cmd)
		if ctx.Err() == nil && s.hostGot() {
			// It read, then stopped: say so once. A loop that never read
			// (no /proc, a Mac) is silent.
			s.warn(fmt.Sprintf("the memory readings of %s stopped early: %v", sh.where(), sh.explain("sh", err, "", stderr.String())))
		}
	}()
}

// addHost keeps one reading, at the time it arrived.
func (s *Sampler) addHost(r hostReading) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || len(s.host) >= maxSamples {
		return
	}
	r.T = time.Since(s.start)
	s.host = append(s.host, r)
}

func (s *Sampler) hostGot() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.host) > 0
}

// warn adds a warning that does not stop sampling.
func (s *Sampler) warn(w string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.warnings, w) {
		s.warnings = append(s.warnings, w)
	}
}

// hostReadings is every memory reading so far.
func (s *Sampler) hostReadings() []hostReading {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.host)
}

// hostMemory is the machine's totals from the first reading that has
// them.
func hostMemory(rs []hostReading) *telemetry.HostMemory {
	for _, r := range rs {
		if r.has&hostMemTotal == 0 {
			continue
		}
		out := &telemetry.HostMemory{MemTotalMiB: kibToMiB(r.memTotal)}
		if r.has&hostSwapTotal != 0 {
			out.SwapTotalMiB = kibToMiB(r.swapTotal)
		}
		return out
	}
	return nil
}

func kibToMiB(v uint64) *float64 {
	m := roundTo(float64(v)/1024, 1)
	return &m
}

// hostLevel is the memory figures of the window [from, to]: nil without
// readings, or where they stop more than gap short of either edge (the
// rule clockEvents uses). Swap is each counter's rise between its value
// at from and at to, each interpolated between the readings around it
// and held flat beyond the first and the last.
func hostLevel(rs []hostReading, from, to, gap time.Duration) *telemetry.HostLevel {
	if len(rs) == 0 || to <= from {
		return nil
	}
	rs = slices.Clone(rs)
	slices.SortStableFunc(rs, func(a, b hostReading) int { return cmpDuration(a.T, b.T) })
	if rs[0].T-from > gap || to-rs[len(rs)-1].T > gap {
		return nil
	}
	out := &telemetry.HostLevel{}
	for _, r := range rs {
		if r.T < from || r.T > to {
			continue
		}
		out.Samples++
		if r.has&hostMemAvail != 0 {
			if v := kibToMiB(r.memAvail); out.MinMemAvailableMiB == nil || *v < *out.MinMemAvailableMiB {
				out.MinMemAvailableMiB = v
			}
		}
		if r.has&(hostSwapTotal|hostSwapFree) == hostSwapTotal|hostSwapFree && r.swapTotal > 0 {
			used := r.swapTotal - min(r.swapF, r.swapTotal)
			if v := kibToMiB(used); out.PeakSwapUsedMiB == nil || *v > *out.PeakSwapUsedMiB {
				out.PeakSwapUsedMiB = v
			}
		}
	}
	out.SwapInBytes = counterRise(rs, hostSwapIn, func(r hostReading) uint64 { return r.swapIn }, from, to)
	out.SwapOutBytes = counterRise(rs, hostSwapOut, func(r hostReading) uint64 { return r.swapOut }, from, to)
	return out
}

// counterRise is a page counter's rise over [from, to] in bytes; nil
// where no reading has it.
func counterRise(rs []hostReading, f hostField, get func(hostReading) uint64, from, to time.Duration) *int64 {
	var pts []hostReading
	for _, r := range rs {
		if r.has&f != 0 {
			pts = append(pts, r)
		}
	}
	if len(pts) == 0 {
		return nil
	}
	at := func(t time.Duration) float64 {
		if t <= pts[0].T {
			return float64(get(pts[0]))
		}
		for i := 1; i < len(pts); i++ {
			if t <= pts[i].T {
				a, b := pts[i-1], pts[i]
				if b.T == a.T {
					return float64(get(b))
				}
				k := float64(t-a.T) / float64(b.T-a.T)
				return float64(get(a)) + k*(float64(get(b))-float64(get(a)))
			}
		}
		return float64(get(pts[len(pts)-1]))
	}
	rise := max(at(to)-at(from), 0)
	v := int64(rise*pageSize + 0.5)
	return &v
}
