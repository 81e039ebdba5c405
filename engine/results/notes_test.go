package results

import (
	"strings"
	"testing"
)

func TestConnectionNote(t *testing.T) {
	t.Parallel()
	level := func(c int, cs *Connections) LevelLocal { return LevelLocal{Concurrency: c, Connections: cs} }
	cases := []struct {
		name   string
		levels []LevelLocal
		want   []string // substrings; nil: no note
	}{
		{"none closed", []LevelLocal{level(1, nil), level(8, nil)}, nil},
		{"every answer", []LevelLocal{
			level(1, &Connections{Reconnects: 99, ServerClosed: 70, Requests: 100}),
			level(8, &Connections{Reconnects: 92, ServerClosed: 60, Requests: 100}),
		}, []string{"after every answer", "outside the measured time", "191 reconnects"}},
		{"every answer, some resent", []LevelLocal{
			level(1, &Connections{Reconnects: 99, Resent: 2, ServerClosed: 99, Requests: 100}),
		}, []string{"after every answer", "2 requests met a connection closed as it was sent", "counted once"}},
		{"now and then", []LevelLocal{
			level(1, &Connections{Reconnects: 1, ServerClosed: 1, Requests: 100}),
			level(8, nil),
		}, []string{"closed 1 connection during the run", "1 reconnects"}},
		// A level whose requests connected as sent reconnected nowhere:
		// the others still closed after every answer.
		{"every answer, and connected as sent", []LevelLocal{
			level(1, &Connections{Reconnects: 15, ServerClosed: 15, Requests: 16}),
			level(8, &Connections{Requests: 16, Connected: 16}),
			level(32, &Connections{Requests: 64, Connected: 64}),
		}, []string{"after every answer", "15 reconnects", "At concurrency 8 and 32 the server could not keep", "(80 requests)"}},
		{"connected as sent only", []LevelLocal{
			level(8, &Connections{Requests: 16, Connected: 16}),
		}, []string{"At concurrency 8 the server", "(16 requests)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ConnectionNote(&File{Local: Local{Levels: tc.levels}})
			if tc.want == nil {
				if got != "" {
					t.Errorf("got %q, want no note", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want it to say %q", got, w)
				}
			}
		})
	}
}

func TestPromptCacheHit(t *testing.T) {
	t.Parallel()
	f := &File{Local: Local{Levels: []LevelLocal{
		{Concurrency: 1, PromptCache: &PromptCache{CachedTokens: 640, PromptTokens: 1000}},
		{Concurrency: 8, PromptCache: &PromptCache{CachedTokens: 16, PromptTokens: 1000}},
		{Concurrency: 32},
	}}}
	c, share, ok := PromptCacheHit(f)
	if !ok || c != 1 || share != 0.64 {
		t.Errorf("PromptCacheHit = %d, %v, %v; want 1, 0.64, true", c, share, ok)
	}
	if got, want := PromptCacheText(f), "at concurrency 1 the server took 64% of the prompt tokens (640 of 1000) from its prompt cache"; !strings.HasPrefix(got, want) {
		t.Errorf("warning %q, want it to start %q", got, want)
	}
	f.Local.Levels[0].PromptCache.CachedTokens = 50 // 5 %: the shared instruction, no more
	if _, _, ok := PromptCacheHit(f); ok || PromptCacheText(f) != "" {
		t.Error("5 % cached counted as a cache hit")
	}
}

func TestReceiveClockOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kernel, read int
		want         string
	}{{10, 0, ReceiveClockKernel}, {0, 10, ReceiveClockRead}, {9, 1, ReceiveClockMixed}, {0, 0, ""}} {
		if got := ReceiveClockOf(tc.kernel, tc.read); got != tc.want {
			t.Errorf("ReceiveClockOf(%d, %d) = %q, want %q", tc.kernel, tc.read, got, tc.want)
		}
	}
}
