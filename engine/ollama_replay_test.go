package engine

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// The captures in testdata/ollama-0.24.0 are what a real Ollama 0.24.0
// (built from source, CPU, every default, serving the tiny test model as
// "tiny:latest") answered: /v1/models, /api/version, /api/ps before the
// model was loaded and after, /metrics (404), a streamed chat answer with
// stream_options and one without, and a stream its token repeat limit cut
// short (a model that loops). docs/servers.md says how they were made.
const ollamaCaptures = "testdata/ollama-0.24.0"

func ollamaCapture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ollamaCaptures, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replayOllama serves the captures as Ollama did: /api/ps empty until the
// first chat request loaded the model; which names the stream to answer.
func replayOllama(t *testing.T, which *atomic.Value) string {
	t.Helper()
	var loaded atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		send := func(ctype, name string) {
			w.Header().Set("Content-Type", ctype)
			w.Write(ollamaCapture(t, name))
		}
		switch r.URL.Path {
		case "/v1/models":
			send("application/json", "models.json")
		case "/api/version":
			send("application/json; charset=utf-8", "version.json")
		case "/api/ps":
			if loaded.Load() {
				send("application/json; charset=utf-8", "ps-loaded.json")
			} else {
				send("application/json; charset=utf-8", "ps-empty.json")
			}
		case "/v1/chat/completions":
			loaded.Store(true)
			send("text/event-stream", which.Load().(string))
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte("404 page not found"))
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestOllamaReplay: the endpoint check detects Ollama 0.24.0 with no
// context before the model is loaded, learns 4096 from /api/ps once a
// request loaded it (and where the model ran: all on the CPU here), and
// reads its streams: role in every delta, the last
// content chunk empty with the finish_reason, usage with "choices": []
// only with stream_options; a stream cut by the repeat limit is
// ended_early.
func TestOllamaReplay(t *testing.T) {
	var which atomic.Value
	which.Store("stream.sse")
	url := replayOllama(t, &which)
	r, err := newSession(setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.check(ctx, "", false); err != nil {
		t.Fatal(err)
	}
	d := r.detection
	if d.Family != results.FamilyOllama || d.Version != "0.24.0" || d.OwnedBy != "library" || d.ContextLength != 0 || r.model != "tiny:latest" {
		t.Fatalf("detection %+v, model %q", d, r.model)
	}
	cn := r.newConn()
	defer cn.close()
	opts := requestOpts{model: r.model, maxTokens: 12, words: 10, streamOptions: true, ignoreEOS: true}
	out := cn.do(ctx, opts, 0, 10*time.Second)
	// Twelve text chunks; the last, empty one carries the finish_reason.
	if !out.ok() || out.chunks != 12 || !out.hasUsage || out.complTok != 12 || out.promptTok != 22 {
		t.Fatalf("stream: %+v", out)
	}
	if err := r.learnContext(ctx, 0, 0, out.ttft); err != nil || d.ContextLength != 4096 || d.ContextSource != "/api/ps context_length" {
		t.Fatalf("after the first request: context %d from %q (%v)", d.ContextLength, d.ContextSource, err)
	}
	// The real Ollama here has no GPU: all of the model on the CPU
	// (size_vram 0), said plainly and not as a problem.
	if p := d.Placement; p == nil || p.CPUShare != 1 || p.GPUBytes != 0 || p.ModelBytes != 63251456 {
		t.Errorf("placement %+v, want all 63251456 bytes on the CPU", p)
	} else if words, problem := d.PlacementWords(); problem || !strings.HasPrefix(words, "Ollama ran the whole model on the CPU") {
		t.Errorf("placement said %q (problem %v)", words, problem)
	}
	if err := r.learnContext(ctx, 6000, 256, 0); err != nil {
		t.Fatalf("a second look: %v", err)
	}
	d.ContextLength = 0
	var pe *PlanError
	if err := r.learnContext(ctx, 6000, 256, 0); !errors.As(err, &pe) || !strings.Contains(err.Error(), "OLLAMA_CONTEXT_LENGTH") {
		t.Errorf("6000-token prompts in 4096: %v", err)
	}

	which.Store("stream-nousage.sse")
	if out := cn.do(ctx, opts, 1, 10*time.Second); !out.ok() || out.hasUsage {
		t.Errorf("without stream_options: %+v", out)
	}
	which.Store("stream-repeat-limit.sse")
	if out := cn.do(ctx, opts, 2, 10*time.Second); out.ok() || out.class != ClassEndedEarly {
		t.Errorf("the repeat limit's stream: class %q, want %q", out.class, ClassEndedEarly)
	}
}

// The simulator's Ollama personality, with every default, gives the same
// problems as the real one: the context from /api/ps only once loaded,
// one request at a time, no /metrics.
func TestOllamaSimulatorLikeTheCaptures(t *testing.T) {
	url := ollamaSim(t, nil)
	r, err := newSession(setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.check(ctx, "", false); err != nil {
		t.Fatal(err)
	}
	if d := r.detection; d.Family != results.FamilyOllama || d.ContextLength != 0 {
		t.Errorf("before the model is loaded: %+v", d)
	}
	cn := r.newConn()
	defer cn.close()
	out := cn.do(ctx, requestOpts{model: r.model, maxTokens: 8, words: 10, streamOptions: true}, 0, 10*time.Second)
	if !out.ok() {
		t.Fatalf("stream: %+v", out)
	}
	if err := r.learnContext(ctx, 0, 0, out.ttft); err != nil || r.detection.ContextLength != 4096 {
		t.Errorf("after the first request: %+v (%v)", r.detection, err)
	}
	if _, err := ReadServerMetrics(ctx, setup.Endpoint{URL: url}); err == nil {
		t.Error("the Ollama personality answered /metrics")
	}
}
