package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// Truth is what the server really did for one chat request.
type Truth struct {
	N       int64     // request number parsed from the prompt; -1 if none
	Arrived time.Time // when the handler began (monotonic reading kept)
	// Chunks holds, for every text-bearing chunk, the time right after it
	// was written and flushed to the connection. For FaultBuffer and for
	// non-streaming requests nothing is flushed per token: there it is the
	// time each token was produced on schedule.
	Chunks           []time.Time
	PromptTokens     int
	CompletionTokens int // text-bearing chunks produced
	Fault            Fault

	Model        string
	Stream       bool
	Status       int       // HTTP status sent (0 if none was sent)
	Admitted     time.Time // when a batch slot was granted (zero if never)
	Ended        time.Time // when the handler finished
	FinishReason string    // "length", "stop", or "" when the stream did not finish normally
	Completed    bool      // the response ended as planned (a fault delivered counts)
}

// TTFT is the server-side time from arrival to the first text-bearing chunk.
func (t Truth) TTFT() (time.Duration, bool) {
	if len(t.Chunks) == 0 {
		return 0, false
	}
	return t.Chunks[0].Sub(t.Arrived), true
}

// ITL returns the gaps between consecutive text-bearing chunks.
func (t Truth) ITL() []time.Duration {
	if len(t.Chunks) < 2 {
		return nil
	}
	out := make([]time.Duration, len(t.Chunks)-1)
	for i := 1; i < len(t.Chunks); i++ {
		out[i-1] = t.Chunks[i].Sub(t.Chunks[i-1])
	}
	return out
}

func (s *Server) store(t Truth) {
	s.truthMu.Lock()
	s.truths = append(s.truths, t)
	s.truthIdx[t.N] = len(s.truths) - 1
	s.truthMu.Unlock()
}

// Truth returns the record of request number n (the latest one if the
// number was used more than once). It is only kept with Config.RecordTruth.
func (s *Server) Truth(n int64) (Truth, bool) {
	s.truthMu.Lock()
	defer s.truthMu.Unlock()
	i, ok := s.truthIdx[n]
	if !ok {
		return Truth{}, false
	}
	return s.truths[i], true
}

// Truths returns every recorded request, sorted by N and then by arrival.
func (s *Server) Truths() []Truth {
	s.truthMu.Lock()
	out := slices.Clone(s.truths)
	s.truthMu.Unlock()
	slices.SortStableFunc(out, func(a, b Truth) int {
		if a.N != b.N {
			if a.N < b.N {
				return -1
			}
			return 1
		}
		return a.Arrived.Compare(b.Arrived)
	})
	return out
}

// Timing is a request's true timing as durations, which keep their meaning
// across a process boundary (monotonic instants do not).
type Timing struct {
	N      int64   `json:"n"`
	TTFTNs int64   `json:"ttft_ns"`
	GapsNs []int64 `json:"gaps_ns"`
	// Wall-clock instants, for lining up with a client's own clock when
	// investigating; comparisons should use the durations above.
	ArrivedUnixNs    int64 `json:"arrived_unix_ns"`
	AdmittedUnixNs   int64 `json:"admitted_unix_ns"`
	FirstChunkUnixNs int64 `json:"first_chunk_unix_ns"`
}

// Timings returns every recorded request's true TTFT and gaps, sorted by N.
func (s *Server) Timings() []Timing {
	ts := s.Truths()
	out := make([]Timing, 0, len(ts))
	for _, t := range ts {
		tt, ok := t.TTFT()
		if !ok {
			continue
		}
		tm := Timing{N: t.N, TTFTNs: int64(tt), ArrivedUnixNs: t.Arrived.UnixNano(),
			AdmittedUnixNs: t.Admitted.UnixNano(), FirstChunkUnixNs: t.Chunks[0].UnixNano()}
		for _, g := range t.ITL() {
			tm.GapsNs = append(tm.GapsNs, int64(g))
		}
		out = append(out, tm)
	}
	return out
}

// FetchTimings reads the ground truth a simulator in another process serves
// at /debug/truth (when started with RecordTruth), keyed by request number.
func FetchTimings(baseURL string) (map[int64]Timing, error) {
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Get(baseURL + "/debug/truth")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the simulator's record is not served (HTTP %d): was it started with --record-truth?", resp.StatusCode)
	}
	var ts []Timing
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<30)).Decode(&ts); err != nil {
		return nil, fmt.Errorf("the simulator's record cannot be read: %w", err)
	}
	m := make(map[int64]Timing, len(ts))
	for _, t := range ts {
		m[t.N] = t
	}
	return m, nil
}
