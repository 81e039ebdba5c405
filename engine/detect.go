package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/internal/clip"
)

// detectTimeout bounds each engine-detection request; a server that does
// not know the path answers 404 at once.
const detectTimeout = 3 * time.Second

// familyOf maps an owned_by value or a Server header product name to a
// family, or "".
func familyOf(name string) string {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "vllm":
		return results.FamilyVLLM
	case "sglang":
		return results.FamilySGLang
	case "llamacpp", "llama.cpp", "llama-server", "llama_cpp":
		return results.FamilyLlamaCpp
	case "library", "ollama":
		return results.FamilyOllama
	}
	return ""
}

// parseServerHeader reads an HTTP Server header such as "llama.cpp",
// "vLLM/0.9.1" or "uvicorn" as an engine family and version; generic
// web servers (uvicorn, nginx…) give nothing.
func parseServerHeader(h string) (family, version string) {
	for _, tok := range strings.Fields(h) {
		name, ver, _ := strings.Cut(tok, "/")
		if f := familyOf(name); f != "" && !strings.EqualFold(name, "library") {
			return f, clip.Text(strings.Trim(ver, "()"), 80)
		}
	}
	return "", ""
}

// Detect works out which engine serves the endpoint from /v1/models'
// owned_by and context length, the Server header, /props (llama.cpp),
// /api/version (Ollama), /get_server_info (SGLang) and /version (vLLM).
// It never fails: what it cannot tell stays empty.
func Detect(ctx context.Context, c *http.Client, e setup.Endpoint, b setup.Base, models []Model, model string, hdr http.Header) results.Detection {
	var d results.Detection
	for _, m := range models {
		if m.ID == model {
			d.OwnedBy, d.ContextLength = m.OwnedBy, m.ContextLength
			if m.ContextLength > 0 {
				d.ContextSource = "/v1/models " + m.ContextField
			}
		}
	}
	if f := familyOf(d.OwnedBy); f != "" {
		d.Family, d.Source = f, "owned_by"
	}
	if hdr != nil {
		d.ServerHeader = clip.Text(hdr.Get("Server"), 100)
		if f, v := parseServerHeader(d.ServerHeader); f != "" && (d.Family == "" || d.Family == f) {
			if d.Family == "" {
				d.Family, d.Source = f, "server header"
			}
			if v != "" {
				d.Version = v
			}
		}
	}
	get := func(path string, v any) bool { return getJSON(ctx, c, e, b, path, v) }
	setContext := func(n int, source string) {
		if n > 0 {
			d.ContextLength, d.ContextSource = n, source
		}
	}

	if d.Family == "" || d.Family == results.FamilyLlamaCpp {
		var props struct {
			BuildInfo string `json:"build_info"`
			Settings  struct {
				NCtx int `json:"n_ctx"`
			} `json:"default_generation_settings"`
			NCtx       int `json:"n_ctx"`
			TotalSlots int `json:"total_slots"`
		}
		if get("/props", &props) && (props.BuildInfo != "" || props.Settings.NCtx > 0) {
			d.Family = results.FamilyLlamaCpp
			if d.Source == "" {
				d.Source = "/props"
			}
			if props.BuildInfo != "" {
				d.Version = clip.Text(props.BuildInfo, 80)
			}
			// n_ctx is what the server was started with, per slot;
			// it beats the model's training context from /v1/models.
			if props.Settings.NCtx > 0 {
				setContext(props.Settings.NCtx, "/props default_generation_settings.n_ctx")
			} else {
				setContext(props.NCtx, "/props n_ctx")
			}
			if props.TotalSlots > 0 {
				d.ParallelSlots, d.ParallelSource = props.TotalSlots, "/props total_slots"
			}
			return d
		}
	}
	if d.Family == "" || d.Family == results.FamilyOllama {
		var v struct {
			Version string `json:"version"`
		}
		if get("/api/version", &v) && v.Version != "" {
			d.Family, d.Version = results.FamilyOllama, clip.Text(v.Version, 80)
			if d.Source == "" {
				d.Source = "/api/version"
			}
			if n, ok := ollamaContext(ctx, c, e, b, model); ok {
				setContext(n, ollamaContextSource)
			}
			return d
		}
	}
	if d.Family == "" || d.Family == results.FamilySGLang {
		var info struct {
			Version       string `json:"version"`
			ModelPath     string `json:"model_path"`
			ContextLength int    `json:"context_length"`
		}
		if get("/get_server_info", &info) && info.Version != "" && (info.ModelPath != "" || d.Family == results.FamilySGLang) {
			d.Family, d.Version = results.FamilySGLang, clip.Text(info.Version, 80)
			if d.Source == "" {
				d.Source = "/get_server_info"
			}
			if d.ContextLength == 0 {
				setContext(info.ContextLength, "/get_server_info context_length")
			}
			return d
		}
	}
	if d.Family == "" || d.Family == results.FamilyVLLM || d.Family == results.FamilySGLang {
		var v struct {
			Version string `json:"version"`
		}
		if get("/version", &v) && v.Version != "" {
			if d.Family == "" {
				// Only vLLM answers a bare /version among the engines we know.
				d.Family, d.Source = results.FamilyVLLM, "/version"
			}
			d.Version = clip.Text(v.Version, 80)
		}
	}
	return d
}

// getJSON reads path as JSON into v; false for any failure (detection
// never fails, it only learns less).
func getJSON(ctx context.Context, c *http.Client, e setup.Endpoint, b setup.Base, path string, v any) bool {
	cctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, b.API(path), nil)
	if err != nil {
		return false
	}
	authorize(e, req)
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, tooBig, err := readBounded(resp.Body, 1<<20)
	if err != nil || tooBig || resp.StatusCode != http.StatusOK {
		return false
	}
	return json.Unmarshal(body, v) == nil
}

// ollamaContextSource names where an Ollama context was read.
const ollamaContextSource = "/api/ps context_length"

// ollamaContext is the context Ollama loaded model with, from /api/ps:
// Ollama says it only while the model is loaded (it loads on the first
// request, and unloads after keep_alive), so before any request it may
// not know. The context is OLLAMA_CONTEXT_LENGTH's (4096 by default on a
// small machine), not the model's trained length, and a longer prompt is
// cut to it without an error.
func ollamaContext(ctx context.Context, c *http.Client, e setup.Endpoint, b setup.Base, model string) (int, bool) {
	m, ok := ollamaLoaded(ctx, c, e, b, model)
	if !ok || m.ContextLength <= 0 {
		return 0, false
	}
	return m.ContextLength, true
}

// ollamaModel is one loaded model of Ollama's /api/ps.
type ollamaModel struct {
	Name          string `json:"name"`
	Model         string `json:"model"`
	ContextLength int    `json:"context_length"`
	// Size is the loaded model's memory, SizeVRAM the part in the GPUs'
	// memory (left out by some versions when it is 0: nil).
	Size     int64  `json:"size"`
	SizeVRAM *int64 `json:"size_vram"`
}

// ollamaLoaded is model's entry in /api/ps, while it is loaded.
func ollamaLoaded(ctx context.Context, c *http.Client, e setup.Endpoint, b setup.Base, model string) (ollamaModel, bool) {
	var ps struct {
		Models []ollamaModel `json:"models"`
	}
	if !getJSON(ctx, c, e, b, "/api/ps", &ps) {
		return ollamaModel{}, false
	}
	for _, m := range ps.Models {
		if m.Name == model || m.Model == model {
			return m, true
		}
	}
	return ollamaModel{}, false
}

// ollamaPlacement is where Ollama put model (size_vram against size),
// once it is loaded.
func ollamaPlacement(ctx context.Context, c *http.Client, e setup.Endpoint, b setup.Base, model string) (*results.Placement, bool) {
	m, ok := ollamaLoaded(ctx, c, e, b, model)
	if !ok {
		return nil, false
	}
	var vram int64
	if m.SizeVRAM != nil {
		vram = *m.SizeVRAM
	}
	p, ok := results.PlacementOf(m.Size, vram)
	if !ok {
		return nil, false
	}
	return &p, true
}
