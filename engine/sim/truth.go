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
	Arrived time.Time // its first bytes at the socket (arrival.go), else when the handler began; monotonic reading kept
	// Chunks holds, for every text-bearing chunk, the time right after it
	// was written and flushed to the connection. For FaultBuffer and for
	// non-streaming requests nothing is flushed per token: there it is the
	// time each token was produced on schedule.
	Chunks []time.Time
	// Returned holds, for every chunk, when the write call that sent it
	// returned. The chunk left somewhere between Chunks[i] and
	// Returned[i]: usually microseconds apart, but on a virtual machine
	// whose host is busy a write call can stall for milliseconds before
	// its bytes leave, and then nothing on this side can say exactly when
	// they did (see Timing.TTFTErr).
	Returned     []time.Time
	PromptTokens int
	// CachedTokens is how many of PromptTokens the prompt cache served
	// (0 without Config.PromptCache): the conversation's history, answers
	// included, or a shared start, as far as an earlier request sent it.
	CachedTokens     int
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
	// SpansNs holds, per chunk, how long its write call took (Returned −
	// Chunks): how far after its recorded time the chunk may have left.
	SpansNs []int64 `json:"spans_ns,omitempty"`
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
		if len(t.Returned) == len(t.Chunks) {
			tm.SpansNs = make([]int64, len(t.Chunks))
			for i := range t.Chunks {
				tm.SpansNs[i] = max(int64(t.Returned[i].Sub(t.Chunks[i])), 0)
			}
		}
		out = append(out, tm)
	}
	return out
}

// StallNs is how long a write call must take before its chunk's truth is
// widened to the whole call. Shorter calls are the kernel delivering the
// chunk to the reader within the call, after the chunk's own transmit
// stamp, which stays the truth; a longer one is a stall (seen at about
// 3.5 ms on a busy host's VM) that can come before the bytes leave.
const StallNs = int64(time.Millisecond)

// span is how far after its recorded time chunk i may have left: the
// length of its write call if that call stalled, else zero.
func (t Timing) span(i int) int64 {
	if i < len(t.SpansNs) && t.SpansNs[i] >= StallNs {
		return t.SpansNs[i]
	}
	return 0
}

// TTFTErr is how far a measured TTFT lies outside what the simulator knows
// of the true one: the first chunk left at its transmit stamp, or, if the
// write call that sent it stalled, somewhere before that call returned.
// Zero inside that window.
func (t Timing) TTFTErr(measured time.Duration) time.Duration {
	return outside(int64(measured), t.TTFTNs, t.TTFTNs+t.span(0))
}

// GapErr is the same for the gap between chunks i and i+1, measured in ms:
// the true gap lies between GapsNs[i] − span(i) and GapsNs[i] + span(i+1).
// The result is in ms.
func (t Timing) GapErr(i int, measuredMs float64) float64 {
	g := t.GapsNs[i]
	return float64(outside(int64(measuredMs*1e6), g-t.span(i), g+t.span(i+1))) / 1e6
}

// GapAtLeastNs is the shortest the true gap between chunks i and i+1 can
// have been.
func (t Timing) GapAtLeastNs(i int) int64 { return t.GapsNs[i] - t.span(i) }

func outside(v, lo, hi int64) time.Duration {
	switch {
	case v < lo:
		return time.Duration(lo - v)
	case v > hi:
		return time.Duration(v - hi)
	}
	return 0
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
