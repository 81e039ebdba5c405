package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kovara/desktop/telemetry"
)

// What the GPUs did during a level, judged (issue #50): the clock event
// (throttle) reasons a source reported, read from local.telemetry.

// ThrottleProblemShare is the share of a level a slowdown reason must
// exceed to be a problem on that level. Why 10 %: a power cap or thermal
// slowdown takes a card's clocks down by roughly a tenth (the captured
// RTX 4090 under its 450 W cap: 2820 → about 2475 MHz, 12 %), so a
// slowdown active for a tenth of a level costs that level about 1 % of
// its speed — within the run-to-run noise the method allows — while past
// it the level's figures start to describe the card's cooling or power
// limit rather than the load. (A hardware slowdown halves the clocks or
// worse; at 10 % of a level that is already 5 %, so anything above the
// threshold is certainly a problem, and below it is said as a note.)
const ThrottleProblemShare = 0.10

// HardwareFinding is one thing the GPUs did during a level that bears on
// its figures.
type HardwareFinding struct {
	// Level is the key in Telemetry.Levels.
	Level    int
	Severity Severity
	// GPU is the card's index; -1 where the finding is the chosen GPUs'
	// together (one GPU, or all of them alike).
	GPU int
	// Reason is the ClockEventReason's name.
	Reason string
	// Share is the figure the finding rests on: the share of the level's
	// window (0 to 1) the reason was active; Seconds the same in seconds.
	// For other programs on a card, Share is their share of its memory.
	Share   float64
	Seconds float64
	// MiB is the memory a finding rests on: swapped in and out together
	// (FindingSwap), the least available (FindingLowMemory), the other
	// programs' memory on the card (FindingOtherPrograms).
	MiB float64
	// Text is the finding in words.
	Text string
}

// HardwareFindings judges one level of the telemetry: a finding for each
// slowdown reason a GPU reported during it — a problem when it was active
// for more than ThrottleProblemShare of the level, else a note —, the
// server's machine swapping during it (a problem above SwapProblemBytes
// either way, a note from SwapNoteBytes) and its memory nearly all taken
// (a note below LowMemoryShare), problems first, then the larger share
// first. A source that gives no reasons (any but nvidia-smi, amd-smi
// from ROCm 6.3 and powermetrics' thermal pressure), or no
// memory readings (an exporter, a Mac), or a level without readings,
// gives no findings: unknown is not a finding. With several GPUs each
// card is named; with one the level's own figures are used. What holds
// for the whole run (other programs on a card) is RunFindings'.
func HardwareFindings(t *Telemetry, level int) []HardwareFinding {
	if t == nil {
		return nil
	}
	lt, ok := t.Levels[level]
	if !ok || lt.DurationS <= 0 {
		return nil
	}
	var out []HardwareFinding
	add := func(gpu int, events map[string]float64) {
		for name, secs := range events {
			r, ok := telemetry.ReasonNamed(name)
			if !ok || !r.Slowdown || secs <= 0 {
				continue
			}
			share := min(secs/lt.DurationS, 1)
			f := HardwareFinding{Level: level, Severity: SeverityNote, GPU: gpu, Reason: name, Share: share, Seconds: secs}
			if share > ThrottleProblemShare {
				f.Severity = SeverityProblem
			}
			f.Text = throttleWords(gpu, r, share, f.Severity)
			out = append(out, f)
		}
	}
	withReasons := 0
	for _, g := range lt.GPUs {
		if g.ThrottledShare != nil {
			withReasons++
		}
	}
	if withReasons > 1 {
		for _, g := range lt.GPUs {
			add(g.Index, g.ClockEventS)
		}
		out = mergeAlike(out)
	} else if lt.ThrottledShare != nil {
		add(-1, lt.ClockEventS)
	}
	out = append(out, hostFindings(level, lt.Host, t.HostMemory)...)
	sortFindings(out)
	return out
}

func sortFindings(out []HardwareFinding) {
	slices.SortFunc(out, func(a, b HardwareFinding) int {
		return cmp.Or(
			cmp.Compare(severityRank(a.Severity), severityRank(b.Severity)),
			cmp.Compare(b.Share, a.Share),
			cmp.Compare(a.GPU, b.GPU),
			strings.Compare(a.Reason, b.Reason),
		)
	})
}

// mergeAlike says cards that slowed alike once — the same reason, for the
// same share as said, with the same weight: "GPUs 0 and 1 slowed
// themselves for their power cap for 82 % of this level", not a line per
// card.
func mergeAlike(fs []HardwareFinding) []HardwareFinding {
	type key struct {
		reason, share string
		sev           Severity
	}
	var order []key
	gpus := map[key][]int{}
	first := map[key]HardwareFinding{}
	for _, f := range fs {
		k := key{f.Reason, shareWords(f.Share), f.Severity}
		if _, seen := first[k]; !seen {
			order = append(order, k)
			first[k] = f
		}
		gpus[k] = append(gpus[k], f.GPU)
	}
	out := make([]HardwareFinding, 0, len(order))
	for _, k := range order {
		f := first[k]
		if g := gpus[k]; len(g) > 1 {
			r, _ := telemetry.ReasonNamed(f.Reason)
			names := make([]string, len(g))
			for i, n := range g {
				names[i] = strconv.Itoa(n)
			}
			f.Text = throttleWordsOf("GPUs "+JoinAnd(names), true, r, f.Share, f.Severity)
		}
		out = append(out, f)
	}
	return out
}

// throttleWords: "the GPU slowed itself for its power cap for 42 % of this
// level: later levels may read slower for that, not for the load".
func throttleWords(gpu int, r ClockEventReason, share float64, sev Severity) string {
	who := "the GPU"
	if gpu >= 0 {
		who = fmt.Sprintf("GPU %d", gpu)
	}
	return throttleWordsOf(who, false, r, share, sev)
}

// throttleWordsOf is throttleWords of who, one card or several.
func throttleWordsOf(who string, several bool, r ClockEventReason, share float64, sev Severity) string {
	words := r.Words
	slowed := "slowed itself"
	if several {
		slowed = "slowed themselves"
		words = strings.Replace(words, "its ", "their ", 1)
	}
	s := fmt.Sprintf("%s %s for %s for %s of this level", who, slowed, words, shareWords(share))
	if sev == SeverityProblem {
		return s + ": this level and later ones may read slower for that, not for the load"
	}
	return s + ", too little to move its figures much"
}

// shareWords is a share as "42 %", "0.4 %" below 1 %, and never "0 %"
// or "100 %" for a share that is neither.
func shareWords(share float64) string {
	p := share * 100
	switch {
	case p >= 99.5 && p < 100:
		return "over 99 %"
	case p >= 1:
		return fmt.Sprintf("%.0f %%", math.Round(p))
	case p >= 0.1:
		return fmt.Sprintf("%.1f %%", p)
	case p > 0:
		return "under 0.1 %"
	}
	return "0 %"
}

// The reasons of the findings that are not clock events.
const (
	FindingSwap          = "swap"
	FindingLowMemory     = "low_memory"
	FindingOtherPrograms = "other_programs"
)

// SwapProblemBytes is how much the server's machine must swap in or out
// during one level for it to be a problem on that level. Why 64 MiB: a
// server swapping pages back in waits on the disk for each — 64 MiB is
// about a second of a SATA SSD's small random reads, and far more on a
// disk —, and a level that swaps that much is one whose working set (the
// model's weights held in RAM, the KV cache a llama.cpp or Ollama split
// keeps there, the server's own buffers) no longer fits, so its figures
// describe the machine's memory rather than the load; swapping out that
// much means the kernel is reclaiming under pressure while requests run.
// Below it, a few pages moved are the kernel's housekeeping (idle
// daemons' pages pushed out) and cost the figures nothing measurable.
const SwapProblemBytes = 64 << 20

// SwapNoteBytes is the least swapping said at all (as a note): below a
// MiB in a level it is noise.
const SwapNoteBytes = 1 << 20

// LowMemoryShare: a level whose least MemAvailable fell below this share
// of the machine's memory is said as a note — close to swapping, and a
// memory-mapped model (llama.cpp's and Ollama's default) has its pages
// dropped and read from disk again without any swap being counted.
const LowMemoryShare = 0.05

// OtherProgramsProblemShare is the share of a card's memory that the
// programs beside the largest one (presumed the server) must hold, all
// together, for them to be a problem of the run. Why 10 %: their memory
// is room the server did not have — for its KV cache (fewer sequences at
// once, or a smaller context) or for layers that then ran on the CPU —
// and a program that holds a tenth of a card (2.4 GiB of a 24 GiB card)
// is a model or a training job, which can also take the card's compute
// while the benchmark runs (nvidia-smi's list cannot say how much). A
// desktop session's or a monitor's few hundred MiB are under it: a note.
const OtherProgramsProblemShare = 0.10

// hostFindings: the server's machine's memory during one level.
func hostFindings(level int, h *HostLevel, mem *HostMemory) []HardwareFinding {
	if h == nil {
		return nil
	}
	var out []HardwareFinding
	var in, outB int64
	if h.SwapInBytes != nil {
		in = *h.SwapInBytes
	}
	if h.SwapOutBytes != nil {
		outB = *h.SwapOutBytes
	}
	if in >= SwapNoteBytes || outB >= SwapNoteBytes {
		f := HardwareFinding{Level: level, Severity: SeverityNote, GPU: -1, Reason: FindingSwap, MiB: float64(in+outB) / (1 << 20)}
		var moved []string
		if in >= SwapNoteBytes {
			moved = append(moved, BytesWords(float64(in))+" in")
		}
		if outB >= SwapNoteBytes {
			moved = append(moved, BytesWords(float64(outB))+" out")
		}
		f.Text = "the server's machine swapped " + strings.Join(moved, " and ") + " during this level"
		if in > SwapProblemBytes || outB > SwapProblemBytes {
			f.Severity = SeverityProblem
			f.Text += ": its memory is short, and the figures include waiting on the disk — give the server less to hold (a smaller context or model) or close other programs"
		} else {
			f.Text += ", too little to move its figures much"
		}
		out = append(out, f)
	}
	if h.MinMemAvailableMiB != nil && mem != nil && mem.MemTotalMiB != nil && *mem.MemTotalMiB > 0 {
		avail, total := *h.MinMemAvailableMiB, *mem.MemTotalMiB
		if share := avail / total; share < LowMemoryShare {
			out = append(out, HardwareFinding{Level: level, Severity: SeverityNote, GPU: -1, Reason: FindingLowMemory, Share: share, MiB: avail,
				Text: fmt.Sprintf("the server's machine had as little as %s of its %s of memory available during this level: close to swapping, and a memory-mapped model may have been read from disk again",
					BytesWords(avail*(1<<20)), BytesWords(total*(1<<20)))})
		}
	}
	return out
}

// RunFindings judges what held for the whole run rather than one level:
// for each GPU where nvidia-smi listed more than one program (at the start
// or the end of the run, the two lists together, each program at its
// larger memory), the programs beside the largest — taken to be the
// server, since through ssh its process cannot be told apart by its pid —
// a problem when together they hold more than OtherProgramsProblemShare of
// the card's memory, else a note. Programs are named where their names
// are kept (a shared report blanks them, and the finding then counts them
// without names). No list, or one program a card: no findings.
func RunFindings(t *Telemetry) []HardwareFinding {
	if t == nil || t.GPUProcesses == nil {
		return nil
	}
	type key struct{ gpu, pid int }
	byKey := map[key]GPUProcess{}
	var order []key
	for _, p := range slices.Concat(t.GPUProcesses.Start, t.GPUProcesses.End) {
		k := key{p.GPU, p.PID}
		old, seen := byKey[k]
		if !seen {
			order = append(order, k)
			byKey[k] = p
			continue
		}
		if old.Name == "" {
			old.Name = p.Name
		}
		if p.UsedMiB != nil && (old.UsedMiB == nil || *p.UsedMiB > *old.UsedMiB) {
			old.UsedMiB = p.UsedMiB
		}
		byKey[k] = old
	}
	perGPU := map[int][]GPUProcess{}
	var gpus []int
	for _, k := range order {
		if _, ok := perGPU[k.gpu]; !ok {
			gpus = append(gpus, k.gpu)
		}
		perGPU[k.gpu] = append(perGPU[k.gpu], byKey[k])
	}
	var out []HardwareFinding
	for _, g := range gpus {
		ps := perGPU[g]
		if len(ps) < 2 {
			continue
		}
		slices.SortStableFunc(ps, func(a, b GPUProcess) int {
			return cmp.Or(cmp.Compare(usedOf(b), usedOf(a)), cmp.Compare(a.PID, b.PID))
		})
		server, others := ps[0], ps[1:]
		var held float64
		for _, p := range others {
			held += usedOf(p)
		}
		f := HardwareFinding{Severity: SeverityNote, GPU: g, Reason: FindingOtherPrograms, MiB: held}
		var total float64
		if i := slices.IndexFunc(t.Inventory, func(x GPU) bool { return x.Index == g }); i >= 0 && t.Inventory[i].MemoryTotalMiB != nil {
			total = *t.Inventory[i].MemoryTotalMiB
		}
		if total > 0 {
			f.Share = held / total
			if f.Share > OtherProgramsProblemShare {
				f.Severity = SeverityProblem
			}
		}
		f.Text = otherProgramsWords(g, server, others, held, total, f.Severity)
		out = append(out, f)
	}
	sortFindings(out)
	return out
}

func usedOf(p GPUProcess) float64 {
	if p.UsedMiB == nil {
		return 0
	}
	return *p.UsedMiB
}

// otherProgramsWords: "2 other programs hold 6.4 GiB of GPU 0's 24 GiB
// beside the largest, presumably the server (llama-server, 17.2 GiB):
// python3 6.1 GiB, Xorg 0.3 GiB — …".
func otherProgramsWords(gpu int, server GPUProcess, others []GPUProcess, held, total float64, sev Severity) string {
	known := slices.ContainsFunc(others, func(p GPUProcess) bool { return p.UsedMiB != nil })
	var s string
	switch {
	case !known && len(others) == 1:
		s = fmt.Sprintf("another program is on GPU %d", gpu)
	case !known:
		s = fmt.Sprintf("%d other programs are on GPU %d", len(others), gpu)
	default:
		n := "another program holds"
		if len(others) > 1 {
			n = fmt.Sprintf("%d other programs hold", len(others))
		}
		card := fmt.Sprintf("GPU %d", gpu)
		if total > 0 {
			card = fmt.Sprintf("GPU %d's %s", gpu, BytesWords(total*(1<<20)))
		}
		s = fmt.Sprintf("%s %s of %s", n, BytesWords(held*(1<<20)), card)
	}
	s += " beside the largest, presumably the server"
	if largest := processWords(server, ", "); largest != "" {
		s += " (" + largest + ")"
	}
	var named []string
	for _, p := range others {
		if programName(p.Name) != "" {
			named = append(named, processWords(p, " "))
		}
	}
	if len(named) > 0 {
		s += ": " + strings.Join(named, ", ")
	}
	switch {
	case sev == SeverityProblem:
		return s + " — memory the server could not have, and work that may have shared the card: stop them for a measurement of the server alone"
	case !known:
		return s + "; nvidia-smi did not say how much memory they hold"
	}
	return s + ", too little to move the figures much"
}

// processWords is a program's name and memory, "python3 6.1 GiB" (sep
// between them), either left out where not known.
func processWords(p GPUProcess, sep string) string {
	var parts []string
	if name := programName(p.Name); name != "" {
		parts = append(parts, name)
	}
	if p.UsedMiB != nil {
		parts = append(parts, BytesWords(*p.UsedMiB*(1<<20)))
	}
	return strings.Join(parts, sep)
}

// programName is a program's name without its directory:
// "/usr/local/bin/python3.10" is "python3.10", "C:\Ollama\ollama.exe"
// "ollama.exe".
func programName(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexAny(s, "/\\"); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// BytesWords is a size for a sentence: "1.2 GiB", "300 MiB", "12 KiB".
func BytesWords(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", b/(1<<10))
}
