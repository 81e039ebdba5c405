package results

import (
	"slices"
	"strings"
	"testing"
)

func spreadAt(p50, lo, hi float64) *Spread {
	return &Spread{Min: lo, P10: lo, P50: p50, P90: hi, Max: hi}
}

func contextDoc() *ContextResult {
	n0, n8 := 24, 8201
	off := 0.0011
	return &ContextResult{PlanHeader: PlanHeader{Complete: true}, Settings: ContextSettings{Repeats: 3, Users: 1}, PrefillMethod: PrefillAboveShortPrompt,
		PrefillBaseline: &PrefillBaseline{ReadTokens: 24, TTFTMs: 5}, Depths: []ContextDepth{
			{Depth: 0, PromptTokens: &n0, Conversations: 3, OK: 3, TTFTMs: spreadAt(5, 4, 6),
				DecodeTPS: spreadAt(250, 249, 251), CachedTTFTMs: spreadAt(4, 4, 4)},
			{Depth: 8192, PromptTokens: &n8, Off: &off, Conversations: 3, OK: 2, Failures: []string{"timeout: no answer within the timeout"},
				TTFTMs: spreadAt(1230, 1228, 1240), PrefillTPS: spreadAt(6660, 6600, 6700), DecodeTPS: spreadAt(201.3, 200, 202),
				CachedTTFTMs: spreadAt(31, 30, 33), CachedTokens: spreadAt(8187, 8187, 8187)},
		}}
}

func TestContextTableAndPoints(t *testing.T) {
	t.Parallel()
	r := contextDoc()
	tab := r.Table()
	if len(tab.Columns) != len(ContextColumns) || len(tab.Rows) != 2 {
		t.Fatalf("table %+v", tab)
	}
	want := []string{"8k", "8201 (+0.1 %)", "1230.0 ±0.8 %", "6660 ±0.9 %", "201.3 ±0.6 %", "31.0 ±6.5 %", "8187", Missing, Missing, "2 / 3"}
	if got := tab.Rows[1]; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("row\n got %q\nwant %q", got, want)
	}
	pts := r.Points(SeriesCachedTTFT)
	if len(pts) != 2 || pts[0].X != 24 || pts[1].X != 8201 || pts[1].Y != 31 || pts[1].Lo != 30 || pts[1].Hi != 33 {
		t.Errorf("points %+v", pts)
	}
	// The short prompt is the prefill baseline, with no point of its own.
	if pts := r.Points(SeriesPrefill); len(pts) != 1 || pts[0].Depth != 8192 {
		t.Errorf("prefill points %+v", pts)
	}
	if p := r.Problems(); len(p) != 1 || !strings.Contains(p[0], "at 8k, 1 of 3 conversations failed (first: timeout") {
		t.Errorf("problems %q", p)
	}
}

func TestContextHeadline(t *testing.T) {
	t.Parallel()
	r := contextDoc()
	h := r.Headline()
	for _, want := range []string{
		"From a short prompt to 8192 tokens (8201 measured) of context, decode fell from 250.0 to 201.3 tok/s (−19 %).",
		"At 8192 tokens the first token took 1.23 s cold and 31 ms as a cached follow-up, 39.7× faster; the server said it took 8187 tokens from its cache.",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("headline lacks %q:\n%s", want, h)
		}
	}
	// Two depths only: the short prompt has no prefill (it is the
	// baseline), so no trend of it is said; with 1k between, from 1k on.
	if strings.Contains(h, "prefill") {
		t.Errorf("a prefill trend from one prefill: %s", h)
	}
	n1 := 1030
	with1k := contextDoc()
	with1k.Depths = slices.Insert(with1k.Depths, 1, ContextDepth{Depth: 1024, PromptTokens: &n1, Conversations: 3, OK: 3,
		TTFTMs: spreadAt(120, 118, 125), PrefillTPS: spreadAt(9000, 8900, 9100), DecodeTPS: spreadAt(240, 239, 241)})
	if h := with1k.Headline(); !strings.Contains(h, "cold prefill, from 1024 tokens (1030 measured) on, fell from 9000 to 6660 tok/s (−26 %)") {
		t.Errorf("prefill from 1k: %s", h)
	}
	// Within the repeats' spread: no change is called one.
	r.Depths[1].DecodeTPS = spreadAt(249.5, 248, 250.5)
	if h := r.Headline(); !strings.Contains(h, "decode held at about 250.0 tok/s") {
		t.Errorf("held: %s", h)
	}
	// A follow-up no faster and no cache reported.
	r.Depths[1].CachedTTFTMs, r.Depths[1].CachedTokens = spreadAt(1229, 1225, 1235), nil
	if h := r.Headline(); !strings.Contains(h, "the follow-up was no faster, and the server reported no cached tokens") {
		t.Errorf("no cache: %s", h)
	}
	r.Complete, r.Limit, r.Warnings = false, "the server cut the 16384-token prompts", []string{"w"}
	h = r.Headline()
	if !strings.HasPrefix(h, "Stopped before every depth was measured; so far: ") || !strings.Contains(h, "It went no deeper: the server cut") ||
		!strings.HasSuffix(h, "Read the 1 warning below before trusting the figures.") {
		t.Errorf("stopped: %s", h)
	}
	if h := (&ContextResult{PlanHeader: PlanHeader{Complete: true}}).Headline(); h != "No depth was measured." {
		t.Errorf("empty: %q", h)
	}
}

// TestContextDepthWords (#47): the headline names a depth the server
// counted at another length with both numbers the first time — the depth
// asked for and the one measured, which the chart draws — and the depth
// alone after that ("1024 tokens" above a chart at 1001 said nothing of
// why).
func TestContextDepthWords(t *testing.T) {
	t.Parallel()
	n := func(v int) *int { return &v }
	tests := []struct {
		name  string
		depth ContextDepth
		first string
		again string
	}{
		{"counted at another length", ContextDepth{Depth: 1024, PromptTokens: n(1001)}, "1024 tokens (1001 measured)", "1024 tokens"},
		{"counted at its length", ContextDepth{Depth: 1024, PromptTokens: n(1024)}, "1024 tokens", "1024 tokens"},
		{"not counted", ContextDepth{Depth: 2048}, "2048 tokens", "2048 tokens"},
		{"the short prompt", ContextDepth{Depth: 0, PromptTokens: n(24)}, "a short prompt", "a short prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := depthNamer()
			if got := name(&tt.depth); got != tt.first {
				t.Errorf("first %q, want %q", got, tt.first)
			}
			if got := name(&tt.depth); got != tt.again {
				t.Errorf("again %q, want %q", got, tt.again)
			}
		})
	}
	// In the headline: the deepest named twice, its measured length once.
	r := contextDoc()
	h := r.Headline()
	if got := strings.Count(h, "8201 measured"); got != 1 || !strings.Contains(h, "At 8192 tokens the first token took") {
		t.Errorf("headline %q: want 8201 measured said once, then the depth alone", h)
	}
}

func TestContextTimerNoteAndDisagreement(t *testing.T) {
	t.Parallel()
	r := contextDoc()
	if n := r.TimerNote(); n != "" {
		t.Errorf("no timings, yet a note: %s", n)
	}
	r.Depths[1].ServerPrefillTPS, r.Depths[1].OutsideTimerMs = spreadAt(6893, 6800, 6900), spreadAt(112, 100, 160)
	r.Depths[0].OutsideTimerMs = spreadAt(3, 2, 4)
	if n := r.TimerNote(); !strings.Contains(n, "at 8k the server's own prompt timer leaves out 112 ms of the 1.23 s cold TTFT, 109 ms more than at the short prompt,") ||
		!strings.Contains(n, "--cache-ram 0") || !strings.HasSuffix(n, "reads +3.5 % against the plan's") {
		t.Errorf("note: %s", n)
	}
	if w := r.Depths[1].Disagreement(); w != "" {
		t.Errorf("decode 200–202 tok/s called a disagreement: %s", w)
	}
	r.Depths[0].DecodeTPS = spreadAt(22.7, 14.8, 49.6)
	if w := r.Depths[0].Disagreement(); !strings.Contains(w, "at the short prompt disagree: decode from 14.8 to 49.6 tok/s") {
		t.Errorf("disagreement: %s", w)
	}
}

// TestContextPrefillMethod: the method line follows how prefill was taken,
// read from prefill_method, or from the baseline in files written before
// that field; files from before the baseline took it over the whole TTFT.
func TestContextPrefillMethod(t *testing.T) {
	t.Parallel()
	const above, whole = "(TTFT − the short prompt's median TTFT)", "cold prompt tokens (less any the server took from its cache) / TTFT"
	tests := []struct {
		name   string
		method string
		base   *PrefillBaseline
		want   string
	}{
		{"said", PrefillAboveShortPrompt, &PrefillBaseline{ReadTokens: 8, TTFTMs: 6.8}, above},
		{"said, no short prompt back", PrefillAboveShortPrompt, nil, above},
		{"baseline kept, method not yet said", "", &PrefillBaseline{ReadTokens: 8, TTFTMs: 6.8}, above},
		{"before the baseline", "", nil, whole},
	}
	for _, tt := range tests {
		r := &ContextResult{PrefillMethod: tt.method, PrefillBaseline: tt.base, Settings: ContextSettings{Repeats: 3, Users: 1}}
		if got := r.Method(); !strings.Contains(got, tt.want) {
			t.Errorf("%s: method %q, want it to say %q", tt.name, got, tt.want)
		}
	}
}
