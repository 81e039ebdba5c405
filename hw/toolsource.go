package hw

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kovara/desktop/internal/clip"
	"github.com/kovara/desktop/telemetry"
)

// The tools a local or ssh source can read, by the names ?tool= takes and
// Source.String says. detectOrder is the order detection tries them in.
const (
	toolNvidiaSMI = "nvidia-smi"
	toolAMDSMI    = "amd-smi"
	toolAMDGPU    = "amdgpu" // the amdgpu kernel driver's sysfs files
	toolMacmon    = "macmon"
	toolXPUSMI    = "xpu-smi"
	// toolPowermetrics is Apple's powermetrics, run through sudo: only
	// where the person chose it, never found by the search.
	toolPowermetrics = "powermetrics"
)

var detectOrder = []string{toolNvidiaSMI, toolAMDSMI, toolAMDGPU, toolMacmon, toolXPUSMI}

// toolChoices is what ?tool= takes: the searched tools and those that run
// only when chosen.
var toolChoices = append(slices.Clip(detectOrder), toolPowermetrics)

// toolBase is what every source on this machine or through ssh shares:
// where it runs, the chosen GPUs, its tool's name and its time limits.
type toolBase struct {
	sh   shell
	gpus []int
	name string // as ?tool= takes it: "amd-smi", "amdgpu"
	tool string // in sentences: "amd-smi", "amdgpu sysfs"
	// Time limits; tests shorten them.
	runTimeout time.Duration // one inventory command
	startGrace time.Duration // extra wait for the first reading (SSH handshake, a slow tool)
	// hostRoot is where the machine's /proc is read from beside the tool
	// ("/"; hostmem.go); "" reads no memory (tests that do not ask).
	hostRoot string
	// hint, when not nil, may add what to do to the sentence that says
	// why the tool failed (powermetrics: how to let sudo run it).
	hint func(string) string
}

func (b *toolBase) setHostRoot(root string) { b.hostRoot = root }

func newToolBase(sh shell, gpus []int, name, tool string) toolBase {
	b := toolBase{sh: sh, gpus: gpus, name: name, tool: tool, runTimeout: 10 * time.Second, startGrace: 5 * time.Second}
	if sh.remote() {
		b.runTimeout, b.startGrace = 20*time.Second, 10*time.Second
	}
	return b
}

func (b *toolBase) Kind() telemetry.GPUSourceKind {
	if b.sh.remote() {
		return telemetry.GPUSourceSSH
	}
	return telemetry.GPUSourceLocal
}

func (b *toolBase) Host() string {
	if b.sh.remote() {
		return b.sh.host
	}
	return "localhost"
}

func (b *toolBase) GPUs() []int { return append([]int(nil), b.gpus...) }

func (b *toolBase) toolName() string { return b.name }

// Tool names what a local or ssh source reads, as ?tool= takes it:
// "nvidia-smi", "amd-smi", "amdgpu" (the driver's sysfs files), "macmon",
// "xpu-smi" or "powermetrics". It is "" for an exporter, and for a source
// that finds its tool until its Inventory or Start has found it.
func Tool(src Source) string {
	if t, ok := src.(interface{ toolName() string }); ok {
		return t.toolName()
	}
	return ""
}

func (b *toolBase) String() string {
	return describe(b.tool, b.sh, b.gpus)
}

// describe is a source in words: "amd-smi on lab-box through ssh (GPU 1)".
func describe(tool string, sh shell, gpus []int) string {
	s := tool + " on " + sh.where()
	if sh.remote() {
		s += " through ssh"
	}
	if gpus != nil {
		s += " (" + gpuListWords(gpus) + ")"
	}
	return s
}

// what names the tool and its machine for sentences: "amd-smi on lab-box".
func (b *toolBase) what() string { return b.tool + " on " + b.sh.where() }

// finishInventory checks ?gpus= against what was found and keeps the
// chosen GPUs.
func (b *toolBase) finishInventory(gpus []telemetry.GPU) ([]telemetry.GPU, error) {
	if err := checkSubset(b.gpus, gpus, b.sh.where()); err != nil {
		return nil, err
	}
	return keepSelected(b.gpus, gpus), nil
}

// startLines runs one long-lived command for the whole run and hands each
// line it prints to parse (see Sampler.handleLine). slack is added to the
// wait for a line, for tools slower than one interval to print (amd-smi's
// start); pending, when not nil, gives the output the tool left unread
// when it failed, to say why.
func (b *toolBase) startLines(ctx context.Context, interval, slack time.Duration, parse func(string) ([]Sample, error), pending func() string, maxLine int, prog string, args ...string) (*Sampler, error) {
	sctx, cancel := context.WithCancel(ctx)
	smp := newSampler(interval, b.gpus, b.what(), cancel)
	smp.parse = parse
	cmd := b.sh.command(sctx, prog, args...)
	cmd.Stdout = &lineWriter{max: maxLine, line: smp.handleLine, tooLong: smp.lineTooLong}
	stderr := &capWriter{limit: 4096}
	cmd.Stderr = stderr
	name := b.name
	if err := cmd.Start(); err != nil {
		cancel()
		killGroup(cmd)
		err = b.sh.explain(name, err, "", "")
		if b.hint != nil {
			err = errors.New(b.hint(err.Error()))
		}
		return nil, err
	}
	if b.hostRoot != "" {
		smp.watchHost(sctx, b.sh, interval, b.hostRoot)
	}
	limit := hangIntervals*interval + slack
	smp.wg.Add(1)
	go smp.watch(sctx, limit, limit+b.startGrace, func(waited time.Duration, started bool, _ string) string {
		if !started {
			return fmt.Sprintf("%s printed nothing for %s after it started", smp.what, seconds(waited))
		}
		return fmt.Sprintf("%s printed nothing for %s", smp.what, seconds(waited))
	})
	go func() {
		err := cmd.Wait()
		killGroup(cmd)
		if sctx.Err() == nil {
			detail := smp.firstBadLine()
			if detail == "" && pending != nil {
				detail = pending()
			}
			msg := b.sh.explain(name, err, detail, stderr.String()).Error()
			if b.hint != nil {
				msg = b.hint(msg)
			}
			smp.fail(msg)
		}
		smp.finish()
	}()
	return smp, nil
}

// startPolling calls read every interval until Stop, each call's readings
// one tick; a read that fails is remembered for the warning given when no
// reading has come for hangIntervals intervals plus slack. hostRoot, when
// not "", is where this machine's /proc is read beside it (hostmem.go).
func startPolling(ctx context.Context, interval, slack time.Duration, gpus []int, what, hostRoot string, read func(context.Context) ([]Sample, error)) *Sampler {
	sctx, cancel := context.WithCancel(ctx)
	smp := newSampler(interval, gpus, what, cancel)
	if hostRoot != "" {
		smp.watchHost(sctx, shell{}, interval, hostRoot)
	}
	limit := hangIntervals*interval + slack
	smp.wg.Add(1)
	go smp.watch(sctx, limit, limit, func(waited time.Duration, _ bool, problem string) string {
		msg := fmt.Sprintf("%s gave no readings for %s", smp.what, seconds(waited))
		if problem != "" {
			msg += " (last try: " + problem + ")"
		}
		return msg
	})
	go func() {
		defer smp.finish()
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			got, err := read(sctx)
			switch {
			case sctx.Err() != nil:
				return
			case err != nil:
				smp.noteProblem(clip.Line(err.Error(), 200))
			default:
				smp.addTick(time.Now(), got)
			}
			select {
			case <-sctx.Done():
				return
			case <-tk.C:
			}
		}
	}()
	return smp
}

// blockReader gathers a tool's output into blocks ended by a line equal
// to mark (printed by our shell loop after each pass) and reads each block
// with parse. A block longer than maxBlock bytes is not one of ours.
type blockReader struct {
	mark     string
	maxBlock int
	parse    func(block string) ([]Sample, error)
	buf      strings.Builder
	mu       sync.Mutex
	first    string // the first line of the unfinished block
}

func blockLines(mark string, maxBlock int, parse func(block string) ([]Sample, error)) *blockReader {
	return &blockReader{mark: mark, maxBlock: maxBlock, parse: parse}
}

// line takes one line (Sampler.parse).
func (r *blockReader) line(line string) ([]Sample, error) {
	if strings.TrimSpace(line) != r.mark {
		if r.buf.Len()+len(line) > r.maxBlock {
			shown := firstLine(r.buf.String())
			r.reset()
			return nil, &blockError{shown: shown, err: fmt.Errorf("a reading longer than %d KiB", r.maxBlock>>10)}
		}
		r.buf.WriteString(line)
		r.buf.WriteByte('\n')
		if l := clip.Line(line, 160); l != "" {
			r.mu.Lock()
			if r.first == "" {
				r.first = l
			}
			r.mu.Unlock()
		}
		return nil, nil
	}
	block := r.buf.String()
	r.reset()
	got, err := r.parse(block)
	if err != nil {
		shown := firstLine(block)
		if shown == "" {
			shown = err.Error()
		}
		return nil, &blockError{shown: shown, err: err}
	}
	return got, nil
}

func (r *blockReader) reset() {
	r.buf.Reset()
	r.mu.Lock()
	r.first = ""
	r.mu.Unlock()
}

// pending is the first line of a block the tool began and never ended:
// where a tool that fails mid-pass says why.
func (r *blockReader) pending() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

// tickMark ends one pass of our shell loops.
const tickMark = "@@kovara-tick"

// loopScript is a shell loop that runs body, prints tickMark, sleeps for
// the interval and starts again; it ends with body's exit code when body
// fails.
func loopScript(body string, interval time.Duration) string {
	return "while :; do " + body + " || exit $?; echo " + tickMark + "; sleep " + sleepWords(interval) + "; done"
}

// sleepWords is an interval for sleep(1): "1", "0.5".
func sleepWords(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", d.Seconds()), "0"), ".")
}
