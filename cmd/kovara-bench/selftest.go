package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/stats"
)

// cmdSelftest checks how truthfully this machine measures: it serves the
// simulator in a child process (as a real server is another process), runs
// the client against it at rising concurrency, and holds every measured
// TTFT and gap against the simulator's own record.
func cmdSelftest(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	levelsFlag := fs.String("levels", "1,64,256,1024", "concurrency levels to check")
	interval := fs.Duration("interval", 20*time.Millisecond, "the simulator's time between tokens of one stream")
	tokens := fs.Int("tokens", 32, "output tokens per request")
	rounds := fs.Int("rounds", 2, "requests per stream at each level (level 1 runs 16)")
	simNice := fs.Int("sim-nice", 10, "CPU priority (nice) of the simulator process; 0 lets it compete with the client as a CPU-bound server on this machine would")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if *simNice < 0 || *simNice > 19 {
		fmt.Fprintf(stderr, "kovara-bench selftest: --sim-nice must be between 0 and 19 (a higher priority than the client's would need root)\n")
		return exitBadInput
	}
	levels, err := engine.ParseLevels(*levelsFlag)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench selftest: --levels: %v\n", err)
		return exitBadInput
	}
	ctx, stop := interruptContext()
	defer stop()

	url, child, niced, err := startSimChild(*interval, slices.Max(levels), *simNice)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench selftest: %v\n", err)
		return exitFailed
	}
	defer child()

	fmt.Fprintf(stderr, "selftest: simulator in a child process at %s, %s between tokens, %d tokens per request\n", url, *interval, *tokens)
	if niced {
		// Its record is stamped by the kernel, so running it late does not
		// move the truth; it only stops it taking CPU the client needs, as
		// a server whose work is on its GPU would not.
		fmt.Fprintf(stderr, "selftest: the simulator runs at nice %d, below this client (--sim-nice 0 to let it compete)\n", *simNice)
	}
	var rows []selftestRow
	for _, c := range levels {
		n := c * *rounds
		if c == 1 {
			n = 16
		}
		fmt.Fprintf(stderr, "selftest: %d streams, %d requests…\n", c, n)
		row, err := selftestLevel(ctx, url, c, n, *tokens)
		if err != nil {
			if errors.Is(err, engine.ErrInterrupted) {
				return exitInterrupted
			}
			fmt.Fprintf(stderr, "kovara-bench selftest: at %d streams: %v\n", c, err)
			return exitFailed
		}
		rows = append(rows, row)
	}
	printSelftest(stdout, rows)
	return exitOK
}

// selftestRow is one level's accuracy and cost.
type selftestRow struct {
	streams, requests, failed int
	chunks                    int
	merged                    int        // chunks merged with the next one before the client read them
	writeP99                  float64    // p99 of the simulator's write calls, ms: how exactly it knows when a chunk left
	ttft, itl                 [3]float64 // p50, p99, max of |measured − true|, ms
	cpuPerMillion             float64    // client CPU seconds per million chunks, which is µs per chunk
	syscallsPerChunk          float64    // NaN when perf could not count them
	switchesPerChunk          float64    // context switches (getrusage), always there
	allocsPerChunk            float64
	peakMiB                   float64
}

func (r selftestRow) within1ms() bool { return r.failed == 0 && r.ttft[1] <= 1 && r.itl[1] <= 1 }

func selftestLevel(ctx context.Context, url string, streams, requests, tokens int) (selftestRow, error) {
	row := selftestRow{streams: streams, requests: requests}
	p := setup.DefaultPlan()
	p.Concurrency = []int{streams}
	p.Requests, p.Warmup = requests, min(streams, 64)
	p.InputTokens, p.OutputTokens = 128, tokens
	p.Timeout = 2 * time.Minute
	// The client's cost is counted over the measured level alone, not the
	// probe, calibration, warmup and connection set-up around it.
	var (
		recs           []engine.RequestRecord
		m0, m1         runtime.MemStats
		cpu0, cpu1     time.Duration
		sw0, sw1       int64
		counter        *syscallCounter
		calls          int64
		counted, level bool
	)
	obs := engine.Observer{
		LevelStart: func(int) {
			runtime.GC()
			runtime.ReadMemStats(&m0)
			counter = startSyscallCounter()
			cpu0, sw0, level = cpuTime(), contextSwitches(), true
		},
		Requests: func(_ int, r []engine.RequestRecord) {
			cpu1, sw1 = cpuTime(), contextSwitches()
			calls, counted = counter.stop()
			runtime.ReadMemStats(&m1)
			recs = r
		},
	}
	if _, err := engine.Run(ctx, p, setup.Endpoint{URL: url}, obs); err != nil {
		return row, err
	}
	if !level {
		return row, errors.New("the level did not start")
	}

	truth, err := sim.FetchTimings(url)
	if err != nil {
		return row, err
	}
	var ttft, itl, spans []float64
	for _, r := range recs {
		tr, ok := truth[r.N]
		if r.Class != "" || !ok || len(tr.GapsNs) != len(r.ITL) {
			row.failed++
			continue
		}
		row.chunks += r.Chunks
		ttft = append(ttft, float64(tr.TTFTErr(r.TTFT))/1e6)
		for _, sp := range tr.SpansNs {
			spans = append(spans, float64(sp)/1e6)
		}
		for i := range tr.GapsNs {
			itl = append(itl, tr.GapErr(i, float64(r.ITL[i])))
			// A gap of exactly zero is two chunks from one read; where the
			// server sent them well apart, the client read the first one
			// late enough for the kernel to merge it with the next.
			if r.ITL[i] == 0 && tr.GapAtLeastNs(i) > int64(time.Millisecond) {
				row.merged++
			}
		}
	}
	row.ttft, row.itl = spread(ttft), spread(itl)
	row.writeP99 = spread(spans)[1]
	if row.chunks > 0 {
		row.cpuPerMillion = (cpu1 - cpu0).Seconds() / float64(row.chunks) * 1e6
		row.allocsPerChunk = float64(m1.Mallocs-m0.Mallocs) / float64(row.chunks)
		row.switchesPerChunk = float64(sw1-sw0) / float64(row.chunks)
		row.syscallsPerChunk = math.NaN()
		if counted {
			row.syscallsPerChunk = float64(calls) / float64(row.chunks)
		}
	}
	row.peakMiB = peakRSSMiB()
	return row, nil
}

func spread(xs []float64) [3]float64 {
	if len(xs) == 0 {
		return [3]float64{math.NaN(), math.NaN(), math.NaN()}
	}
	slices.Sort(xs)
	return [3]float64{stats.Quantile(xs, 0.5), stats.Quantile(xs, 0.99), xs[len(xs)-1]}
}

func printSelftest(w io.Writer, rows []selftestRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "streams\trequests\tfailed\tTTFT err p50\tp99\tmax\tITL err p50\tp99\tmax\tmerged\tsim write p99\tCPU µs/chunk\tsyscalls/chunk\tswitches/chunk\tallocs/chunk\tpeak RSS MiB\t")
	perfCounted := false
	for _, r := range rows {
		calls := "-"
		if !math.IsNaN(r.syscallsPerChunk) {
			calls, perfCounted = fmt.Sprintf("%.2f", r.syscallsPerChunk), true
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%.3f\t%.1f\t%s\t%.2f\t%.2f\t%.0f\t\n",
			r.streams, r.requests, r.failed, r.ttft[0], r.ttft[1], r.ttft[2], r.itl[0], r.itl[1], r.itl[2],
			r.merged, r.writeP99, r.cpuPerMillion, calls, r.switchesPerChunk, r.allocsPerChunk, r.peakMiB)
	}
	tw.Flush()
	fmt.Fprintln(w, "errors are |measured − true| in ms against the simulator's own record: each chunk's transmit stamp, widened to the whole write call")
	fmt.Fprintln(w, "when that call stalled for over 1 ms (sim write p99: how long the calls took); CPU and allocations are the client's alone;")
	fmt.Fprintln(w, "merged: chunks the client read so late that the next one had arrived; the kernel merged the two and kept only the later time")
	fmt.Fprintln(w, "CPU: this process's user + system time (getrusage) per chunk; switches: its context switches (getrusage) per chunk")
	if perfCounted {
		fmt.Fprintln(w, "syscalls: this process's system calls per chunk, counted by perf stat -e raw_syscalls:sys_enter")
	} else {
		fmt.Fprintln(w, "syscalls: not counted (needs perf, and a kernel that lets this user count the raw_syscalls tracepoint)")
	}
	best := 0
	for _, r := range rows {
		if !r.within1ms() {
			break
		}
		best = r.streams
	}
	switch {
	case best == 0:
		fmt.Fprintln(w, "This machine does not measure within 1 ms (p99) even at the first level checked.")
	case best == rows[len(rows)-1].streams:
		fmt.Fprintf(w, "This machine measures TTFT and inter-token latency within 1 ms (p99) up to at least %d concurrent streams.\n", best)
	default:
		fmt.Fprintf(w, "This machine measures TTFT and inter-token latency within 1 ms (p99) up to %d concurrent streams; beyond that, the client's own load shows in the numbers.\n", best)
	}
	missed := false
	for _, r := range rows {
		if !r.within1ms() {
			missed = true
			if r.merged > 0 {
				fmt.Fprintf(w, "At %d streams the client fell a whole token behind on %d chunks: this machine's CPUs, shared with the simulator, were too busy.\n", r.streams, r.merged)
			}
		}
	}
	if missed {
		fmt.Fprintln(w, "Timing on a busy or virtual machine varies from run to run: run selftest again to see whether a miss repeats.")
	}
}

// startSimChild serves the simulator from this same binary in a child
// process and returns its address and a stop function. With nice > 0 and a
// nice(1) program on the PATH the child runs at that lower CPU priority
// (set before exec, so all its threads have it); niced says whether it did.
func startSimChild(interval time.Duration, capacity, nice int) (url string, stop func(), niced bool, err error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, false, err
	}
	args := []string{"simulate", "--listen", "127.0.0.1:0", "--record-truth",
		"--token-interval", interval.String(), "--prefill-rate", "200000", "--jitter", "0",
		"--batch-slowdown", "0", "--batch-capacity", fmt.Sprint(max(capacity, 256))}
	cmd := exec.Command(self, args...)
	if nice > 0 {
		if np, err := exec.LookPath("nice"); err == nil {
			cmd = exec.Command(np, append([]string{"-n", fmt.Sprint(nice), self}, args...)...)
			niced = true
		}
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, false, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, false, fmt.Errorf("the simulator process did not start: %w", err)
	}
	stop = func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
		}
	}
	url, err = sim.ReadServingURL(out)
	if err != nil {
		stop()
		return "", nil, false, err
	}
	go io.Copy(io.Discard, out)
	return url, stop, niced, nil
}
