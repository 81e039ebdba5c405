package hw

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func exporterFor(t *testing.T, spec string) *exporterSource {
	t.Helper()
	src, err := ParseSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	e := src.(*exporterSource)
	e.timeout = time.Second
	return e
}

func TestExporterAgainstHTTPTest(t *testing.T) {
	t.Parallel()
	dcgm := readFixture(t, "dcgm_a100_80gb_x2.metrics")
	smiExp := readFixture(t, "nvidia_gpu_exporter_3090_x2.metrics")
	huge := "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n" + strings.Repeat("# padding padding padding padding padding padding padding\n", (9<<20)/58)
	tests := []struct {
		name      string
		query     string
		handler   http.HandlerFunc
		inventory string // expected GPUs as "index name" lines, or the error
		warning   string // the sampler's warning; "" = none
		power     float64
		timeout   time.Duration // per fetch; default 1 s
	}{
		{
			name: "dcgm-exporter", handler: serve(dcgm),
			inventory: "0 NVIDIA A100-SXM4-80GB\n1 NVIDIA A100-SXM4-80GB", power: 312.458 + 305.094,
		},
		{
			name: "nvidia_gpu_exporter subset", query: "?gpus=1", handler: serve(smiExp),
			inventory: "1 NVIDIA GeForce RTX 3090", power: 336.51,
		},
		{
			name: "HTTP 500", handler: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "collector failed", 500) },
			inventory: "the GPU exporter at HOST answered HTTP 500 Internal Server Error",
			warning:   "GPU telemetry stopped: the GPU exporter at HOST gave no readings for LIMIT (last try: it answered HTTP 500 Internal Server Error)",
		},
		{
			name: "slower than the timeout", handler: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			},
			inventory: "the GPU exporter at HOST did not answer within 0.2 s",
			timeout:   200 * time.Millisecond,
			warning:   "GPU telemetry stopped: the GPU exporter at HOST gave no readings for LIMIT (last try: it did not answer within 0.2 s)",
		},
		{
			name: "garbage", handler: serve("<html><body>nginx: 502 Bad Gateway</body></html>"),
			inventory: "the GPU exporter at HOST sent a page that is not Prometheus metrics text",
			warning:   "GPU telemetry stopped: the GPU exporter at HOST gave no readings for LIMIT (last try: it sent a page that is not Prometheus metrics text",
		},
		{
			name: "huge body", handler: serve(huge),
			inventory: "the GPU exporter at HOST sent a page larger than 8 MiB",
			warning:   "GPU telemetry stopped: the GPU exporter at HOST gave no readings for LIMIT (last try: it sent a page larger than 8 MiB)",
			timeout:   3 * time.Second, // 9 MiB under the race detector
		},
		{
			name: "no such GPU", query: "?gpus=3", handler: serve(dcgm),
			inventory: "the GPU exporter at HOST has no GPU 3 (it has GPUs 0, 1); fix ?gpus= in the GPU source",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			host := strings.TrimPrefix(srv.URL, "http://")
			e := exporterFor(t, srv.URL+"/metrics"+tt.query)
			e.timeout = time.Second
			if tt.timeout > 0 {
				e.timeout = tt.timeout
			}
			const interval = 90 * time.Millisecond
			limit := seconds(hangIntervals*interval + e.timeout) // no reading ever came
			want := strings.ReplaceAll(tt.inventory, "HOST", host)
			gpus, err := e.Inventory(context.Background())
			var got string
			if err != nil {
				got = err.Error()
			} else {
				var lines []string
				for _, g := range gpus {
					lines = append(lines, strconv.Itoa(g.Index)+" "+g.Name)
				}
				got = strings.Join(lines, "\n")
			}
			if !strings.HasPrefix(got, want) {
				t.Errorf("Inventory\n got %s\nwant %s", got, want)
			}
			if strings.Contains(tt.inventory, "has no GPU") {
				return
			}

			smp, err := e.Start(context.Background(), interval)
			if err != nil {
				t.Fatal(err)
			}
			if tt.warning != "" {
				select {
				case <-smp.Done():
				case <-time.After(10 * time.Second):
					t.Fatal("the sampler did not give up")
				}
			} else {
				waitForSamples(t, smp, 6)
			}
			smp.Stop()
			warnings := strings.Join(smp.Warnings(), "\n")
			wantWarning := strings.NewReplacer("HOST", host, "LIMIT", limit).Replace(tt.warning)
			if (wantWarning == "") != (warnings == "") || !strings.HasPrefix(warnings, wantWarning) {
				t.Errorf("warnings\n got %s\nwant %s", warnings, wantWarning)
			}
			if tt.power > 0 {
				p, ok := smp.Latest()
				if !ok || p.PowerW == nil || !near(*p.PowerW, tt.power) {
					t.Errorf("Latest %+v, want %v W", p, tt.power)
				}
				if n := len(smp.Samples()); n < 3 {
					t.Errorf("only %d samples", n)
				}
			}
		})
	}
}

func serve(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}
}

func TestExporterRecoversFromABadFetch(t *testing.T) {
	t.Parallel()
	dcgm := readFixture(t, "dcgm_a100_80gb_x2.metrics")
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		serve(dcgm)(w, r)
	}))
	defer srv.Close()
	smp, err := exporterFor(t, srv.URL).Start(context.Background(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	waitForSamples(t, smp, 6)
	smp.Stop()
	if w := smp.Warnings(); len(w) != 0 {
		t.Errorf("one failed fetch is not a failure: %q", w)
	}
	if len(smp.Samples()) < 6 {
		t.Errorf("%d samples", len(smp.Samples()))
	}
}

func TestExporterErrorsHidePassword(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	e := exporterFor(t, "http://scrape:hunter2@"+addr+"/metrics")
	_, err = e.Inventory(context.Background())
	if err == nil {
		t.Fatal("no error from a closed port")
	}
	want := "the GPU exporter at " + addr + " refused the connection (is the exporter running, and is the port right?)"
	if err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(e.String(), "hunter2") || strings.Contains(e.Host(), "scrape") {
		t.Errorf("password leaked: %v / %s / %s", err, e.String(), e.Host())
	}
}

func TestExporterSendsBasicAuth(t *testing.T) {
	t.Parallel()
	dcgm := readFixture(t, "dcgm_a100_80gb_x2.metrics")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "scrape" || p != "hunter2" || r.URL.RawQuery != "collect=gpu" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		serve(dcgm)(w, r)
	}))
	defer srv.Close()
	e := exporterFor(t, strings.Replace(srv.URL, "http://", "http://scrape:hunter2@", 1)+"/metrics?collect=gpu&gpus=0")
	gpus, err := e.Inventory(context.Background())
	if err != nil || len(gpus) != 1 || gpus[0].Index != 0 {
		t.Fatalf("Inventory = %+v, %v", gpus, err)
	}
}

// waitForSamples waits up to 10 s for n samples.
func waitForSamples(t *testing.T, smp *Sampler, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(smp.Samples()) < n {
		if time.Now().After(deadline) {
			t.Errorf("only %d samples after 10 s", len(smp.Samples()))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
