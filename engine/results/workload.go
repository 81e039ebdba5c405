package results

import (
	"fmt"
	"strconv"
	"strings"
)

// What a run's requests asked beyond the method's synthetic prompt
// (docs/plans.md, "Your own load"), and what the server's cache made of
// it. A prompts file is named by its SHA-256 and counts, never its text
// or its path (its path is local: PlanLocal.PromptsFile).

// Workload is what a run's requests asked, nil for the synthetic prompt.
type Workload struct {
	Prompts *PromptsSource `json:"prompts,omitempty"`
	// SharedPrefix is the system prompt's length asked, in tokens, and
	// SharedPrefixWords the words sent for it (the seed makes them);
	// PrefixGroups how many system prompts the users share.
	SharedPrefix      int `json:"shared_prefix,omitempty"`
	SharedPrefixWords int `json:"shared_prefix_words,omitempty"`
	PrefixGroups      int `json:"prefix_groups,omitempty"`
	// Turns is each conversation's length; every turn sent the whole
	// history.
	Turns int `json:"turns,omitempty"`
}

// PromptsSource is a prompts file as a run used it: which file (its
// hash), how much of it, and what was skipped.
type PromptsSource struct {
	Shape   string `json:"shape"` // "jsonl" or "sharegpt"
	SHA256  string `json:"sha256"`
	Bytes   int64  `json:"bytes"`
	Lines   int    `json:"lines"`   // physical lines (JSONL) or entries (ShareGPT)
	Records int    `json:"records"` // usable prompts
	// Skipped are the malformed records left out, SkippedLines the first
	// of their line (or entry) numbers.
	Skipped      int   `json:"skipped,omitempty"`
	SkippedLines []int `json:"skipped_lines,omitempty"`
}

// Words says the workload in one line: "your prompts (sharegpt, 5,000 of
// 5,002 entries, sha256 1a2b3c4d…)", "a shared 2,000-token system prompt
// in 2 groups", "10-turn conversations"; "" for the synthetic prompt.
func (w *Workload) Words() string {
	if w == nil {
		return ""
	}
	var parts []string
	if p := w.Prompts; p != nil {
		unit := "lines"
		if p.Shape == "sharegpt" {
			unit = "entries"
		}
		s := fmt.Sprintf("your prompts (%s, %s records in %s %s, sha256 %s…", p.Shape, Thousands(p.Records), Thousands(p.Lines), unit, short(p.SHA256))
		if p.Skipped > 0 {
			s += fmt.Sprintf(", %s malformed skipped", Thousands(p.Skipped))
		}
		parts = append(parts, s+")")
	}
	if w.SharedPrefix > 0 {
		s := fmt.Sprintf("a shared %s-token system prompt", Thousands(w.SharedPrefix))
		if w.PrefixGroups > 1 {
			s += fmt.Sprintf(" in %d groups", w.PrefixGroups)
		}
		parts = append(parts, s)
	}
	if w.Turns > 1 {
		parts = append(parts, fmt.Sprintf("%d-turn conversations", w.Turns))
	}
	return strings.Join(parts, ", ")
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// TurnFigures are one turn's requests across a level's conversations.
type TurnFigures struct {
	Turn     int   `json:"turn"` // from 1
	Requests int   `json:"requests"`
	OK       int   `json:"ok"`
	TTFTMs   *Dist `json:"ttft_ms"` // from the intended send in the rate plan
	// PromptTokens are the turn's prompts as the server counted them;
	// Cache what it took from its cache (nil when it did not say).
	PromptTokens *Dist        `json:"prompt_tokens,omitempty"`
	Cache        *PromptCache `json:"cache,omitempty"`
}

// PrefixCheck is a shared prefix's cold and warm time to first token,
// one user alone before the load: requests with the group's system
// prompt, cached, against the same lengths with a system prompt no cache
// has seen.
type PrefixCheck struct {
	Pairs int `json:"pairs"` // requests of each kind measured
	// WarmTTFTMs and ColdTTFTMs are the medians; WarmPromptTokens and
	// ColdPromptTokens the prompts as the server counted them (median).
	WarmTTFTMs       float64 `json:"warm_ttft_ms"`
	ColdTTFTMs       float64 `json:"cold_ttft_ms"`
	WarmPromptTokens int     `json:"warm_prompt_tokens,omitempty"`
	ColdPromptTokens int     `json:"cold_prompt_tokens,omitempty"`
	// Cache is what the server said it took from its cache for the warm
	// requests (nil when it did not say); ColdCache for the cold ones
	// (the method's template, at most).
	Cache     *PromptCache `json:"cache,omitempty"`
	ColdCache *PromptCache `json:"cold_cache,omitempty"`
	Failed    int          `json:"failed,omitempty"`
}

// Saved is the share of the cold time to first token the cache saved,
// 0 to 1 (negative when warm was slower); false without both figures.
func (p *PrefixCheck) Saved() (float64, bool) {
	if p == nil || p.ColdTTFTMs <= 0 || p.WarmTTFTMs <= 0 {
		return 0, false
	}
	return 1 - p.WarmTTFTMs/p.ColdTTFTMs, true
}

// Words says the check in one line: "the shared prefix came from the
// server's cache: 1,994 of 2,301 prompt tokens (87 %); time to first
// token 92 ms against 610 ms cold, 85 % less".
func (p *PrefixCheck) Words() string {
	if p == nil {
		return ""
	}
	var parts []string
	if c := p.Cache; c != nil && c.PromptTokens > 0 {
		parts = append(parts, fmt.Sprintf("the server took %s of %s prompt tokens from its cache (%.0f %%, by %s)",
			Thousands(int(c.CachedTokens)), Thousands(int(c.PromptTokens)), c.Share()*100, c.Source))
	} else {
		parts = append(parts, "the server did not say what it took from its cache")
	}
	if s, ok := p.Saved(); ok {
		parts = append(parts, fmt.Sprintf("time to first token %s with the shared prefix against %s cold, %s", Seconds(p.WarmTTFTMs), Seconds(p.ColdTTFTMs), savedWords(s)))
	}
	return strings.Join(parts, "; ")
}

func savedWords(s float64) string {
	if s >= 0 {
		return fmt.Sprintf("%.0f %% less", s*100)
	}
	return fmt.Sprintf("%.0f %% more", -s*100)
}

// WorkloadColumns are the columns a table adds for a run with its own
// workload: the successes' lengths as the server counted them and the
// share of prompt tokens it took from its cache.
var WorkloadColumns = []string{"Prompt p50\ntokens", "Answer p50\ntokens", "From cache\n%"}

// workloadCells are WorkloadColumns' cells.
func workloadCells(prompts, answers *Dist, cache *PromptCache) []string {
	share := Missing
	if cache != nil && cache.PromptTokens > 0 {
		share = strconv.FormatFloat(cache.Share()*100, 'f', 0, 64)
	}
	return []string{distAt(prompts, 50), distAt(answers, 50), share}
}

func (w *Workload) prompts() *PromptsSource {
	if w == nil {
		return nil
	}
	return w.Prompts
}

// SkippedWords says the malformed records a run skipped: "3 malformed
// lines of the prompts file were skipped (lines 4, 17, 230)".
func (p *PromptsSource) SkippedWords() string {
	unit := "line"
	if p.Shape == "sharegpt" {
		unit = "entry"
	}
	nums := make([]string, 0, len(p.SkippedLines))
	for _, n := range p.SkippedLines {
		nums = append(nums, strconv.Itoa(n))
	}
	s := fmt.Sprintf("%s malformed %s of the prompts file %s skipped", Thousands(p.Skipped), pluralUnit(p.Skipped, unit), Plural(p.Skipped, "was", "were"))
	if len(nums) > 0 {
		more := ""
		if p.Skipped > len(nums) {
			more = ", …"
		}
		s += fmt.Sprintf(" (%s %s%s)", pluralUnit(len(nums), unit), strings.Join(nums, ", "), more)
	}
	return s + "."
}

func pluralUnit(n int, unit string) string {
	if unit == "entry" {
		return Plural(n, "entry", "entries")
	}
	return Plural(n, unit, unit+"s")
}

// TurnsWords says a level's turns in one line, or "": "At 2 req/s, by
// turn (time to first token p50, prompt tokens p50, share the server took
// from its cache): 1: 310 ms, 344, 77 %; 2: 95 ms, 405, 88 %".
func TurnsWords(level string, turns []TurnFigures) string {
	if len(turns) == 0 {
		return ""
	}
	var parts []string
	for _, t := range turns {
		ttft := Missing
		if t.TTFTMs != nil {
			ttft = Seconds(t.TTFTMs.P50)
		}
		cells := []string{ttft, distAt(t.PromptTokens, 50)}
		if t.Cache != nil && t.Cache.PromptTokens > 0 {
			cells = append(cells, fmt.Sprintf("%.0f %%", t.Cache.Share()*100))
		} else {
			cells = append(cells, Missing)
		}
		parts = append(parts, fmt.Sprintf("%d: %s", t.Turn, strings.Join(cells, ", ")))
	}
	return fmt.Sprintf("At %s, by turn (time to first token p50, prompt tokens p50, share the server took from its cache): %s.", level, strings.Join(parts, "; "))
}

// Headline says the prefix check in one sentence, or "".
func (p *PrefixCheck) Headline() string {
	s, ok := p.Saved()
	if !ok {
		return ""
	}
	out := fmt.Sprintf("With the shared prefix cached, the time to first token was %s against %s cold (%s)", Seconds(p.WarmTTFTMs), Seconds(p.ColdTTFTMs), savedWords(s))
	if c := p.Cache; c != nil && c.PromptTokens > 0 {
		out += fmt.Sprintf("; the server took %.0f %% of those prompts from its cache", c.Share()*100)
	}
	return out + "."
}
