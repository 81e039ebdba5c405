package sim

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A fixed prompt (an unnumbered request) is answered as a model at
// temperature 0 would: the same words each time for the same model,
// other words from another; and a model the config slows is given the
// longer interval (the simulator's own pacing, not a live timing).
func TestFixedPromptAnswers(t *testing.T) {
	t.Parallel()
	cfg := Config{TokenInterval: 2 * time.Millisecond, PrefillRate: 1e6, Models: []string{"q4", "q8"}, ModelSlowdown: map[string]float64{"q8": 3}}
	srv, url := startSim(t, cfg)
	ask := func(model, prompt string) string {
		body, _ := json.Marshal(map[string]any{"model": model, "stream": true, "max_tokens": 40,
			"messages": []map[string]string{{"role": "user", "content": prompt}}})
		return strings.Join(summarize(t, mustStream(t, url, body).lines).texts, "")
	}
	a1 := ask("q4", "Write a haiku about rain.")
	a2 := ask("q4", "Write a haiku about rain.")
	b := ask("q8", "Write a haiku about rain.")
	c := ask("q4", "Write a limerick about snow.")
	if a1 == "" || a1 != a2 {
		t.Errorf("the same prompt and model answered %q, then %q", a1, a2)
	}
	if b == a1 || c == a1 {
		t.Errorf("another model (%q) or prompt (%q) answered as the first did (%q)", b, c, a1)
	}
	gap := func(model string) time.Duration { return (&run{s: srv, j: &job{model: model}}).interval() }
	if got, want := gap("q8"), 3*gap("q4"); got != want || gap("q4") != cfg.TokenInterval {
		t.Errorf("the slowed model's interval is %v, the other's %v; want %v and %v", got, gap("q4"), want, cfg.TokenInterval)
	}
}
