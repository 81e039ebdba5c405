package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/setup"
)

// tokenizerServer is a minimal OpenAI-style server whose "tokenizer" turns
// w words into round(ratio*w)+overhead prompt tokens, so calibration can be
// held against tokenizers unlike the simulator's one-token-per-word.
func tokenizerServer(t *testing.T, ratio float64, overhead int) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"tok"}]}`)
			return
		}
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Messages  []struct{ Content string } `json:"messages"`
			MaxTokens int                        `json:"max_tokens"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(400)
			return
		}
		words := len(strings.Fields(req.Messages[0].Content))
		pt := int(math.Round(ratio*float64(words))) + overhead
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < req.MaxTokens; i++ {
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n")
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d}}\n\n", pt, req.MaxTokens)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestCalibrationConverges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ratio    float64
		overhead int
		target   int
	}{
		{1.0, 11, 1024},
		{1.3, 40, 1024},
		{0.8, 5, 1024},
		{2.0, 100, 4096},
		{1.15, 25, 128},
		{1.0, 11, 30},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("ratio%.2f_target%d", tc.ratio, tc.target), func(t *testing.T) {
			t.Parallel()
			url := tokenizerServer(t, tc.ratio, tc.overhead)
			p := setup.DefaultPlan()
			p.InputTokens, p.OutputTokens = tc.target, 2
			p.Concurrency, p.Requests, p.Warmup = []int{1}, 1, 0
			p.Timeout = 10 * time.Second
			f, err := Run(context.Background(), p, Endpoint{URL: url}, Observer{})
			if err != nil {
				t.Fatal(err)
			}
			c := f.Local.Calibration
			tol := math.Max(2, 0.01*float64(tc.target))
			if !c.Converged || len(c.Attempts) > 4 || math.Abs(float64(*c.PromptTokens-tc.target)) > tol {
				t.Fatalf("calibration %+v: want converged within ±%.0f of %d in ≤ 4 attempts", c, tol, tc.target)
			}
			if got := *f.Runs[0].Metrics.InputTokensMean; math.Abs(got-float64(tc.target)) > tol+1 {
				t.Errorf("measured input tokens %v, want %d", got, tc.target)
			}
		})
	}
}
