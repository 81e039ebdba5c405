package results

import "testing"

func TestSpecDecStops(t *testing.T) {
	t.Parallel()
	level := func(lo, hi int) SpecDecLevel {
		return SpecDecLevel{OK: 4, OutputTokens: &LengthSpread{Min: lo, P50: float64(lo+hi) / 2, Max: hi}}
	}
	for _, c := range []struct {
		name   string
		limit  int
		levels []SpecDecLevel
		want   string
	}{
		{"every answer at the limit", 256, []SpecDecLevel{level(256, 256), level(256, 256)},
			"Every answer hit the 256-token limit: the model never stopped on its own."},
		{"every answer before it", 512, []SpecDecLevel{level(88, 301), level(120, 480)},
			"Every answer stopped on its own, before the 512-token limit (88 to 480 tokens)."},
		{"one level stops, the other runs to the limit", 256, []SpecDecLevel{level(256, 256), level(97, 200)},
			"Answers of 97 to 256 tokens: some stopped on their own, some hit the 256-token limit."},
		{"some answers of one level at the limit", 256, []SpecDecLevel{level(140, 256)},
			"Answers of 140 to 256 tokens: some stopped on their own, some hit the 256-token limit."},
		{"a level without answers says nothing", 256, []SpecDecLevel{{Requests: 4}, level(256, 256)},
			"Every answer hit the 256-token limit: the model never stopped on its own."},
		{"no answers at all", 256, []SpecDecLevel{{Requests: 4}}, ""},
		{"no limit recorded", 0, []SpecDecLevel{level(10, 20)}, ""},
	} {
		r := &SpecDecResult{Settings: SpecDecSettings{MaxTokens: c.limit, NaturalStop: true}, Levels: c.levels}
		if got := r.Stops(); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
