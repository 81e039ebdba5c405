package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	f, err := Run(context.Background(), p, Endpoint{URL: url, GPU: exporter(t)}, Observer{})
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
	// Never in the published records.
	for _, r := range f.Runs {
		if strings.Contains(r.Environment.Client, "3090") {
			t.Error("telemetry leaked into a run record")
		}
	}
}

func TestGPUTelemetryFailureIsAWarning(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, fastSim())
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	f, err := Run(context.Background(), smallPlan(), Endpoint{URL: url, GPU: down.URL + "/metrics"}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 2 || !containsWord(warningTexts(f), "GPU telemetry") {
		t.Errorf("runs %d warnings %v", len(f.Runs), warningTexts(f))
	}
	_, err = Run(context.Background(), smallPlan(), Endpoint{URL: url, GPU: "nvidia please"}, Observer{})
	if err != nil {
		t.Errorf("a bad GPU source must not stop the run: %v", err)
	}
}
