package sim

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestModelsPerPersonality(t *testing.T) {
	t.Parallel()
	cases := []struct {
		p       Personality
		ownedBy string
		server  string
	}{
		{VLLM, "vllm", "uvicorn"},
		{LlamaCpp, "llamacpp", "llama.cpp"},
		{SGLang, "sglang", "uvicorn"},
		{Ollama, "library", ""},
		{Strict, "system", ""},
	}
	for _, c := range cases {
		t.Run(string(c.p), func(t *testing.T) {
			t.Parallel()
			_, url := startSim(t, Config{Personality: c.p, Models: []string{"m-one", "m-two"}})
			for _, path := range []string{"/v1/models", "/models"} {
				var list struct {
					Object string `json:"object"`
					Data   []struct {
						ID          string         `json:"id"`
						Object      string         `json:"object"`
						Created     int64          `json:"created"`
						OwnedBy     string         `json:"owned_by"`
						MaxModelLen int            `json:"max_model_len"`
						Meta        map[string]any `json:"meta"`
					} `json:"data"`
				}
				resp := getJSON(t, url+path, &list)
				if resp.StatusCode != 200 || list.Object != "list" || len(list.Data) != 2 {
					t.Fatalf("%s: status %d, %+v", path, resp.StatusCode, list)
				}
				if got := resp.Header.Get("Server"); got != c.server {
					t.Errorf("Server header %q, want %q", got, c.server)
				}
				d := list.Data[0]
				if d.ID != "m-one" || list.Data[1].ID != "m-two" || d.Object != "model" || d.Created == 0 || d.OwnedBy != c.ownedBy {
					t.Errorf("%s: entry %+v", path, d)
				}
				switch c.p {
				case VLLM:
					if d.MaxModelLen != 32768 {
						t.Errorf("max_model_len %d", d.MaxModelLen)
					}
				case LlamaCpp:
					if d.Meta["n_ctx_train"] != float64(32768) {
						t.Errorf("meta %v", d.Meta)
					}
				}
			}
		})
	}
}

func TestEngineInfoEndpoints(t *testing.T) {
	t.Parallel()
	_, vllm := startSim(t, Config{})
	_, llama := startSim(t, Config{Personality: LlamaCpp, BatchCapacity: 4})
	_, ollama := startSim(t, Config{Personality: Ollama})
	_, strict := startSim(t, Config{Personality: Strict})

	var v struct{ Version string }
	if r := getJSON(t, vllm+"/version", &v); r.StatusCode != 200 || v.Version != "0.11.0" {
		t.Errorf("vLLM /version: %d %+v", r.StatusCode, v)
	}
	v.Version = ""
	if r := getJSON(t, ollama+"/api/version", &v); r.StatusCode != 200 || v.Version != "0.12.0" {
		t.Errorf("Ollama /api/version: %d %+v", r.StatusCode, v)
	}
	var props struct {
		BuildInfo string `json:"build_info"`
		Settings  struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
		TotalSlots int `json:"total_slots"`
	}
	if r := getJSON(t, llama+"/props", &props); r.StatusCode != 200 || !strings.HasPrefix(props.BuildInfo, "b6000-") ||
		props.Settings.NCtx != 32768 || props.TotalSlots != 4 {
		t.Errorf("llama.cpp /props: %d %+v", r.StatusCode, props)
	}
	var h struct{ Status string }
	if r := getJSON(t, llama+"/health", &h); r.StatusCode != 200 || h.Status != "ok" {
		t.Errorf("llama.cpp /health: %d %+v", r.StatusCode, h)
	}

	// Endpoints that belong to another engine, and made-up paths, are 404s
	// with an OpenAI-style error body.
	for _, u := range []string{
		strict + "/version", vllm + "/props", llama + "/version", ollama + "/version",
		vllm + "/api/version", ollama + "/metrics", strict + "/metrics", vllm + "/v2/nothing", vllm + "/v1/completions/x",
	} {
		var e errorBody
		r := getJSON(t, u, &e)
		if r.StatusCode != http.StatusNotFound || e.Error.Message == "" {
			t.Errorf("GET %s: %d %+v", u, r.StatusCode, e)
		}
	}
}

// sample matches one Prometheus text sample line.
var sample = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (-?[0-9.eE+-]+|NaN|[+-]Inf)$`)

func metricNames(t *testing.T, url string) map[string][]string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	names := map[string][]string{}
	typed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "# TYPE ") {
			f := strings.Fields(line)
			if len(f) != 4 || (f[3] != "gauge" && f[3] != "counter") {
				t.Errorf("bad TYPE line %q", line)
			}
			typed[f[2]] = true
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		m := sample.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("not a sample line: %q", line)
			continue
		}
		if !typed[m[1]] {
			t.Errorf("sample %q before its TYPE line", line)
		}
		names[m[1]] = append(names[m[1]], m[2]+" "+m[3])
	}
	return names
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	_, vllm := startSim(t, Config{Models: []string{"m"}})
	res := mustStream(t, vllm, chatBody("m", 1, 20, streamOpts(4, true)))
	if res.status != 200 {
		t.Fatal(res.status)
	}
	names := metricNames(t, vllm)
	for _, n := range []string{
		"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
		"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:request_success_total",
	} {
		v := names[n]
		if len(v) == 0 || !strings.Contains(v[0], `model_name="m"`) {
			t.Errorf("%s: %v", n, v)
		}
	}
	if got := names["vllm:generation_tokens_total"]; !strings.HasSuffix(got[0], " 4") {
		t.Errorf("generation tokens %v, want 4", got)
	}
	if got := names["vllm:prompt_tokens_total"]; !strings.HasSuffix(got[0], " 31") {
		t.Errorf("prompt tokens %v, want 31", got)
	}
	if got := strings.Join(names["vllm:request_success_total"], ";"); !strings.Contains(got, `finished_reason="length",model_name="m"} 1`) {
		t.Errorf("request_success_total %s", got)
	}
	if got := names["vllm:num_requests_running"]; !strings.HasSuffix(got[0], " 0") {
		t.Errorf("running %v after the request ended", got)
	}

	_, llama := startSim(t, Config{Personality: LlamaCpp})
	names = metricNames(t, llama)
	for _, n := range []string{
		"llamacpp:requests_processing", "llamacpp:requests_deferred", "llamacpp:kv_cache_usage_ratio",
		"llamacpp:prompt_tokens_total", "llamacpp:tokens_predicted_total",
	} {
		if len(names[n]) == 0 {
			t.Errorf("%s missing", n)
		}
	}
}
