package engine

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

func readFixture(t *testing.T, name string) MetricsReading {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := ParseServerMetrics(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestParseServerMetricsGauges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file                   string
		family                 string
		running, waiting, kvUs float64
	}{
		// Two data-parallel engines: counts add up, the cache share is averaged.
		{"vllm_specdec_before.txt", results.FamilyVLLM, 5, 1, 0.2},
		{"vllm_legacy_metrics.txt", results.FamilyVLLM, 12, 4, 0.875},
		{"sglang_metrics.txt", results.FamilySGLang, 7, 2, 0.42},
		{"llamacpp_metrics.txt", results.FamilyLlamaCpp, 4, 3, 0.0625},
	}
	for _, c := range cases {
		m := readFixture(t, c.file)
		if m.Family != c.family || m.Running == nil || m.Waiting == nil || m.KVCache == nil {
			t.Errorf("%s: %+v", c.file, m)
			continue
		}
		if !near(*m.Running, c.running, 1e-9) || !near(*m.Waiting, c.waiting, 1e-9) || !near(*m.KVCache, c.kvUs, 1e-9) {
			t.Errorf("%s: running %v waiting %v kv %v, want %v %v %v", c.file, *m.Running, *m.Waiting, *m.KVCache, c.running, c.waiting, c.kvUs)
		}
	}
	if m := readFixture(t, "sglang_metrics.txt"); m.Spec.Present || m.Spec.AcceptLength == nil || *m.Spec.AcceptLength != 2.75 {
		t.Errorf("SGLang acceptance gauge: %+v", m.Spec)
	}
	if m := readFixture(t, "llamacpp_metrics.txt"); m.Spec.Present {
		t.Errorf("llama.cpp has no spec counters: %+v", m.Spec)
	}
}

// The acceptance arithmetic on recorded counter text: two engines, the
// counters summed, the delta taken, rate = accepted / draft tokens and
// length = 1 + accepted / drafts.
func TestSpecAcceptanceFromRecordedCounters(t *testing.T) {
	t.Parallel()
	before := readFixture(t, "vllm_specdec_before.txt").Spec
	after := readFixture(t, "vllm_specdec_after.txt").Spec
	if !before.Present || !after.Present {
		t.Fatalf("counters not found: %+v %+v", before, after)
	}
	d, ok := after.Since(before)
	if !ok || d.Drafts != 300 || d.DraftTokens != 900 || d.Accepted != 630 {
		t.Fatalf("delta %+v ok=%v, want 300 drafts, 900 draft tokens, 630 accepted", d, ok)
	}
	rate, _ := d.AcceptanceRate()
	length, _ := d.MeanAcceptanceLength()
	if !near(rate, 0.7, 1e-12) || !near(length, 3.1, 1e-12) {
		t.Errorf("rate %v length %v, want 0.7 and 3.1", rate, length)
	}
	w := specWindow(d)
	if *w.AcceptanceRate != 0.7 || *w.MeanAcceptanceLength != 3.1 || len(w.PerPosition) != 3 ||
		w.PerPosition[0] != 0.9 || w.PerPosition[1] != 0.7 || w.PerPosition[2] != 0.5 {
		t.Errorf("window %+v", w)
	}
	// The older spelling, counters typed without _total, reads the same way.
	legacy := readFixture(t, "vllm_legacy_metrics.txt").Spec
	if !legacy.Present || legacy.Drafts != 40 || legacy.DraftTokens != 160 || legacy.Accepted != 96 {
		t.Errorf("legacy counters %+v", legacy)
	}
	// No drafts, or counters that went backwards: no numbers, no panic.
	if _, ok := (SpecDelta{}).AcceptanceRate(); ok {
		t.Error("a rate without draft tokens")
	}
	if _, ok := before.Since(after); ok {
		t.Error("a delta from counters that went down")
	}
}

func TestParseServerMetricsRefusesNoise(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"", "<html>not metrics</html>", "# TYPE x gauge\nx 1\n", "this is {not prometheus"} {
		if _, err := ParseServerMetrics(strings.NewReader(body)); err == nil {
			t.Errorf("%q: no error", body)
		}
	}
}

// The Kovara method's Run reads /metrics beside the levels and keeps the
// series in local.server_metrics; the live view gets the readings too.
func TestRunScrapesServerMetrics(t *testing.T) {
	_, url := startSim(t, sim.Config{TokenInterval: 2 * time.Millisecond, PrefillRate: 200000, BatchCapacity: 2})
	p := smallPlan()
	p.Concurrency, p.Requests, p.OutputTokens = []int{4}, 16, 40
	p.MetricsInterval = 10 * time.Millisecond
	live := NewLive()
	var sawLive bool
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				if s := live.Snapshot(); s.Server != nil && s.ServerFamily == results.FamilyVLLM && len(s.ServerNew) > 0 {
					sawLive = true
				}
			}
		}
	}()
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, Observer{Live: live})
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	mustValid(t, f)
	sm := f.Local.ServerMetrics
	if sm == nil || sm.Family != results.FamilyVLLM || len(sm.Samples) < 3 {
		t.Fatalf("server metrics %+v", sm)
	}
	var maxRun, maxWait float64
	for _, s := range sm.Samples {
		if s.Running == nil || s.Waiting == nil || s.KVCache == nil {
			t.Fatalf("sample lacks a gauge: %+v", s)
		}
		maxRun, maxWait = max(maxRun, *s.Running), max(maxWait, *s.Waiting)
	}
	// Four slots against a batch of two: two run, two wait.
	if maxRun < 1 || maxRun > 2 || maxWait < 1 {
		t.Errorf("peak running %v, waiting %v; want 1–2 running and some waiting", maxRun, maxWait)
	}
	if !sawLive {
		t.Error("the live view never showed a server reading")
	}
	data, err := results.Marshal(f)
	if err != nil || !strings.Contains(string(data), `"server_metrics"`) {
		t.Errorf("marshal: %v", err)
	}
}

// A server without /metrics gives no series and no warning.
func TestRunWithoutMetricsIsQuiet(t *testing.T) {
	_, url := startSim(t, sim.Config{Personality: sim.Ollama, TokenInterval: time.Millisecond, PrefillRate: 200000})
	p := smallPlan()
	p.MetricsInterval = 10 * time.Millisecond
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Local.ServerMetrics != nil {
		t.Errorf("series from a server without /metrics: %+v", f.Local.ServerMetrics)
	}
	for _, w := range f.Local.Warnings {
		if strings.Contains(w, "metrics") {
			t.Errorf("warning about metrics: %s", w)
		}
	}
}

func TestScraperSeriesStaysBounded(t *testing.T) {
	t.Parallel()
	s := &metricsScraper{series: &results.ServerMetrics{IntervalS: 1}}
	for i := 0; i < 3*maxServerSamples; i++ {
		s.add(results.ServerMetricsSample{T: float64(i)})
	}
	ser := s.series
	if len(ser.Samples) > maxServerSamples || ser.Thinned != 2 || ser.IntervalS != 4 {
		t.Fatalf("%d samples, thinned %d, interval %v", len(ser.Samples), ser.Thinned, ser.IntervalS)
	}
	for i := 1; i < len(ser.Samples); i++ {
		if d := ser.Samples[i].T - ser.Samples[i-1].T; d != 4 {
			t.Fatalf("uneven spacing %v at %d", d, i)
		}
	}
}

// TestSpecCountersPerFamily reads each family's naming: llama.cpp's from
// the capture of a drafting llama-server, vLLM's recorded counters, and
// SGLang's gauges.
func TestSpecCountersPerFamily(t *testing.T) {
	t.Parallel()
	m, err := ParseServerMetrics(bytes.NewReader(capture(t, "spec-metrics.txt")))
	if err != nil {
		t.Fatal(err)
	}
	sc := m.Spec
	if !sc.Present || sc.Names.Family != results.FamilyLlamaCpp || sc.Drafts != 16 || sc.DraftTokens != 47 || sc.Accepted != 47 ||
		!slices.Equal(sc.PerPosition, []float64{16, 16, 15}) {
		t.Errorf("llama.cpp: %+v", sc)
	}
	vllm, err := os.ReadFile("testdata/vllm_specdec_after.txt")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := ParseServerMetrics(bytes.NewReader(vllm)); err != nil || !m.Spec.Present || m.Spec.Names.Family != results.FamilyVLLM {
		t.Errorf("vLLM: %+v %v", m.Spec, err)
	}
	sg := "sglang:num_running_reqs 1\nsglang:spec_accept_length{model_name=\"m\"} 2.8\nsglang:spec_accept_rate{model_name=\"m\"} 0.6\n"
	if m, err := ParseServerMetrics(strings.NewReader(sg)); err != nil || m.Spec.Present || m.Spec.Names.Family != results.FamilySGLang ||
		*m.Spec.AcceptLength != 2.8 || *m.Spec.AcceptRate != 0.6 {
		t.Errorf("SGLang: %+v %v", m.Spec, err)
	}
}

// The /metrics readings keep no connection open between them: llama-server
// serves HTTP from -np + 2 threads, and an idle kept-alive connection holds
// one for its 5 s keep-alive (on -np 1 at 4 users, three users waited 5 s
// at the start of every level while the scraper's and the prefix
// counters' idle connections held two of its three threads).
func TestMetricsReadingsCloseTheirConnections(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	opened, open, requests := 0, 0, 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		fmt.Fprintln(w, "llamacpp:requests_processing 1\nllamacpp:requests_deferred 0")
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch st {
		case http.StateNew:
			opened++
			open++
		case http.StateClosed, http.StateHijacked:
			open--
		}
	}
	srv.Start()
	defer srv.Close()
	b, err := setup.ParseBase(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s := startMetricsScraper(context.Background(), setup.Endpoint{URL: srv.URL}, b, 5*time.Millisecond, func() time.Duration { return time.Since(start) }, nil, nil)
	for {
		mu.Lock()
		n := requests
		mu.Unlock()
		if n >= 10 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.stop()
	mu.Lock()
	defer mu.Unlock()
	if opened < requests {
		t.Errorf("%d readings on %d connections: one was kept alive between readings", requests, opened)
	}
}
