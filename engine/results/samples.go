package results

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// LevelSamples is every measured request of one level as the client saw
// it. It lives in the local part of a document, never in a published
// record: it is what lets a comparison tell a change from noise, a
// timeline show each slot, and shards be merged exactly
// (docs/results-format.md, "Raw samples").
type LevelSamples struct {
	// StartUs and EndUs bound the level's measured window, in µs from the
	// run's start (one monotonic clock for the whole run).
	StartUs int64 `json:"start_us"`
	EndUs   int64 `json:"end_us"`
	// Slots is how many users the level ran at once; a request's Slot is
	// one of 0…Slots-1.
	Slots    int             `json:"slots"`
	Requests []RequestSample `json:"requests"`
}

// RequestSample is one measured request.
type RequestSample struct {
	Slot    int   `json:"slot"`
	StartUs int64 `json:"start_us"` // sent, µs from the run's start
	EndUs   int64 `json:"end_us"`   // its answer ended (or failed), µs from the run's start
	// TTFTUs is the first text's arrival after StartUs; -1 when no text
	// came.
	TTFTUs int64 `json:"ttft_us"`
	// ChunkCount is how many text chunks arrived; Gaps holds the time
	// between each and the next (EncodeGaps), so chunk k arrived at
	// StartUs + TTFTUs + the first k gaps.
	ChunkCount int    `json:"chunk_count"`
	Gaps       string `json:"gaps,omitempty"`
	// Usage is true when the server counted the answer in its usage;
	// then CompletionTokens and PromptTokens are its counts, and
	// CachedTokens the prompt tokens it took from its cache when it said.
	Usage            bool `json:"usage,omitempty"`
	CompletionTokens int  `json:"completion_tokens,omitempty"`
	PromptTokens     int  `json:"prompt_tokens,omitempty"`
	CachedTokens     int  `json:"cached_tokens,omitempty"`
	// Error is the failure's class (engine's Class… names); empty for a
	// success.
	Error string `json:"error,omitempty"`
	// Turn is the request's turn in its user's conversation, from 1; 0
	// when the plan held no conversations.
	Turn int `json:"turn,omitempty"`
	// CutShort: the server ended the answer with finish_reason "length"
	// before the max_tokens it was asked (its context, or a slot's share
	// of it, was full: issue #50).
	CutShort bool `json:"cut_short,omitempty"`
}

// OK is true for a request that succeeded.
func (r RequestSample) OK() bool { return r.Error == "" }

// OutputTokens is the answer's length as its level counts it: the
// server's usage when every success of the level carried it (usage
// true), else the text chunks.
func (r RequestSample) OutputTokens(usage bool) int {
	if usage {
		return r.CompletionTokens
	}
	return r.ChunkCount
}

// LatencyUs is the time from sending to the end of the answer.
func (r RequestSample) LatencyUs() int64 { return r.EndUs - r.StartUs }

// AllUsage is true when every success of the level carried the server's
// usage: the level then counts tokens by it, as record does.
func (s *LevelSamples) AllUsage() bool {
	any := false
	for _, r := range s.Requests {
		if r.OK() {
			any = true
			if !r.Usage {
				return false
			}
		}
	}
	return any
}

// EncodeGaps packs gaps (µs, each ≥ 0) as unsigned varints in base64:
// about three characters a gap at the few-ms gaps of a decode, a third
// of what a JSON number list takes.
func EncodeGaps(gaps []int64) string {
	if len(gaps) == 0 {
		return ""
	}
	buf := make([]byte, 0, 3*len(gaps))
	for _, g := range gaps {
		buf = binary.AppendUvarint(buf, uint64(max(g, 0)))
	}
	return base64.RawStdEncoding.EncodeToString(buf)
}

// errGaps says a sample's gaps are not what EncodeGaps writes.
var errGaps = errors.New("gaps are not base64 varints")

// DecodeGaps reads what EncodeGaps wrote, appending to dst.
func DecodeGaps(dst []int64, s string) ([]int64, error) {
	if s == "" {
		return dst, nil
	}
	buf, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return dst, fmt.Errorf("%w: %w", errGaps, err)
	}
	for len(buf) > 0 {
		v, n := binary.Uvarint(buf)
		if n <= 0 || v > 1<<62 {
			return dst, errGaps
		}
		dst = append(dst, int64(v))
		buf = buf[n:]
	}
	return dst, nil
}

// Arrivals is each text chunk's arrival, µs from the run's start; nil
// when no text came.
func (r RequestSample) Arrivals() ([]int64, error) {
	if r.TTFTUs < 0 {
		return nil, nil
	}
	gaps, err := DecodeGaps(nil, r.Gaps)
	if err != nil {
		return nil, err
	}
	out := make([]int64, 0, len(gaps)+1)
	t := r.StartUs + r.TTFTUs
	out = append(out, t)
	for _, g := range gaps {
		t += g
		out = append(out, t)
	}
	return out, nil
}

// SamplesAt is the samples of the level at concurrency c, nil when the
// file has none (it was saved before samples were kept, or the level
// was not measured). A stopped run's partial level is found by c too.
func (f *File) SamplesAt(c int) *LevelSamples {
	for i := range f.Local.Levels {
		if l := &f.Local.Levels[i]; l.Concurrency == c && l.Samples != nil {
			return l.Samples
		}
	}
	return nil
}

// HasSamples says whether any level of the file kept its samples.
func (f *File) HasSamples() bool {
	return slices.ContainsFunc(f.Local.Levels, func(l LevelLocal) bool { return l.Samples != nil })
}
