package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/setup"
)

// TestAnswersReadCapturedServers: what the real llama-server b4748 and
// Ollama 0.24 answered for the same GGUF and prompt (testdata/answers),
// replayed by a stand-in, is read as the measurement reads it: Ollama's
// rendered template is the prompt's text, its tokens (no ids) are the
// same as llama-server's by their bytes, position by position and in
// each top list, with log-probabilities a few 1e-5 apart (two builds of
// the same kernels), and both count the prompt as 21 tokens.
func TestAnswersReadCapturedServers(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"/completion":   "llama-b4748-completion.json",
		"/api/generate": "ollama-0.24-generate-raw.json",
		"/api/chat":     "ollama-0.24-chat-render.json",
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := os.ReadFile(filepath.Join("testdata", "answers", files[r.URL.Path]))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	b, err := setup.ParseBase(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	plan := setup.AnswersPlan{TopK: 20, Timeout: 10 * time.Second}
	reader := func(ollama bool) *answerReader {
		route := routeTokens
		if ollama {
			route = routeOllama
		}
		return &answerReader{c: srv.Client(), ep: setup.Endpoint{URL: srv.URL}, b: b, model: "soft", plan: plan, route: route, slots: 1}
	}
	ctx := context.Background()
	const prompt = "Explain in three sentences why the sky is blue."
	text, err := reader(true).template(ctx, prompt)
	if want := "<|user|>\n" + prompt + "<|end|>\n<|assistant|>\n"; err != nil || text != want {
		t.Fatalf("Ollama's template: %q, %v; want %q", text, err, want)
	}
	llama, err := reader(false).complete(ctx, text, promptTokens{}, nil, 4)
	if err != nil {
		t.Fatalf("llama-server: %v", err)
	}
	ollama, err := reader(true).complete(ctx, text, promptTokens{}, nil, 4)
	if err != nil {
		t.Fatalf("Ollama: %v", err)
	}
	if llama.promptN != 21 || ollama.promptN != 21 {
		t.Errorf("prompt tokens counted %d and %d, want 21 by both", llama.promptN, ollama.promptN)
	}
	for i := range 4 {
		lc, oc := llama.chosen[i], ollama.chosen[i]
		if lc.ID == nil || oc.ID != nil || lc.key() != oc.key() {
			t.Errorf("token %d: llama-server's %q (id %v), Ollama's %q (id %v): want the same bytes, an id from llama-server only", i+1, lc.key(), lc.ID, oc.key(), oc.ID)
		}
		ll, ol := llama.lists[i], ollama.lists[i]
		if len(ll) != 20 || len(ol) != 20 {
			t.Fatalf("token %d: lists of %d and %d, want 20", i+1, len(ll), len(ol))
		}
		for j := range ll {
			if ll[j].key() != ol[j].key() || math.Abs(ll[j].LogProb-ol[j].LogProb) > 1e-3 {
				t.Errorf("token %d, alternative %d: %q %.6f against %q %.6f", i+1, j+1, ll[j].key(), ll[j].LogProb, ol[j].key(), ol[j].LogProb)
			}
		}
	}
}

// TestAnswersChatRouteCaptured: the chat route as the real servers
// answered it (testdata/answers), replayed by a stand-in: llama-server
// b4748 answers a final assistant message again from its start — its
// prompt counted 6 tokens more than the answer so far — and is said,
// not measured; Ollama 0.24 continues it, its list at the answer's
// second token read with the count one more.
func TestAnswersChatRouteCaptured(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		server string
		want   string // "" read; else the error
	}{
		{"llama-b4748", "given the answer so far, it counted 6 prompt tokens more than the answer's"},
		{"ollama-0.24", ""},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Messages []json.RawMessage `json:"messages"`
				Continue bool              `json:"continue_final_message"`
			}
			if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
				http.NotFound(w, r)
				return
			}
			name := tc.server + "-chat.json"
			if len(req.Messages) > 1 && req.Continue {
				name = tc.server + "-chat-assistant.json"
			}
			data, err := os.ReadFile(filepath.Join("testdata", "answers", name))
			if err != nil {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(data)
		}))
		t.Cleanup(srv.Close)
		b, err := setup.ParseBase(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		r := &answerReader{c: srv.Client(), ep: setup.Endpoint{URL: srv.URL}, b: b, model: "soft", plan: setup.AnswersPlan{TopK: 20, Timeout: 10 * time.Second}, route: routeChat, slots: 1}
		ctx := context.Background()
		first, err := r.complete(ctx, "Explain in three sentences why the sky is blue.", promptTokens{}, nil, 1)
		if err != nil || first.promptN != 21 || first.chosen[0].key() != " intitulé" || len(first.lists[0]) != 20 {
			t.Fatalf("%s: the first token %+v, %v", tc.server, first, err)
		}
		// The answer's second token, as the model chose it (the
		// /completion capture's).
		answer := []wireAlt{first.chosen[0], {Token: "Mouse", Bytes: []int{'M', 'o', 'u', 's', 'e'}}}
		lists, cut, err := readPositions(ctx, r, "Explain in three sentences why the sky is blue.", promptTokens{n: first.promptN}, answer, func() {})
		if tc.want != "" {
			if !errors.Is(err, ErrNoContinuation) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want %q", tc.server, err, tc.want)
			}
			continue
		}
		if err != nil || cut != 2 {
			t.Fatalf("%s: cut %d, %v", tc.server, cut, err)
		}
		if !continued(answer, lists) {
			t.Errorf("%s: its lists along its own answer do not have the answer's tokens first", tc.server)
		}
	}
}

// TestAnswersReadPositionsAtOnce: the positions of an answer are read
// up to the server's slots at once, never more, and come back in the
// answer's order. The stand-in holds each request until as many as the
// slots are in flight (so a reader one at a time fails at once), and
// answers each with the position it was asked.
func TestAnswersReadPositionsAtOnce(t *testing.T) {
	t.Parallel()
	const slots, positions = 4, 8
	var (
		mu      sync.Mutex
		waiting int
		release = make(chan struct{})
		most    int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Prompt []json.RawMessage `json:"prompt"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		waiting++
		most = max(most, waiting)
		gate := release
		if waiting == slots {
			close(release)
			release, waiting = make(chan struct{}), 0
		}
		mu.Unlock()
		select {
		case <-gate:
		case <-time.After(10 * time.Second):
			http.Error(w, "only one request at a time", http.StatusServiceUnavailable)
			return
		}
		at := len(req.Prompt) - 1 // the answer's tokens so far
		fmt.Fprintf(w, `{"tokens_evaluated": %d, "completion_probabilities": [{"id": %d, "token": "x", "logprob": -0.1, "top_logprobs": [{"id": %d, "token": "x", "logprob": -0.1}]}]}`, 3+at, 100+at, 100+at)
	}))
	t.Cleanup(srv.Close)
	b, err := setup.ParseBase(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	r := &answerReader{c: srv.Client(), ep: setup.Endpoint{URL: srv.URL}, b: b, plan: setup.AnswersPlan{TopK: 1, Timeout: 20 * time.Second}, slots: slots}
	answer := make([]wireAlt, positions)
	for i := range answer {
		answer[i] = wireAlt{ID: ptr(i + 7)}
	}
	steps := 0
	lists, cut, err := readPositions(context.Background(), r, "prompt", promptTokens{n: 3}, answer, func() { steps++ })
	if err != nil {
		t.Fatal(err)
	}
	if cut != positions || steps != positions || len(lists) != positions {
		t.Fatalf("cut %d, %d steps, %d lists; want %d of each", cut, steps, len(lists), positions)
	}
	for i, l := range lists {
		if *l[0].ID != 100+i {
			t.Errorf("position %d came back with the list of position %d", i, *l[0].ID-100)
		}
	}
	if most > slots {
		t.Errorf("%d requests in flight at once, more than the %d slots", most, slots)
	}
}

// TestEstimateAnswers: the answers measurement's length from the tested
// speeds: each prompt's reference answer, then its positions read on
// both sides, each read a short stream's first token, the server's slots
// at once; the other side at the baseline's speed where it was not
// tested; nothing where the baseline was not.
func TestEstimateAnswers(t *testing.T) {
	t.Parallel()
	base := TestedSpeed{TTFT: 100 * time.Millisecond, DecodeTPS: 10, PromptTokens: 200}
	slow := TestedSpeed{TTFT: 300 * time.Millisecond, DecodeTPS: 5, PromptTokens: 200}
	plan := setup.AnswersPlan{Prompts: 2, Positions: 11}
	// The reference: 100 ms (its 40-token prompt within the tested 200)
	// and 10 tokens at 10 tok/s; then 11 reads of 100 ms on each side.
	ref := 100*time.Millisecond + time.Second
	tests := []struct {
		name          string
		other         TestedSpeed
		slots, oslots int
		want          time.Duration
	}{
		{"one at a time, the other untested", TestedSpeed{}, 1, 1, 2 * (ref + 11*200*time.Millisecond)},
		{"a slower other setting", slow, 1, 1, 2 * (ref + 11*400*time.Millisecond)},
		{"two slots each, batching freely", TestedSpeed{}, 2, 2, 2 * (ref + 11*100*time.Millisecond)},
	}
	for _, tc := range tests {
		if got := EstimateAnswers(plan, base, tc.other, tc.slots, tc.oslots); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := EstimateAnswers(plan, TestedSpeed{}, base, 1, 1); got != 0 {
		t.Errorf("an untested baseline: %v, want 0", got)
	}
}
