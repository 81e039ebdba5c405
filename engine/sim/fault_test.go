package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

var faultPlan = map[int64]Fault{
	1: Fault429, 2: Fault500, 3: Fault503, 4: FaultReset, 5: FaultErrorEvent,
	6: FaultMalformed, 7: FaultNoDone, 8: FaultEmpty, 9: FaultStall, 10: FaultBuffer, 11: FaultHugeLine,
}

func faultSim(t *testing.T, p Personality) (*Server, string) {
	return startSim(t, Config{
		Personality: p, RecordTruth: true, TokenInterval: 10 * time.Millisecond, HugeLineBytes: 2 << 20,
		Faults: func(n int64) Fault { return faultPlan[n] },
	})
}

func TestStreamFaults(t *testing.T) {
	t.Parallel()
	s, url := faultSim(t, VLLM)
	body := func(n int64) []byte { return chatBody("kovara-sim-8b", n, 20, streamOpts(8, true)) }

	for n, status := range map[int64]int{1: 429, 2: 500, 3: 503} {
		res := mustStream(t, url, body(n))
		if e := decodeError(t, res.body); res.status != status || e.Error.Type == "" {
			t.Errorf("request %d: status %d, error %+v", n, res.status, e)
		}
		if tr, _ := s.Truth(n); tr.Status != status || tr.Fault != faultPlan[n] || len(tr.Chunks) != 0 {
			t.Errorf("request %d: truth %+v", n, tr)
		}
	}
	if res := mustStream(t, url, body(1)); res.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}

	t.Run("reset", func(t *testing.T) {
		t.Parallel()
		res := mustStream(t, url, body(4))
		sum := summarize(t, res.lines)
		if res.status != 200 || res.err == nil || errors.Is(res.err, io.EOF) || sum.done || len(sum.finish) != 0 || len(sum.texts) > faultAfter {
			t.Errorf("err %v, %+v", res.err, sum)
		}
		t.Logf("client saw: %v", res.err)
		// The reset reaches the client before the handler has returned.
		if tr := waitTruth(t, s, 4); len(tr.Chunks) != faultAfter || tr.FinishReason != "" || !tr.Completed {
			t.Errorf("truth %+v", tr)
		}
	})
	t.Run("error_event", func(t *testing.T) {
		t.Parallel()
		res := mustStream(t, url, body(5))
		sum := summarize(t, res.lines)
		if res.err != nil || sum.errorEvents != 1 || sum.errorType != "server_error" || sum.done || len(sum.texts) != faultAfter || len(sum.finish) != 0 {
			t.Errorf("err %v, %+v", res.err, sum)
		}
		if last := res.lines[len(res.lines)-1].data; !strings.HasPrefix(last, `{"error":{"message":`) {
			t.Errorf("last line %s", last)
		}
	})
	t.Run("malformed_chunk", func(t *testing.T) {
		t.Parallel()
		res := mustStream(t, url, body(6))
		sum := summarize(t, res.lines)
		if res.err != nil || sum.badJSON != 1 || !sum.done || len(sum.texts) != 8 || len(sum.finish) != 1 {
			t.Errorf("err %v, %+v", res.err, sum)
		}
	})
	t.Run("no_done", func(t *testing.T) {
		t.Parallel()
		res := mustStream(t, url, body(7))
		sum := summarize(t, res.lines)
		if res.err != nil || sum.done || len(sum.finish) != 0 || len(sum.texts) != faultAfter || sum.usage != nil {
			t.Errorf("err %v, %+v", res.err, sum)
		}
	})
	t.Run("empty_completion", func(t *testing.T) {
		t.Parallel()
		res := mustStream(t, url, body(8))
		sum := summarize(t, res.lines)
		if res.status != 200 || res.err != nil || len(sum.texts) != 0 || !sum.done || len(sum.finish) != 1 || sum.finish[0] != "stop" ||
			sum.usage == nil || sum.usage.CompletionTokens != 0 || sum.roleChunks != 1 {
			t.Errorf("err %v, %+v", res.err, sum)
		}
	})
	t.Run("stall", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		res, err := postStream(ctx, nil, url, body(9))
		if err != nil {
			t.Fatal(err)
		}
		sum := summarize(t, res.lines)
		if !errors.Is(res.err, context.DeadlineExceeded) || sum.done || len(sum.texts) > 1 || time.Since(start) < 290*time.Millisecond {
			t.Errorf("err %v after %v, %+v", res.err, time.Since(start), sum)
		}
		// The handler notices the client leaving and returns.
		if tr := waitTruth(t, s, 9); !tr.Completed || tr.Ended.Sub(start) < 290*time.Millisecond || len(tr.Chunks) != 1 {
			t.Errorf("truth %+v", tr)
		}
	})
	t.Run("buffer_all", func(t *testing.T) {
		t.Parallel()
		res := mustStream(t, url, body(10))
		sum := summarize(t, res.lines)
		if !sum.done || len(sum.texts) != 8 {
			t.Fatalf("%+v", sum)
		}
		if spread := sum.textAt[7].Sub(sum.textAt[0]); spread > 5*time.Millisecond {
			t.Errorf("buffered chunks arrived over %v", spread)
		}
		tr, _ := s.Truth(10)
		// Each token is produced on its deadline or later, and the
		// deadlines run from the first token's production (a late one
		// moves them): token i no sooner than i intervals after it.
		for i, at := range tr.Chunks {
			if due := tr.Chunks[0].Add(time.Duration(i) * s.Config().TokenInterval); at.Before(due) {
				t.Errorf("buffered token %d produced %v before its deadline", i, due.Sub(at))
			}
		}
		if !sum.textAt[0].After(tr.Chunks[7]) {
			t.Error("the first chunk was read before the last was produced")
		}
	})
	t.Run("huge_line", func(t *testing.T) {
		t.Parallel()
		if d := New(Config{}).Config().HugeLineBytes; d != 20<<20 {
			t.Errorf("default HugeLineBytes %d", d)
		}
		res := mustStream(t, url, body(11))
		sum := summarize(t, res.lines)
		if res.err != nil || !sum.done || len(sum.texts) != 8 || sum.badJSON != 0 || sum.longest != 2<<20 {
			t.Errorf("err %v, longest line %d, %d texts, done %v", res.err, sum.longest, len(sum.texts), sum.done)
		}
	})
	t.Run("others unaffected", func(t *testing.T) {
		t.Parallel()
		sum := summarize(t, mustStream(t, url, body(100)).lines)
		if !sum.done || len(sum.texts) != 8 || sum.usage.CompletionTokens != 8 {
			t.Errorf("%+v", sum)
		}
	})
}

func TestFaultsPerPersonality(t *testing.T) {
	t.Parallel()
	for _, p := range []Personality{LlamaCpp, Ollama, Strict} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			_, url := faultSim(t, p)
			opts := streamOpts(4, false)
			for _, n := range []int64{5, 6, 8} {
				sum := summarize(t, mustStream(t, url, chatBody("kovara-sim-8b", n, 20, opts)).lines)
				ok := false
				switch faultPlan[n] {
				case FaultErrorEvent:
					ok = sum.errorEvents == 1 && !sum.done
				case FaultMalformed:
					ok = sum.badJSON == 1 && sum.done
				case FaultEmpty:
					ok = len(sum.texts) == 0 && sum.done && len(sum.finish) == 1
				}
				if !ok {
					t.Errorf("%s: %+v", faultPlan[n], sum)
				}
			}
		})
	}
}

func TestNonStreamingFaults(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, Config{
		TokenInterval: 2 * time.Millisecond, HugeLineBytes: 1 << 20,
		Faults: func(n int64) Fault { return faultPlan[n] },
	})
	post := func(ctx context.Context, n int64) (int, []byte, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions",
			bytes.NewReader(chatBody("kovara-sim-8b", n, 20, map[string]any{"max_tokens": 6, "ignore_eos": true})))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	bg := context.Background()
	if code, _, _ := post(bg, 2); code != 500 {
		t.Errorf("http_500: %d", code)
	}
	if _, _, err := post(bg, 4); err == nil {
		t.Error("reset: no error")
	}
	if code, b, _ := post(bg, 5); code != 500 || !json.Valid(b) {
		t.Errorf("error_event: %d %s", code, b)
	}
	if code, b, err := post(bg, 6); code != 200 || err != nil || json.Valid(b) {
		t.Errorf("malformed: %d %v valid=%v", code, err, json.Valid(b))
	}
	if code, b, _ := post(bg, 8); code != 200 || !strings.Contains(string(b), `"content":""`) {
		t.Errorf("empty: %d %s", code, b)
	}
	if code, b, _ := post(bg, 11); code != 200 || len(b) != 1<<20 || !json.Valid(b) {
		t.Errorf("huge: %d, %d bytes", code, len(b))
	}
	ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
	defer cancel()
	if _, _, err := post(ctx, 9); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stall: %v", err)
	}
}
