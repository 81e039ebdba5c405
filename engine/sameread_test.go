package engine

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/stream"
)

// reads is a response body that hands out one element per Read, so a
// test decides which chunks come off the "socket" together.
type reads []string

func (r *reads) Read(p []byte) (int, error) {
	if len(*r) == 0 {
		return 0, io.EOF
	}
	n := copy(p, (*r)[0])
	if n == len((*r)[0]) {
		*r = (*r)[1:]
	} else {
		(*r)[0] = (*r)[0][n:]
	}
	return n, nil
}

// TestReadStreamCountsSameReadGaps: a gap between two chunks that came off
// the socket in one read is exactly 0 ms and counted as read together;
// chunks of different reads are real gaps, however close.
func TestReadStreamCountsSameReadGaps(t *testing.T) {
	t.Parallel()
	const tok = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
	const done = "data: [DONE]\n\n"
	tests := []struct {
		name         string
		reads        []string
		gaps, merged int
	}{
		{"one chunk a read", []string{tok, tok, tok, tok, done}, 3, 0},
		{"two read together", []string{tok, tok + tok, tok, done}, 3, 1},
		{"the whole answer in one read", []string{tok + tok + tok + tok + done}, 3, 3},
		{"a chunk split over two reads", []string{tok, tok[:10], tok[10:] + tok, done}, 2, 1},
		{"one chunk, no gap", []string{tok + done}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var now time.Duration
			c := &conn{clock: func() time.Duration { now += time.Millisecond; return now }}
			c.rd = stream.NewReader(eofReader{}, c.arrival, 0)
			out := outcome{ttft: -1, ttfa: -1, firstEvent: -1}
			body := reads(append([]string(nil), tt.reads...))
			c.readStream(&out, &body)
			if out.class != "" {
				t.Fatalf("class %q: %s", out.class, out.msg)
			}
			zeros := 0
			for _, v := range c.itl {
				if v == 0 {
					zeros++
				}
			}
			if got, want := len(c.itl), tt.gaps; got != want {
				t.Errorf("gaps %d, want %d", got, want)
			}
			if got, want := out.sameRead, tt.merged; got != want {
				t.Errorf("gaps read together %d, want %d", got, want)
			}
			if got, want := zeros, tt.merged; got != want {
				t.Errorf("0 ms gaps %d, want %d (only chunks read together are 0 ms)", got, want)
			}
		})
	}
}

// TestLevelCountsMergedGaps: a level's local record counts its successful
// requests' gaps (itl_ms's n) and, of them, the chunks read together: all
// of a buffered answer's, none of a failed request's. The published
// itl_ms still holds every gap, 0 ms included.
func TestLevelCountsMergedGaps(t *testing.T) {
	t.Parallel()
	p := smallPlan()
	p.InputTokens, p.OutputTokens = 32, 8
	p.Concurrency = []int{1}
	p.Requests, p.Warmup = 6, 0
	fault := map[int64]sim.Fault{
		prompt.MeasuredRequest(p.Warmup, p.Requests, 0, 1): sim.FaultBuffer,
		prompt.MeasuredRequest(p.Warmup, p.Requests, 0, 3): sim.FaultBuffer,
		prompt.MeasuredRequest(p.Warmup, p.Requests, 0, 4): sim.Fault503,
	}
	cfg := sim.Config{TokenInterval: 5 * time.Millisecond, PrefillRate: 1e6,
		Faults: func(n int64) sim.Fault { return fault[n] }}
	_, url := startSim(t, cfg)
	var recs []RequestRecord
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, Observer{Requests: func(_ int, r []RequestRecord) { recs = r }})
	if err != nil {
		t.Fatal(err)
	}
	mustValid(t, f)
	if len(f.Runs) != 1 || len(f.Local.Levels) != 1 {
		t.Fatalf("runs %d, levels %d", len(f.Runs), len(f.Local.Levels))
	}
	gaps, zeros, buffered := 0, 0, 0
	for _, r := range recs {
		if r.Class != "" {
			continue
		}
		gaps += len(r.ITL)
		for _, v := range r.ITL {
			if v == 0 {
				zeros++
				if fault[r.N] == sim.FaultBuffer {
					buffered++
				}
			}
		}
	}
	lv := f.Local.Levels[0]
	m := f.Runs[0].Metrics
	if m.RequestsOK != 5 || m.ITLMs == nil {
		t.Fatalf("ok %d, itl %+v", m.RequestsOK, m.ITLMs)
	}
	if got, want := lv.Gaps, m.ITLMs.N; got != want {
		t.Errorf("local gaps %d, want itl_ms n %d", got, want)
	}
	if got, want := lv.Gaps, 5*(p.OutputTokens-1); got != want {
		t.Errorf("local gaps %d, want %d (5 answers of %d tokens)", got, want, p.OutputTokens)
	}
	if got, want := lv.MergedGaps, zeros; got != want {
		t.Errorf("merged gaps %d, want %d (the 0 ms gaps of the successes)", got, want)
	}
	// Two buffered answers of 8 tokens come off the socket in a read or
	// two each: most of their 14 gaps are chunks read together.
	if buffered < 7 {
		t.Errorf("%d of the buffered answers' 14 gaps read together, want most", buffered)
	}
	if zeros > 0 && m.ITLMs.Min != 0 {
		t.Errorf("itl_ms min %v with %d gaps of 0 ms: the published distribution must keep them", m.ITLMs.Min, zeros)
	}
}
