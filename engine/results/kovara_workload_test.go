package results

import (
	"strings"
	"testing"
)

// TestKovaraWorkloadCacheNote: a level that took most of its prompts
// from the server's cache is the prompt-cache problem for the method's
// own prompts, and only a note, with its share, for a run whose requests
// share a system prompt or a history by design.
func TestKovaraWorkloadCacheNote(t *testing.T) {
	t.Parallel()
	file := func(w *Workload) *File {
		return &File{Complete: true, Runs: []Run{{Concurrency: 1, Requests: 8, Metrics: Metrics{RequestsOK: 8, TokenCountMethod: TokenCountServerUsage}}},
			Local: Local{FreshSeed: true, Workload: w, Levels: []LevelLocal{{Concurrency: 1,
				PromptCache: &PromptCache{CachedTokens: 900, PromptTokens: 1000, Requests: 8, Source: CacheFromUsage},
				ByTurn:      []TurnFigures{{Turn: 1, Requests: 4, OK: 4, TTFTMs: &Dist{P50: 90}}, {Turn: 2, Requests: 4, OK: 4, TTFTMs: &Dist{P50: 40}}}}}}}
	}
	tests := []struct {
		name         string
		w            *Workload
		wantProblem  bool
		wantNotes    []string
		wantHeadline string
	}{
		{"the method's prompts", nil, true, nil, "Finished, with a problem"},
		{"a shared prefix", &Workload{SharedPrefix: 2000, PrefixGroups: 1, Turns: 2}, false, []string{
			"The requests: a shared 2,000-token system prompt, 2-turn conversations. " + WorkloadUnpublishable,
			"The server took this share of the prompt tokens from its cache: 90 % at concurrency 1 (" + CacheFromUsage + ")",
			"At concurrency 1, by turn (time to first token p50, prompt tokens p50, share the server took from its cache): 1: 90 ms",
		}, "Complete."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := file(tt.w)
			ws := Warnings(f)
			problems, notes := Split(ws)
			if got := PromptCacheText(f) != ""; got != tt.wantProblem || (len(problems) > 0) != tt.wantProblem {
				t.Errorf("prompt-cache problem %v (%q), want %v", got, problems, tt.wantProblem)
			}
			all := strings.Join(notes, "\n")
			for _, want := range tt.wantNotes {
				if !strings.Contains(all, want) {
					t.Errorf("notes lack %q:\n%s", want, all)
				}
			}
			if tt.w == nil && strings.Contains(all, "by turn") {
				t.Errorf("notes of the method's prompts say turns:\n%s", all)
			}
			if h := Headline(f, ws); !strings.HasPrefix(h, tt.wantHeadline) {
				t.Errorf("headline %q, want it to begin %q", h, tt.wantHeadline)
			}
		})
	}
}

// TestKovaraWorkloadNotPublished: a results file with local.workload is
// refused by the publish check in one sentence; the published document
// of the same file without it never carried local anyway.
func TestKovaraWorkloadNotPublished(t *testing.T) {
	t.Parallel()
	data := readFixture(t, "hardware.json")
	if _, reasons := PublishCheck(data); len(reasons) != 0 {
		t.Fatalf("the fixture is refused: %q", reasons)
	}
	with := edit(t, data, setting("/local/workload", map[string]any{"turns": 3}))
	payload, reasons := PublishCheck(with)
	if payload != nil || len(reasons) != 1 || reasons[0] != WorkloadUnpublishable {
		t.Errorf("got %q, want only %q", reasons, WorkloadUnpublishable)
	}
}
