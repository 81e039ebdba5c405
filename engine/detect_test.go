package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

func detectAt(t *testing.T, url string) (EndpointReport, error) {
	t.Helper()
	rep, err := Check(context.Background(), setup.Endpoint{URL: url}, "")
	if rep == nil {
		return EndpointReport{}, err
	}
	return *rep, err
}

// Every personality of the simulator is told apart, with its version and
// the context length from the most specific place that gives it.
func TestDetectPersonalities(t *testing.T) {
	cases := []struct {
		p                      sim.Personality
		family, version, ctxAt string
		header                 string
	}{
		{sim.VLLM, results.FamilyVLLM, "0.11.0", "/v1/models max_model_len", "uvicorn"},
		{sim.SGLang, results.FamilySGLang, "0.5.2", "/v1/models max_model_len", "uvicorn"},
		{sim.LlamaCpp, results.FamilyLlamaCpp, "b6000-5eed5ee", "/props default_generation_settings.n_ctx", "llama.cpp"},
		{sim.Ollama, results.FamilyOllama, "0.12.0", "/api/ps context_length", ""},
		{sim.Strict, "", "", "", ""},
	}
	for _, c := range cases {
		_, url := startSim(t, sim.Config{Personality: c.p, ContextLength: 16384})
		rep, err := detectAt(t, url)
		if err != nil && c.p != sim.Strict {
			t.Fatalf("%s: %v", c.p, err)
		}
		d := rep.Detection
		if d.Family != c.family || d.Version != c.version || d.ContextSource != c.ctxAt || d.ServerHeader != c.header {
			t.Errorf("%s: %+v", c.p, d)
		}
		if c.ctxAt != "" && d.ContextLength != 16384 {
			t.Errorf("%s: context %d", c.p, d.ContextLength)
		}
	}
}

func TestParseServerHeader(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ h, family, version string }{
		{"llama.cpp", results.FamilyLlamaCpp, ""},
		{"vLLM/0.9.1", results.FamilyVLLM, "0.9.1"},
		{"sglang/0.4.6 Python/3.11", results.FamilySGLang, "0.4.6"},
		{"ollama/0.6.2", results.FamilyOllama, "0.6.2"},
		{"uvicorn", "", ""},
		{"nginx/1.25.3", "", ""},
		{"", "", ""},
	} {
		f, v := parseServerHeader(c.h)
		if f != c.family || v != c.version {
			t.Errorf("%q: %q %q, want %q %q", c.h, f, v, c.family, c.version)
		}
	}
}

// A server that names itself only in its Server header, behind a generic
// owned_by, and an SGLang found by /get_server_info alone.
func TestDetectFromHeaderAndServerInfo(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "vLLM/0.10.2")
		w.Write([]byte(`{"object":"list","data":[{"id":"m","owned_by":"system","context_window":4096}]}`))
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	c := &http.Client{}
	b, _ := setup.ParseBase(hs.URL)
	models, hdr, err := listModels(context.Background(), c, setup.Endpoint{URL: hs.URL}, b)
	if err != nil {
		t.Fatal(err)
	}
	d := Detect(context.Background(), c, setup.Endpoint{URL: hs.URL}, b, models, "m", hdr)
	if d.Family != results.FamilyVLLM || d.Version != "0.10.2" || d.Source != "server header" || d.ContextLength != 4096 || d.ContextSource != "/v1/models context_window" {
		t.Errorf("%+v", d)
	}

	mux2 := http.NewServeMux()
	mux2.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"object":"list","data":[{"id":"m","owned_by":"someone"}]}`))
	})
	mux2.HandleFunc("/get_server_info", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"model_path":"org/m","context_length":65536,"version":"0.4.9.post2"}`))
	})
	hs2 := httptest.NewServer(mux2)
	t.Cleanup(hs2.Close)
	b2, _ := setup.ParseBase(hs2.URL)
	models, hdr, err = listModels(context.Background(), c, setup.Endpoint{URL: hs2.URL}, b2)
	if err != nil {
		t.Fatal(err)
	}
	d = Detect(context.Background(), c, setup.Endpoint{URL: hs2.URL}, b2, models, "m", hdr)
	if d.Family != results.FamilySGLang || d.Version != "0.4.9.post2" || d.ContextLength != 65536 || !strings.HasPrefix(d.ContextSource, "/get_server_info") {
		t.Errorf("%+v", d)
	}
	if results.FamilyName(d.Family) != "SGLang" || results.FamilyName("other") != "other" {
		t.Error("results.FamilyName")
	}
}
