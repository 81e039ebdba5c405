package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A server's limits: how long a prompt and answer its context holds, and
// how many requests it serves at once. Each family says them (or not) in
// its own place and is changed by its own setting; the sentences here name
// that setting (docs/servers.md).

// ContextFix is how a family's server is given a larger context.
func ContextFix(family string) string {
	switch family {
	case FamilyLlamaCpp:
		return "llama-server: -c, which it divides among its -np slots"
	case FamilyOllama:
		return "Ollama: set OLLAMA_CONTEXT_LENGTH in the environment of `ollama serve`; options.num_ctx in a /v1 request is ignored"
	case FamilyVLLM:
		return "vLLM: --max-model-len"
	case FamilySGLang:
		return "SGLang: --context-length"
	}
	return ""
}

// ParallelFix is how a family's server is made to serve more requests at
// once; want is how many the run sent.
func ParallelFix(family string, want int) string {
	switch family {
	case FamilyOllama:
		return fmt.Sprintf("Ollama serves OLLAMA_NUM_PARALLEL requests at once, 1 by default: start `ollama serve` with OLLAMA_NUM_PARALLEL=%d (each takes its own context's memory)", want)
	case FamilyLlamaCpp:
		return fmt.Sprintf("llama-server serves as many requests at once as it has slots: start it with -np %d (it divides -c among them)", want)
	case FamilyVLLM:
		return "vLLM: raise --max-num-seqs, or give the KV cache more memory (--gpu-memory-utilization)"
	case FamilySGLang:
		return "SGLang: raise --max-running-requests, or give the KV cache more memory (--mem-fraction-static)"
	}
	return "raise the server's limit on requests served at once (its parallel slots or maximum sequences)"
}

// Queueing is a level whose requests waited for others to finish before
// their first token: the server served about Slots of the Concurrency at
// once. Wait is the TTFT p50 above the run's lowest, Answer the time an
// answer took once started (latency p50 − TTFT p50), both ms.
type Queueing struct {
	Concurrency, Slots int
	WaitMs, AnswerMs   float64
}

// queueShare is how much of an answer's time the typical request must
// have waited before its first token for the level to count as queued:
// half an answer. A server that batches every request slows each a
// little, and its TTFT grows by a prefill or two, never by answers.
const queueShare = 0.5

// minQueueWaitMs is the least wait that can count as a queue: a few
// milliseconds of TTFT at 32 streams on loopback are the client's and the
// machine's scheduling (seen on the simulator, whose answers took 4 ms),
// and no real model answers that fast.
const minQueueWaitMs = 50

// QueueingOf finds the levels of runs whose requests queued. Closed-loop
// clients with S slots: each of c requests waits for the c−S before it,
// about (c/S − 1) answers, so S ≈ c / (1 + wait / answer). The wait is
// measured against the run's lowest TTFT p50 when a lower level ran;
// alone, a level must show a whole answer's wait.
func QueueingOf(runs []Run) []Queueing {
	base, baseConc := math.Inf(1), 0
	for _, r := range runs {
		if d := r.Metrics.TTFTMs; d != nil && d.N > 0 && d.P50 < base {
			base, baseConc = d.P50, r.Concurrency
		}
	}
	var out []Queueing
	for _, r := range runs {
		m := r.Metrics
		if r.Concurrency < 2 || m.TTFTMs == nil || m.LatencyMs == nil || m.TTFTMs.N == 0 {
			continue
		}
		answer := m.LatencyMs.P50 - m.TTFTMs.P50
		if answer <= 0 {
			continue
		}
		wait, need := m.TTFTMs.P50-base, queueShare
		if baseConc >= r.Concurrency {
			wait, need = m.TTFTMs.P50, 1
		}
		if wait < need*answer || wait < minQueueWaitMs {
			continue
		}
		// Prompts that share a compute-bound server are prefilled
		// together, each as slowly as all of them one after another at
		// worst: a TTFT within that is sharing, not a queue (a real Ollama
		// with four slots, two 6,000-token prompts on two CPU cores:
		// 4.97 s alone, 9.90 s at 2). More slots would not help it.
		if baseConc < r.Concurrency && m.TTFTMs.P50 <= base*float64(r.Concurrency)/float64(baseConc) {
			continue
		}
		slots := max(1, int(math.Round(float64(r.Concurrency)/(1+wait/answer))))
		if slots >= r.Concurrency {
			continue
		}
		out = append(out, Queueing{Concurrency: r.Concurrency, Slots: slots, WaitMs: wait, AnswerMs: answer})
	}
	return out
}

// queueingText says it of a results file, with the family's fix; "" when
// no level queued.
func queueingText(f *File, runs []Run) string {
	qs := QueueingOf(runs)
	if len(qs) == 0 {
		return ""
	}
	q := qs[0]
	family := ""
	if d := f.Local.Detection; d != nil {
		family = d.Family
	}
	served := fmt.Sprintf("the server served about %d %s at a time", q.Slots, Plural(q.Slots, "request", "requests"))
	if d := f.Local.Detection; d != nil && d.ParallelSlots > 0 && d.ParallelSlots < q.Concurrency {
		// Its own count beats the estimate from the level's times.
		served = fmt.Sprintf("the server serves %d at a time, its parallel %s (%s)", d.ParallelSlots, Plural(d.ParallelSlots, "slot", "slots"), d.ParallelSource)
		for i := range qs {
			qs[i].Slots = d.ParallelSlots
		}
		q = qs[0]
	}
	t := fmt.Sprintf("at concurrency %d the requests waited for others to finish before their first token (TTFT p50 %s above the lowest, while an answer took %s): %s",
		q.Concurrency, Seconds(q.WaitMs), Seconds(q.AnswerMs), served)
	// Other levels that queued (a capacity search probes some twice),
	// each once, in order.
	seen := map[int]bool{q.Concurrency: true}
	var same, other []string
	for _, o := range slices.SortedFunc(slices.Values(qs[1:]), func(a, b Queueing) int { return a.Concurrency - b.Concurrency }) {
		if seen[o.Concurrency] {
			continue
		}
		seen[o.Concurrency] = true
		if o.Slots == q.Slots {
			same = append(same, strconv.Itoa(o.Concurrency))
		} else {
			other = append(other, fmt.Sprintf("about %d at concurrency %d", o.Slots, o.Concurrency))
		}
	}
	if len(same) > 0 {
		other = append([]string{"the same at concurrency " + JoinAnd(same)}, other...)
	}
	if len(other) > 0 {
		t += " (" + strings.Join(other, "; ") + ")"
	}
	want := q.Concurrency
	for _, o := range qs {
		want = max(want, o.Concurrency)
	}
	t += ", so the figures measure its queue, not its speed at that concurrency; "
	if d := f.Local.Detection; d != nil && d.ParallelSlots >= want {
		// Its slots were enough: what it lacked was compute (seen on a
		// llama-server -np 4 with one thread on a busy machine, where
		// the advice was "start it with -np 4").
		return t + fmt.Sprintf("it has %d %s (%s), so more would not help: it was short of compute at that concurrency — too few threads, or other programs busy on its machine",
			d.ParallelSlots, Plural(d.ParallelSlots, "slot", "slots"), d.ParallelSource)
	}
	return t + ParallelFix(family, want)
}

// listed joins the texts that are not empty with ", ": a few words
// for each part of a description that is there.
func listed(texts ...string) string {
	return strings.Join(slices.DeleteFunc(texts, func(t string) bool { return t == "" }), ", ")
}

// when is text where ok holds, else nothing (a part listed leaves out).
func when(ok bool, text string) string {
	if !ok {
		return ""
	}
	return text
}

// JoinAnd joins "2", "3" and "4" as "2, 3 and 4": the one way every
// sentence lists things.
func JoinAnd(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
