package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// exporter serves a captured nvidia_gpu_exporter page (two RTX 3090s).
func exporter(t *testing.T) string {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "hw", "testdata", "nvidia_gpu_exporter_3090_x2.metrics"))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(page) }))
	t.Cleanup(ts.Close)
	return ts.URL + "/metrics"
}

func TestRunWithGPUTelemetry(t *testing.T) {
	t.Parallel()
	cfg := fastSim()
	cfg.TokenInterval = 10 * time.Millisecond
	_, url := startSim(t, cfg)
	p := smallPlan()
	p.OutputTokens = 40 // levels of about a second, so the sampler sees each
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url, GPU: exporter(t)}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	mustValid(t, f)
	tel := f.Local.Telemetry
	if tel == nil || len(tel.Inventory) != 2 || !strings.Contains(tel.Inventory[0].Name, "3090") {
		t.Fatalf("telemetry %+v", tel)
	}
	for _, c := range p.Concurrency {
		lv, ok := tel.Levels[c]
		if !ok || lv.TokensPerJoule == nil || *lv.TokensPerJoule <= 0 || lv.MeanPowerW == nil {
			t.Errorf("level %d: %+v", c, lv)
		}
	}
	// Never in what is published: the records and the publishing payload
	// hold no exporter address and no power or energy reading; and the
	// cards' UUIDs on the exporter's page are in no part of the file.
	data, err := results.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, uuid := range []string{"3e1f0d2c-4b5a", "7a6b5c4d-3e2f"} {
		if strings.Contains(string(data), uuid) {
			t.Errorf("the results file holds a card's UUID %s…", uuid)
		}
	}
	payload, reasons := results.PublishCheck(data)
	if payload == nil {
		t.Fatalf("not publishable: %q", reasons)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(tel.Host, "http://"), "/metrics")
	if host == "" {
		t.Fatal("the telemetry names no host")
	}
	for _, private := range []string{host, "tokens_per_joule", "power_w", "joule"} {
		if strings.Contains(string(payload), private) {
			t.Errorf("the published payload holds %q", private)
		}
		for _, r := range f.Runs {
			b, _ := json.Marshal(r)
			if strings.Contains(string(b), private) {
				t.Errorf("a run record holds %q", private)
			}
		}
	}
	if !strings.Contains(string(data), host) || !strings.Contains(string(data), "tokens_per_joule") {
		t.Error("the local section lacks the telemetry the checks above look for")
	}
}

// TestGPUTelemetryFailureIsAWarning: a GPU source that does not answer,
// or that is not one, never stops the run or costs a request: the run
// says so in a warning of its own and keeps no GPU or level readings.
func TestGPUTelemetryFailureIsAWarning(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, fastSim())
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	for _, tt := range []struct{ source, warning string }{
		{down.URL + "/metrics", "GPU telemetry unavailable: "},
		{"nvidia please", "GPU telemetry is off: "},
	} {
		f, err := Run(context.Background(), smallPlan(), setup.Endpoint{URL: url, GPU: tt.source}, Observer{})
		if err != nil {
			t.Fatalf("%s: a GPU source must not stop the run: %v", tt.source, err)
		}
		ok := 0
		for _, r := range f.Runs {
			ok += r.Metrics.RequestsOK
		}
		if tel := f.Local.Telemetry; len(f.Runs) != 2 || ok != 2*smallPlan().Requests || tel != nil && (len(tel.Inventory) > 0 || len(tel.Levels) > 0) {
			t.Errorf("%s: %d levels, %d requests ok, telemetry %+v", tt.source, len(f.Runs), ok, tel)
		}
		found := false
		for _, w := range warningTexts(f) {
			found = found || strings.HasPrefix(w, tt.warning)
		}
		if !found {
			t.Errorf("%s: warnings %q, want one beginning %q", tt.source, warningTexts(f), tt.warning)
		}
	}
}
