package hw

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kovara/desktop/telemetry"
)

// autoSource is "local" or "ssh://…" without ?tool=: the first Inventory
// or Start finds which tool that machine has — nvidia-smi, then amd-smi,
// then the amdgpu driver's sysfs files, then macmon, then xpu-smi — and
// everything after goes to that tool's source. ParseSource stays offline:
// nothing runs until then.
type autoSource struct {
	sh   shell
	gpus []int
	// newFor builds the source for a tool (tests shorten its limits).
	newFor  func(tool string) Source
	timeout time.Duration // the detection command through ssh
	sysRoot string        // where the amdgpu files are looked for

	mu     sync.Mutex
	chosen Source
}

func newAutoSource(sh shell, gpus []int) *autoSource {
	a := &autoSource{sh: sh, gpus: gpus, timeout: 20 * time.Second, sysRoot: "/sys"}
	a.newFor = func(tool string) Source {
		src := watchingHost(newToolSource(tool, sh, gpus))
		if g, ok := src.(*amdgpuSource); ok {
			g.root = a.sysRoot
		}
		return src
	}
	return a
}

// watchingHost makes src read its machine's memory beside the GPU tool,
// and, for nvidia-smi, the programs on its cards (hostmem.go,
// gpuprocs.go): every source ParseSource gives does; tests build theirs
// without it unless they ask.
func watchingHost(src Source) Source {
	if h, ok := src.(interface{ setHostRoot(string) }); ok {
		h.setHostRoot("/")
	}
	return src
}

// newToolSource is the source that reads tool on sh's machine.
func newToolSource(tool string, sh shell, gpus []int) Source {
	switch tool {
	case toolAMDSMI:
		return newAMDSMISource(sh, gpus)
	case toolAMDGPU:
		return newAMDGPUSource(sh, gpus)
	case toolMacmon:
		return newMacmonSource(sh, gpus)
	case toolXPUSMI:
		return newXPUSMISource(sh, gpus)
	case toolPowermetrics:
		return newPowermetricsSource(sh, gpus)
	default:
		return newSMISource(sh, gpus)
	}
}

func (a *autoSource) Kind() telemetry.GPUSourceKind {
	if a.sh.remote() {
		return telemetry.GPUSourceSSH
	}
	return telemetry.GPUSourceLocal
}

func (a *autoSource) Host() string {
	if a.sh.remote() {
		return a.sh.host
	}
	return "localhost"
}

func (a *autoSource) GPUs() []int { return append([]int(nil), a.gpus...) }

func (a *autoSource) toolName() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.chosen == nil {
		return ""
	}
	return Tool(a.chosen)
}

// String names the tool once it is known: "amd-smi on lab-box through ssh".
func (a *autoSource) String() string {
	a.mu.Lock()
	chosen := a.chosen
	a.mu.Unlock()
	if chosen != nil {
		return chosen.String()
	}
	return describe("the GPU tool", a.sh, a.gpus)
}

func (a *autoSource) Inventory(ctx context.Context) ([]telemetry.GPU, error) {
	src, err := a.resolve(ctx)
	if err != nil {
		return nil, err
	}
	return src.Inventory(ctx)
}

func (a *autoSource) Start(ctx context.Context, interval time.Duration) (*Sampler, error) {
	if _, err := checkInterval(interval); err != nil {
		return nil, err
	}
	src, err := a.resolve(ctx)
	if err != nil {
		return nil, err
	}
	return src.Start(ctx, interval)
}

// resolve finds the tool once; a failed search is tried again next time.
func (a *autoSource) resolve(ctx context.Context) (Source, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.chosen != nil {
		return a.chosen, nil
	}
	found, err := a.detect(ctx)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, noToolError(a.sh.where())
	}
	a.chosen = a.newFor(found[0])
	return a.chosen, nil
}

// noToolError is the one sentence said when a machine has none of the
// tools.
func noToolError(where string) error {
	return fmt.Errorf("no GPU power source on %s: looked for nvidia-smi, amd-smi, the amdgpu driver's sysfs files, macmon and xpu-smi; install the one for your GPU (macmon on a Mac), or give a GPU exporter's /metrics address, or a smart plug under Wall power", where)
}

// detect lists the tools the machine has, in detectOrder.
func (a *autoSource) detect(ctx context.Context) ([]string, error) {
	if !a.sh.remote() {
		var found []string
		for _, t := range detectOrder {
			if t == toolAMDGPU {
				g := newAMDGPUSource(a.sh, nil)
				g.root = a.sysRoot
				if cards, err := g.readLocal(); err == nil && len(cards) > 0 {
					found = append(found, t)
				}
				continue
			}
			if _, err := exec.LookPath(t); err == nil {
				found = append(found, t)
			}
		}
		return found, nil
	}
	out, err := a.sh.run(ctx, a.timeout, 16<<10, "sh", "-c", a.detectScript())
	if err != nil {
		var re *runError
		if errors.As(err, &re) && re.code == 127 {
			return nil, fmt.Errorf("%s has no sh on the PATH that ssh commands get, so its GPU tools could not be looked for", a.sh.where())
		}
		return nil, err
	}
	return parseDetected(string(out)), nil
}

// detectScript prints "tool NAME" for each tool on the PATH and "tool
// amdgpu" once when an amdgpu card is there.
func (a *autoSource) detectScript() string {
	var s strings.Builder
	s.WriteString("for t in")
	for _, t := range detectOrder {
		if t != toolAMDGPU {
			s.WriteString(" " + t)
		}
	}
	s.WriteString(`; do command -v "$t" >/dev/null 2>&1 && echo "tool $t"; done; `)
	s.WriteString(`for c in ` + shellQuote(a.sysRoot) + `/class/drm/card*; do case ${c##*/} in *-*) continue;; esac; ` +
		`[ "$(cat "$c/device/vendor" 2>/dev/null)" = 0x1002 ] && { echo "tool ` + toolAMDGPU + `"; break; }; done; true`)
	return s.String()
}

// parseDetected reads detectScript's output into detectOrder's order.
func parseDetected(out string) []string {
	var seen []string
	for _, l := range strings.Split(out, "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(l), "tool "); ok {
			seen = append(seen, strings.TrimSpace(t))
		}
	}
	var found []string
	for _, t := range detectOrder {
		if slices.Contains(seen, t) {
			found = append(found, t)
		}
	}
	return found
}
