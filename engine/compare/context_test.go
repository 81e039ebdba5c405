package compare

import (
	"math"
	"slices"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// TestContextVerdictPrefillMethod: a context result whose prefill was
// taken above the short prompt is not like for like with one written
// before, which took it over the whole TTFT; and the short prompt has no
// prefill row (it is the baseline).
func TestContextVerdictPrefillMethod(t *testing.T) {
	t.Parallel()
	doc := func(base *results.PrefillBaseline) *results.ContextResult {
		r := &results.ContextResult{PlanHeader: results.PlanHeader{Model: "m"}, Settings: results.ContextSettings{OutputTokens: 128, Users: 1}, PrefillBaseline: base}
		if base != nil {
			r.PrefillMethod = results.PrefillAboveShortPrompt
		}
		return r
	}
	now, old := doc(&results.PrefillBaseline{ReadTokens: 8, TTFTMs: 6.8}), doc(nil)
	if like, diffs := ContextVerdict([]*results.ContextResult{now, doc(&results.PrefillBaseline{ReadTokens: 9, TTFTMs: 5})}); !like || len(diffs) != 0 {
		t.Errorf("two results with a baseline: like %v, %v", like, diffs)
	}
	like, diffs := ContextVerdict([]*results.ContextResult{now, old})
	if want := "prefill measured differs (above the short prompt vs over the whole TTFT, run 2)"; like || !slices.Contains(diffs, want) {
		t.Errorf("got like %v, %q; want %q", like, diffs, want)
	}
	for _, m := range ContextMetrics(0) {
		if m.ID == "prefill_tps@0" {
			t.Error("the short prompt has a prefill row")
		}
	}
	if m := ContextMetrics(1024); len(m) != 4 || m[0].ID != "prefill_tps@1024" {
		t.Errorf("1k metrics %+v", m)
	}
}

// contextDoc is a context result of one depth whose conversations decoded
// at the given rates.
func contextDoc(depth int, decode ...float64) *results.ContextResult {
	d := results.ContextDepth{Depth: depth, Conversations: len(decode), OK: len(decode)}
	for i, v := range decode {
		ttft := 100.0
		d.Runs = append(d.Runs, results.ContextConversation{Repeat: i + 1, User: 1,
			Cold: results.ContextTurn{DecodeTPS: &v, TTFTMs: &ttft}})
	}
	sorted := slices.Sorted(slices.Values(decode))
	d.DecodeTPS = &results.Spread{Min: sorted[0], P50: sorted[len(sorted)/2], Max: sorted[len(sorted)-1]}
	return &results.ContextResult{PlanHeader: results.PlanHeader{Model: "m"}, Depths: []results.ContextDepth{d}}
}

// TestContextNoise: a context comparison judges each change against the
// spread of the conversations behind it, and never colours noise.
func TestContextNoise(t *testing.T) {
	t.Parallel()
	decodeCell := func(docs ...*results.ContextResult) Cell {
		t.Helper()
		for _, r := range ContextTable(docs, []string{"a", "b"}) {
			if r.Metric.ID == "decode_tps@4096" {
				return r.Cells[1]
			}
		}
		t.Fatal("no decode row")
		return Cell{}
	}
	tests := []struct {
		name    string
		a, b    *results.ContextResult
		noise   Noise
		better  int
		bounded bool
	}{
		// Three real llama-server runs in a row moved decode at 8k by
		// −10.9 % with conversations 231 to 262 apart: noise.
		{"same server, runs apart", contextDoc(4096, 259.6, 262.1, 240.3), contextDoc(4096, 231.3, 252.0, 229.8), WithinNoise, 0, true},
		// Under 5 % is never a change, however tight the spread (the
		// flat rule coloured anything past 0.5 %).
		{"small but steady", contextDoc(4096, 300, 300, 300), contextDoc(4096, 294, 294, 294), WithinNoise, 0, true},
		{"a real slowdown", contextDoc(4096, 300, 303, 297), contextDoc(4096, 210, 212, 208), BeyondNoise, -1, true},
		{"a real speedup", contextDoc(4096, 300, 303, 297), contextDoc(4096, 390, 393, 388), BeyondNoise, +1, true},
		{"one conversation", contextDoc(4096, 300), contextDoc(4096, 150), WithinNoise, 0, false},
		// Two users a repeat went at once: one value a repeat, their
		// median, so three repeats of two users are three values, not six.
		{"two users a repeat", usersDoc(4096, 2, 300, 301, 303, 304, 297, 298), usersDoc(4096, 2, 210, 211, 212, 213, 208, 209), BeyondNoise, -1, true},
		{"one repeat of two users", usersDoc(4096, 2, 300, 303), usersDoc(4096, 2, 150, 152), WithinNoise, 0, false},
	}
	for _, tt := range tests {
		c := decodeCell(tt.a, tt.b)
		if c.Noise != tt.noise || c.Better != tt.better || math.IsInf(c.High, 1) == tt.bounded {
			t.Errorf("%s: noise %v, better %d, interval %v … %v; want %v, %d, bounded %v", tt.name, c.Noise, c.Better, c.Low, c.High, tt.noise, tt.better, tt.bounded)
		}
		if c.Noise == BeyondNoise && !(c.Low <= c.Delta && c.Delta <= c.High) {
			t.Errorf("%s: change %v outside its interval %v … %v", tt.name, c.Delta, c.Low, c.High)
		}
	}
}

// usersDoc is contextDoc with users conversations a repeat, in order.
func usersDoc(depth, users int, decode ...float64) *results.ContextResult {
	r := contextDoc(depth, decode...)
	for i := range r.Depths[0].Runs {
		r.Depths[0].Runs[i].Repeat, r.Depths[0].Runs[i].User = i/users+1, i%users+1
	}
	return r
}
