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
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/internal/clip"
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

// estimate says, before the warmup, how long the plan takes at the
// server's tested speed (engine.Observer.Estimate); in a repeated group,
// that each run takes it.
func (p *progress) estimate(line string, group *results.RunGroup) {
	if line == "" {
		return
	}
	if group != nil && group.Of > 1 {
		line = strings.Replace(line, "this plan takes", fmt.Sprintf("each of the %d runs takes", group.Of), 1)
	}
	p.log(strings.ToUpper(line[:1]) + line[1:])
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
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				s := p.live.Snapshot()
				if !drawn(s.Phase) {
					continue
				}
				p.draw(s)
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

// drawn: the phases with a progress line (the others are short, or said
// by their own log lines).
func drawn(p engine.Phase) bool {
	return p == engine.PhaseWarmup || p.Measured() || p == engine.PhasePrompts
}

// draw shows one snapshot: the engine's words for where the run is (the
// app's live view says the same), a bar of the stage, and its counts.
func (p *progress) draw(s engine.Snapshot) {
	// The whole plan's share, calibration, warmup and earlier runs of a
	// repeated group counted, beside the stage's bar.
	counts := fmt.Sprintf("  ok %d  err %d  timeout %d  %.0f tok/s  plan %.0f%%", s.OK, s.Errors, s.Timeouts, s.TPS, 100*s.Progress)
	stage := bar(s.LevelDone, s.LevelTotal, 24)
	if s.Phase == engine.PhasePrompts {
		// Nothing is sent yet: the bar is the share of the file read,
		// and the words say it in MB.
		counts, stage = "", bar(int(1000*s.Read), 1000, 24)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		// One terminal row at most, or the next redraw lands below it.
		line := stage + counts + "  " + s.Describe()
		fmt.Fprint(p.w, "\r\x1b[K"+clip.Text(line, p.width()-1))
		p.barShown = true
		return
	}
	fmt.Fprintln(p.w, s.Describe()+counts)
}

// width is the terminal's width in characters (80 when it cannot say).
func (p *progress) width() int {
	if f, ok := p.w.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 20 {
			return w
		}
	}
	return 80
}

func bar(done, total, width int) string {
	if total <= 0 {
		return "[" + strings.Repeat(" ", width) + "]"
	}
	n := min(done*width/total, width)
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}
