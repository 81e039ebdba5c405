package sim

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A fixed prompt (an unnumbered request) is answered as a model at
// temperature 0 would: the same words each time for the same model,
// other words from another; and a model the config slows decodes slower.
func TestFixedPromptAnswers(t *testing.T) {
	t.Parallel()
	cfg := Config{TokenInterval: 2 * time.Millisecond, PrefillRate: 1e6, Models: []string{"q4", "q8"}, ModelSlowdown: map[string]float64{"q8": 3}}
	_, url := startSim(t, cfg)
	ask := func(model, prompt string) (string, time.Duration) {
		body, _ := json.Marshal(map[string]any{"model": model, "stream": true, "max_tokens": 40,
			"messages": []map[string]string{{"role": "user", "content": prompt}}})
		s := summarize(t, mustStream(t, url, body).lines)
		return strings.Join(s.texts, ""), s.textAt[len(s.textAt)-1].Sub(s.textAt[0]) / time.Duration(max(1, len(s.textAt)-1))
	}
	a1, gap4 := ask("q4", "Write a haiku about rain.")
	a2, _ := ask("q4", "Write a haiku about rain.")
	b, gap8 := ask("q8", "Write a haiku about rain.")
	c, _ := ask("q4", "Write a limerick about snow.")
	if a1 == "" || a1 != a2 {
		t.Errorf("the same prompt and model answered %q, then %q", a1, a2)
	}
	if b == a1 || c == a1 {
		t.Errorf("another model (%q) or prompt (%q) answered as the first did (%q)", b, c, a1)
	}
	// Three times the interval: even a loaded machine's late wakeups
	// leave the slower model's mean gap above the faster one's.
	if gap8 <= gap4 {
		t.Errorf("the slowed model's gaps %v are not longer than %v", gap8, gap4)
	}
}
