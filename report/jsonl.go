package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// Request is one line of JSONL: one measured request from a document's
// raw samples (docs/results-format.md, "Every request as JSONL"). Times
// are ms from the run's start, to the µs the samples keep.
type Request struct {
	// Set numbers the document's measured levels (or stages, probes) in
	// the order they are written in it, from 0: a capacity search probes
	// one concurrency more than once, and Set tells those apart.
	Set int `json:"set"`
	// Where is where the set is kept in the document ("local.levels[2]",
	// "users"), naming the stage or probe.
	Where string `json:"where"`
	// Level is the users at once (concurrency), User the request's slot
	// (0 … Level−1).
	Level int `json:"level"`
	User  int `json:"user"`
	// SentMs and EndMs: when it was sent, when its answer ended or it
	// failed.
	SentMs float64 `json:"sent_ms"`
	EndMs  float64 `json:"end_ms"`
	// TTFTMs is the first text's arrival after SentMs; null when no text
	// came.
	TTFTMs *float64 `json:"ttft_ms"`
	Chunks int      `json:"chunks"`
	// ITLMs are the gaps between each text chunk and the next, in order
	// (Chunks−1 of them): the request's inter-token latencies.
	ITLMs []float64 `json:"itl_ms"`
	// Usage: the server counted the answer; then the token counts are its
	// own, else OutputTokens is the text chunks and the others null.
	Usage        bool `json:"usage"`
	OutputTokens int  `json:"output_tokens"`
	PromptTokens *int `json:"prompt_tokens"`
	CachedTokens *int `json:"cached_tokens"`
	// Error is the failure's class (results.ClassName's names: "HTTP
	// 503", "timeout", …); null for a success.
	Error *string `json:"error"`
}

// ErrNoSamples says a document kept no raw samples (saved before they
// were kept, or a plan that keeps none), so there is nothing to write.
var ErrNoSamples = errors.New("this result kept no raw samples of its requests (it was saved before they were kept, or its plan keeps none)")

// JSONL writes every measured request of d from its raw samples, one JSON
// object a line (Request), in the order of its levels and, in each, the
// order sent. Private by nature, like the local section they come from:
// when each request was sent and what failed, for the person's own
// analysis, never to publish. It holds no address, host, name, server
// message or key: only times, counts and error classes.
func JSONL(w io.Writer, d plans.Doc) error {
	data, err := d.Marshal()
	if err != nil {
		return fmt.Errorf("read the result: %w", err)
	}
	var top any
	if err := json.Unmarshal(data, &top); err != nil {
		return fmt.Errorf("read the result: %w", err)
	}
	var sets []sampleSet
	findSamples(top, "", nil, &sets)
	if len(sets) == 0 {
		return ErrNoSamples
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i, s := range sets {
		usage := s.samples.AllUsage()
		for _, r := range s.samples.Requests {
			line, err := requestOf(r, usage)
			if err != nil {
				return fmt.Errorf("%s: %w", s.where, err)
			}
			line.Set, line.Where, line.Level = i, s.where, s.level
			if err := enc.Encode(line); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

func requestOf(r results.RequestSample, usage bool) (Request, error) {
	q := Request{User: r.Slot, SentMs: ms(r.StartUs), EndMs: ms(r.EndUs), Chunks: r.ChunkCount, Usage: r.Usage,
		OutputTokens: r.OutputTokens(usage), ITLMs: []float64{}}
	if r.TTFTUs >= 0 {
		t := ms(r.TTFTUs)
		q.TTFTMs = &t
	}
	gaps, err := results.DecodeGaps(nil, r.Gaps)
	if err != nil {
		return q, err
	}
	for _, g := range gaps {
		q.ITLMs = append(q.ITLMs, ms(g))
	}
	if r.Usage {
		p, c := r.PromptTokens, r.CachedTokens
		q.PromptTokens, q.CachedTokens = &p, &c
	}
	if !r.OK() {
		e := results.ClassName(r.Error)
		q.Error = &e
	}
	return q, nil
}

// ms is µs as ms, exactly to the µs.
func ms(us int64) float64 { return math.Round(float64(us)) / 1000 }

type sampleSet struct {
	where   string
	level   int
	samples results.LevelSamples
}

// findSamples finds every "samples" object of a document, whatever its
// plan: a Kovara run's and a capacity search's local.levels[], a
// three-stage result's users, a speculative-decoding result's levels[].
// The level is the users at once of the object holding them.
func findSamples(v any, where string, parent map[string]any, out *[]sampleSet) {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x["samples"].(map[string]any); ok {
			if _, ok := s["requests"]; ok {
				var ls results.LevelSamples
				if b, err := json.Marshal(s); err == nil && json.Unmarshal(b, &ls) == nil {
					*out = append(*out, sampleSet{where: where, level: levelOf(x, ls), samples: ls})
				}
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			if k != "samples" {
				keys = append(keys, k)
			}
		}
		// Runs before local: the document's own order of what it
		// measured, then what it kept.
		slices.SortFunc(keys, func(a, b string) int {
			if (a == "local") != (b == "local") {
				if a == "local" {
					return 1
				}
				return -1
			}
			return strings.Compare(a, b)
		})
		for _, k := range keys {
			findSamples(x[k], join(where, k), x, out)
		}
	case []any:
		for i, e := range x {
			findSamples(e, fmt.Sprintf("%s[%d]", where, i), parent, out)
		}
	}
}

func join(where, key string) string {
	if where == "" {
		return key
	}
	return where + "." + key
}

// levelOf is the users at once of the object holding samples: its
// concurrency or users, else the samples' slots.
func levelOf(m map[string]any, s results.LevelSamples) int {
	for _, k := range []string{"concurrency", "users"} {
		if v, ok := m[k].(float64); ok && v > 0 {
			return int(v)
		}
	}
	return s.Slots
}
