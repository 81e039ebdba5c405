package results

import (
	"fmt"
	"strings"
)

// A Kovara results file whose levels sent a workload (local.workload: a
// shared system prompt, conversations) instead of the method's prompts:
// what its notes say, and why it is never published.

// WarnWorkload: the run's requests carried a workload (its notes).
const WarnWorkload = "workload"

// WorkloadUnpublishable is why PublishCheck refuses a file with a
// workload.
const WorkloadUnpublishable = "A run with a shared system prompt or conversations does not send the Kovara method's prompts, so it cannot be published; it stays in your library."

// workloadNotes are the sentences a file with a workload adds to its
// notes: the workload, the prefix check, what the server took from its
// cache at each level (the point of the workload, not a fault) and each
// level's turns; none without a workload.
func workloadNotes(f *File) []string {
	w := f.Local.Workload
	if w == nil {
		return nil
	}
	out := []string{"The requests: " + w.Words() + ". " + WorkloadUnpublishable}
	if s := f.Local.PrefixCheck.Words(); s != "" {
		out = append(out, "The shared prefix alone, one request at a time: "+s+".")
	}
	if s := workloadCacheText(f); s != "" {
		out = append(out, s)
	}
	for _, l := range f.Local.Levels {
		if s := TurnsWords(fmt.Sprintf("concurrency %d", l.Concurrency), l.ByTurn); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// workloadCacheText says the share of prompt tokens the server took from
// its cache at each level of a run with a workload, or "": "The server
// took its prompt tokens from its cache at 61 % at concurrency 1, 88 % at
// concurrency 4 (usage.prompt_tokens_details.cached_tokens): what the
// shared prompts and histories are for."
func workloadCacheText(f *File) string {
	var parts []string
	source := ""
	for _, l := range f.Local.Levels {
		pc := l.PromptCache
		if pc == nil || pc.PromptTokens <= 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%.0f %% at concurrency %d", 100*pc.Share(), l.Concurrency))
		if source == "" {
			source = pc.Source
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("The server took this share of the prompt tokens from its cache: %s (%s); with a shared prompt or a conversation's history that is what it is for, not a fault of the run.",
		strings.Join(parts, ", "), source)
}
