package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// The method's words cost different numbers of tokens ("the" one,
// "lighthouse" two), so two prompts of one word count differ by a few
// tokens: ±2 % at 512 tokens on llama-server and Ollama. Four chat
// requests, each a new prompt, then often end outside the method's 1 %
// by luck alone (real llama-server: 382 words made 519 tokens, 380 words
// 523). A server that counts a text's tokens without answering it —
// llama-server's and vLLM's POST /tokenize — lets calibration choose each
// attempt's word count for that attempt's own prompt before sending it,
// so the attempt lands on the target. Ollama has no such endpoint (0.24:
// only its answers' prompt_eval_count), and calibrates as before.

// tokenizeCalls bounds the /tokenize requests spent on one attempt.
const tokenizeCalls = 8

// tokenizeTimeout bounds one /tokenize request: it counts a prompt of
// a few thousand words, milliseconds on any server.
const tokenizeTimeout = 5 * time.Second

// maxTokenizeBody bounds its answer: a token id list of a long prompt.
const maxTokenizeBody = 4 << 20

// tokenCounter asks the server how many tokens a text is, without the
// chat template (a constant the calibration's answers give).
type tokenCounter struct {
	c      *http.Client
	ep     setup.Endpoint
	b      setup.Base
	family string
	model  string
}

// newTokenCounter is the server's own token counter, or nil for a family
// that has none.
func (r *runner) newTokenCounter() *tokenCounter {
	if r.detection == nil {
		return nil
	}
	switch r.detection.Family {
	case results.FamilyLlamaCpp, results.FamilyVLLM, results.FamilySGLang:
		return &tokenCounter{c: checkClient(r.ep, r.base), ep: r.ep, b: r.base, family: r.detection.Family, model: r.model}
	}
	return nil
}

// count is text's token count by the server's tokenizer, special tokens
// left out.
func (t *tokenCounter) count(ctx context.Context, text string) (int, error) {
	var body any = map[string]any{"content": text, "add_special": false}
	if t.family != results.FamilyLlamaCpp {
		body = map[string]any{"model": t.model, "prompt": text, "add_special_tokens": false}
	}
	out, err := postBounded(ctx, t.c, t.ep, t.b, "/tokenize", body, tokenizeTimeout, maxTokenizeBody)
	if err != nil {
		return 0, err
	}
	var got struct {
		Tokens []json.RawMessage `json:"tokens"`
		Count  *int              `json:"count"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		return 0, fmt.Errorf("POST /tokenize: %w", err)
	}
	if got.Count != nil {
		return *got.Count, nil
	}
	if got.Tokens == nil {
		return 0, errors.New("POST /tokenize answered no tokens")
	}
	return len(got.Tokens), nil
}

func (t *tokenCounter) close() { t.c.CloseIdleConnections() }

// aim is the word count, near w, whose prompt for request n comes to
// target tokens with overhead more (the chat template and anything sent
// beside the words), by the server's tokenizer: ok is false when the
// server could not count.
func (t *tokenCounter) aim(ctx context.Context, seed, n int64, w, target, overhead int, perWord float64) (int, bool) {
	if perWord <= 0 || math.IsNaN(perWord) {
		perWord = 1
	}
	best, bestMiss := w, -1
	tried := map[int]bool{}
	for range tokenizeCalls {
		if w < 1 || tried[w] {
			break
		}
		tried[w] = true
		c, err := t.count(ctx, prompt.Text(seed, n, w))
		if err != nil {
			return 0, false
		}
		miss := c + overhead - target
		if bestMiss < 0 || max(miss, -miss) < bestMiss {
			best, bestMiss = w, max(miss, -miss)
		}
		if miss == 0 {
			break
		}
		step := int(math.Round(float64(-miss) / perWord))
		if step == 0 {
			step = -cmp.Compare(miss, 0)
		}
		w += step
	}
	return best, bestMiss >= 0
}

// postBounded POSTs body as JSON to path within timeout and returns the
// answer, read up to limit bytes: an error in words for a failed
// request, another status than 200 or a longer answer. The server's
// side routes (/tokenize, /apply-template, /completion) share it.
func postBounded(ctx context.Context, c *http.Client, ep setup.Endpoint, b setup.Base, path string, body any, timeout time.Duration, limit int64) ([]byte, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.API(path), bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	authorize(ep, req)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, errors.New(scrub(rootCause(err), ep.APIKey))
	}
	defer resp.Body.Close()
	out, tooBig, err := readBounded(resp.Body, limit)
	switch {
	case err != nil:
		return nil, errors.New(scrub(rootCause(err), ep.APIKey))
	case resp.StatusCode != http.StatusOK:
		if said := serverMessage(out, ep.APIKey); said != "" {
			return nil, fmt.Errorf("POST %s answered HTTP %d (the server said: %s)", path, resp.StatusCode, said)
		}
		return nil, fmt.Errorf("POST %s answered HTTP %d", path, resp.StatusCode)
	case tooBig:
		return nil, fmt.Errorf("POST %s answered with more than %d MiB", path, limit>>20)
	}
	return out, nil
}
