package record

import (
	"bufio"
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/sim/simtest"
)

// BenchmarkAddedTTFT is the proxy's added time to first token on
// loopback (docs/performance.md): streamed requests to the simulator,
// straight and through the proxy in turn, each client's time from its
// send to the first token's line; p50 and p99 of both, and of the
// difference between the arms' percentiles.
//
//	go test ./record -run '^$' -bench AddedTTFT -benchtime 400x
func BenchmarkAddedTTFT(b *testing.B) {
	cfg := simtest.Fast()
	cfg.Personality, cfg.Models = sim.VLLM, []string{"m"}
	url := simtest.Start(b, cfg)
	px, _, _ := proxyTo(b, url)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	body := chat(b, "You are terse.", "hello")
	ttft := func(base string) time.Duration {
		t0 := time.Now()
		resp, err := client.Post(base+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var first time.Duration
		for sc.Scan() {
			if first == 0 && strings.Contains(sc.Text(), `"content":"`) {
				first = time.Since(t0)
			}
		}
		return first
	}
	var direct, via []time.Duration
	b.ResetTimer()
	for range b.N {
		direct = append(direct, ttft(url))
		via = append(via, ttft(px.URL))
	}
	b.StopTimer()
	at := func(d []time.Duration, p float64) float64 {
		slices.Sort(d)
		return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(at(direct, 0.5), "direct-p50-ms")
	b.ReportMetric(at(direct, 0.99), "direct-p99-ms")
	b.ReportMetric(at(via, 0.5), "proxy-p50-ms")
	b.ReportMetric(at(via, 0.99), "proxy-p99-ms")
}
