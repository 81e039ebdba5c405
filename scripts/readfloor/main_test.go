//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// wantTokens counts the fixture's content deltas with a JSON decoder, the
// slow way the counter is meant to agree with.
func wantTokens(t *testing.T, sse []byte) int {
	t.Helper()
	n := 0
	for _, line := range bytes.Split(sse, []byte("\n")) {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok || bytes.Equal(data, []byte("[DONE]")) {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content *string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &chunk); err != nil {
			t.Fatalf("fixture line %q: %v", line, err)
		}
		for _, c := range chunk.Choices {
			if c.Delta.Content != nil && *c.Delta.Content != "" {
				n++
			}
		}
	}
	return n
}

// TestCountContent holds what counts as a token: text, not the empty or
// null content of a role chunk (vLLM sends "", llama-server null).
func TestCountContent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`data: {"choices":[{"delta":{"role":"assistant","content":""}}]}`, 0},
		{`data: {"choices":[{"delta":{"role":"assistant","content":null}}]}`, 0},
		{`data: {"choices":[{"delta":{"content":"a"}}]}`, 1},
		{`data: {"choices":[{"delta":{"content":"a"}}]}` + "\n\n" + `data: {"choices":[{"delta":{"content":"\"q"}}]}`, 2},
		{`data: {"choices":[{"delta":{"content":"`, 0}, // the text is in the next read
	} {
		if got := countContent([]byte(tc.in)); got != tc.want {
			t.Errorf("countContent(%s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestFeedSplitAnywhere feeds a real llama-server stream in two and in
// three reads cut at every place, and asks for the same count and one end
// every time: keys cut in half are the case the tail exists for.
func TestFeedSplitAnywhere(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"stream.sse", "spec-stream.sse"} {
		whole, err := os.ReadFile("../../engine/testdata/llamacpp-b9749/" + name)
		if err != nil {
			t.Fatal(err)
		}
		// The first events (the role chunk and content) and the last two
		// (usage and [DONE]): every cut is tried, so the whole file would
		// take long.
		events := bytes.SplitAfter(whole, []byte("\n\n"))
		if len(events) < 12 {
			t.Fatalf("%s: only %d events", name, len(events))
		}
		sse := bytes.Join(append(events[:8:8], events[len(events)-3:]...), nil)
		want := wantTokens(t, sse)
		if want == 0 {
			t.Fatalf("%s: the fixture has no content deltas", name)
		}
		for i := 0; i <= len(sse); i++ {
			// The second cut walks a window after the first, where a key
			// can be cut twice.
			for j := i; j <= min(len(sse), i+40); j++ {
				var s stream
				var scratch []byte
				got, dones := 0, 0
				for _, d := range [][]byte{sse[:i], sse[i:j], sse[j:]} {
					if len(d) == 0 {
						continue
					}
					var k int
					var done bool
					scratch, k, done = s.feed(scratch, d)
					got += k
					if done {
						dones++
						break
					}
				}
				if got != want || dones != 1 {
					t.Fatalf("%s cut at %d and %d: got %d tokens and %d ends, want %d and 1", name, i, j, got, dones, want)
				}
			}
		}
	}
}
