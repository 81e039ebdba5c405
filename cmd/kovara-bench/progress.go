package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/kovara/desktop/engine"
)

// progress shows a run on stderr: a bar redrawn in place four times a
// second on a terminal, or a plain line every few seconds otherwise.
type progress struct {
	w     io.Writer
	live  *engine.Live
	tty   bool
	quiet bool

	mu       sync.Mutex // serialises writes to w
	barShown bool
	done     chan struct{}
	wg       sync.WaitGroup
}

func newProgress(w io.Writer, live *engine.Live, quiet bool) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &progress{w: w, live: live, tty: tty, quiet: quiet, done: make(chan struct{})}
}

// log prints one event line, above the bar when there is one.
func (p *progress) log(line string) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.barShown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.barShown = false
	}
	fmt.Fprintln(p.w, line)
}

func (p *progress) start() {
	if p.quiet {
		return
	}
	every := 5 * time.Second
	if p.tty {
		every = 250 * time.Millisecond
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		var rate rateMeter
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				s := p.live.Snapshot()
				tps := rate.update(s)
				switch s.Phase {
				case engine.PhaseLevel, engine.PhaseWarmup, engine.PhaseSpecDec, engine.PhaseUsers, engine.PhaseDecode:
				default:
					continue
				}
				p.draw(s, tps)
			}
		}
	}()
}

func (p *progress) stop() {
	if p.quiet {
		return
	}
	close(p.done)
	p.wg.Wait()
	p.mu.Lock()
	if p.barShown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.barShown = false
	}
	p.mu.Unlock()
}

// rateMeter turns the level's cumulative token count into tokens per
// second between two snapshots.
type rateMeter struct {
	at     time.Duration
	tokens int64
	level  int
}

func (m *rateMeter) update(s engine.Snapshot) float64 {
	defer func() { m.at, m.tokens, m.level = s.At, s.Tokens, s.Level }()
	if s.NewLevel || s.Level != m.level || s.At <= m.at || s.Tokens < m.tokens {
		return 0
	}
	return float64(s.Tokens-m.tokens) / (s.At - m.at).Seconds()
}

func (p *progress) draw(s engine.Snapshot, tps float64) {
	stage := "warmup"
	switch s.Phase {
	case engine.PhaseLevel, engine.PhaseSpecDec:
		stage = fmt.Sprintf("level %d/%d  c=%d", s.Level, s.Levels, s.Concurrency)
		if s.Capacity != nil {
			stage = s.Capacity.String()
		}
	case engine.PhaseDecode, engine.PhaseUsers:
		stage = fmt.Sprintf("stage %d/%d  %s", s.Level, s.Levels, s.Phase)
	}
	counts := fmt.Sprintf("%d/%d  ok %d  err %d  timeout %d  %.0f tok/s",
		s.LevelDone, s.LevelTotal, s.OK, s.Errors, s.Timeouts, tps)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s  %s  %s", stage, bar(s.LevelDone, s.LevelTotal, 24), counts)
		p.barShown = true
		return
	}
	fmt.Fprintf(p.w, "%s  %s\n", stage, counts)
}

func bar(done, total, width int) string {
	if total <= 0 {
		return "[" + strings.Repeat(" ", width) + "]"
	}
	n := min(done*width/total, width)
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}
