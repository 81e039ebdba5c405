package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/results"
)

// detectTimeout bounds each engine-detection request; a server that does
// not know the path answers 404 at once.
const detectTimeout = 3 * time.Second

// Engine families the detection can name.
const (
	FamilyVLLM     = "vllm"
	FamilySGLang   = "sglang"
	FamilyLlamaCpp = "llama.cpp"
	FamilyOllama   = "ollama"
)

// Detect works out which engine serves the endpoint from /v1/models'
// owned_by and context length, /version (vLLM, SGLang), /props (llama.cpp),
// /api/version (Ollama) and the Server header. It never fails: what it
// cannot tell stays empty.
func Detect(ctx context.Context, c *http.Client, e Endpoint, b Base, models []Model, model string, hdr http.Header) results.Detection {
	var d results.Detection
	for _, m := range models {
		if m.ID == model {
			d.OwnedBy, d.ContextLength = m.OwnedBy, m.ContextLength
		}
	}
	if hdr != nil {
		d.ServerHeader = truncate(hdr.Get("Server"), 100)
	}
	switch strings.ToLower(d.OwnedBy) {
	case "vllm":
		d.Family, d.Source = FamilyVLLM, "owned_by"
	case "sglang":
		d.Family, d.Source = FamilySGLang, "owned_by"
	case "llamacpp", "llama.cpp":
		d.Family, d.Source = FamilyLlamaCpp, "owned_by"
	case "library", "ollama":
		d.Family, d.Source = FamilyOllama, "owned_by"
	}
	get := func(path string, v any) bool {
		cctx, cancel := context.WithTimeout(ctx, detectTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(cctx, http.MethodGet, b.API(path), nil)
		if err != nil {
			return false
		}
		e.authorize(req)
		resp, err := c.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, tooBig, err := readBounded(resp.Body, 256<<10)
		if err != nil || tooBig || resp.StatusCode != http.StatusOK {
			return false
		}
		return json.Unmarshal(body, v) == nil
	}

	if d.Family == "" || d.Family == FamilyLlamaCpp {
		var props struct {
			BuildInfo string `json:"build_info"`
			Settings  struct {
				NCtx int `json:"n_ctx"`
			} `json:"default_generation_settings"`
			NCtx int `json:"n_ctx"`
		}
		if get("/props", &props) && (props.BuildInfo != "" || props.Settings.NCtx > 0) {
			d.Family, d.Source = FamilyLlamaCpp, "/props"
			d.Version = truncate(props.BuildInfo, 80)
			if n := max(props.Settings.NCtx, props.NCtx); n > 0 {
				d.ContextLength = n
			}
			return d
		}
	}
	if d.Family == "" || d.Family == FamilyOllama {
		var v struct {
			Version string `json:"version"`
		}
		if get("/api/version", &v) && v.Version != "" {
			d.Family, d.Source, d.Version = FamilyOllama, "/api/version", truncate(v.Version, 80)
			return d
		}
	}
	if d.Family == "" || d.Family == FamilyVLLM || d.Family == FamilySGLang {
		var v struct {
			Version string `json:"version"`
		}
		if get("/version", &v) && v.Version != "" {
			if d.Family == "" {
				d.Family, d.Source = FamilyVLLM, "/version"
			}
			d.Version = truncate(v.Version, 80)
		}
	}
	return d
}
