package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/internal/prom"
)

// The server's own /metrics (Prometheus text), read during every plan:
// its queue gauges and KV-cache use for the live view and local.server_metrics,
// and vLLM's speculative-decoding counters for the spec-decode mode.

const (
	// DefaultMetricsInterval is how often /metrics is read during a plan.
	DefaultMetricsInterval = time.Second
	// maxMetricsBody bounds one /metrics answer; vLLM's is a few hundred
	// kilobytes with its histograms.
	maxMetricsBody = 8 << 20
	// maxServerSamples bounds the kept series: past it, every other sample
	// is dropped (about four hours at one a second before the first cut).
	maxServerSamples = 16384
	// metricsGiveUp is how many scrapes in a row may fail before the
	// scraper stops asking for the rest of the plan.
	metricsGiveUp = 30
)

// Metric names per engine. Gauges are summed over label sets (vLLM's data
// parallel engines report one series each), except the cache share,
// which is averaged.
var metricNames = []struct {
	family                   string
	running, waiting, kvUsed []string
}{
	{results.FamilyVLLM, []string{"vllm:num_requests_running"}, []string{"vllm:num_requests_waiting"},
		[]string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}},
	{results.FamilySGLang, []string{"sglang:num_running_reqs"}, []string{"sglang:num_queue_reqs"}, []string{"sglang:token_usage"}},
	{results.FamilyLlamaCpp, []string{"llamacpp:requests_processing"}, []string{"llamacpp:requests_deferred"},
		[]string{"llamacpp:kv_cache_usage_ratio"}},
}

// SpecNames are one engine family's speculative-decoding metrics: the
// lifetime counters of drafting steps, draft tokens, accepted tokens and
// accepted tokens by draft position (a "position" label), or, where an
// engine exposes no counters, its own recent-average gauges.
type SpecNames struct {
	Family                                string
	Drafts, DraftTokens, Accepted, PerPos string
	AcceptLength, AcceptRate              string // gauges
}

// specNames is every family's naming, in one table (docs/servers.md).
// vLLM: its metrics docs; llama.cpp: seen on llama-server b9749 with
// --spec-type draft-simple; SGLang: python/sglang/srt/metrics/collector.py
// (gauges only: "mostrecent" batch averages, no counters to take a delta of).
var specNames = []SpecNames{
	{Family: results.FamilyVLLM, Drafts: "vllm:spec_decode_num_drafts_total", DraftTokens: "vllm:spec_decode_num_draft_tokens_total",
		Accepted: "vllm:spec_decode_num_accepted_tokens_total", PerPos: "vllm:spec_decode_num_accepted_tokens_per_pos_total"},
	{Family: results.FamilyLlamaCpp, Drafts: "llamacpp:spec_decode_num_drafts_total", DraftTokens: "llamacpp:spec_decode_num_draft_tokens_total",
		Accepted: "llamacpp:spec_decode_num_accepted_tokens_total", PerPos: "llamacpp:spec_decode_num_accepted_tokens_per_pos_total"},
	{Family: results.FamilySGLang, AcceptLength: "sglang:spec_accept_length", AcceptRate: "sglang:spec_accept_rate"},
}

// SpecNamesFor is family's row of the table, and whether it has one.
func SpecNamesFor(family string) (SpecNames, bool) {
	for _, n := range specNames {
		if n.Family == family {
			return n, true
		}
	}
	return SpecNames{}, false
}

// Looked names the counters (or gauges) a row has, for a sentence.
func (n SpecNames) Looked() string {
	if n.Drafts != "" {
		return n.Drafts + ", " + n.DraftTokens + " and " + n.Accepted
	}
	return n.AcceptLength + " and " + n.AcceptRate
}

// Prefix-cache counters per engine, both in prompt tokens: those looked up
// (or processed) and those found in the cache. llama.cpp has none; it
// says per request (timings.cache_n). vLLM: prefix_cache_queries/hits
// (V1); SGLang: prompt_tokens and cached_tokens (summed over its
// cache_source label). docs/servers.md.
var prefixCacheNames = []struct{ queries, hits string }{
	{"vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total"},
	{"sglang:prompt_tokens_total", "sglang:cached_tokens_total"},
}

// PrefixCounters are a server's lifetime prefix-cache counters.
type PrefixCounters struct {
	Present       bool
	Queries, Hits float64 // prompt tokens looked up, and found cached
	Names         string  // the two counters, for the record
}

// Since is the change from before to c as prompt tokens and cached
// tokens; ok is false when either reading lacks the counters or they went
// backwards (a restart).
func (c PrefixCounters) Since(before PrefixCounters) (prompt, cached int64, ok bool) {
	if !c.Present || !before.Present || c.Names != before.Names {
		return 0, 0, false
	}
	prompt = int64(math.Round(c.Queries - before.Queries))
	cached = int64(math.Round(c.Hits - before.Hits))
	if prompt < 0 || cached < 0 {
		return 0, 0, false
	}
	return prompt, cached, true
}

// MetricsReading is one parsed /metrics answer: the queue gauges of the
// engine whose names were found, and the speculative-decoding counters.
type MetricsReading struct {
	// Family is the engine whose gauge names were found ("vllm",
	// "sglang", "llama.cpp"), or "" when none was.
	Family  string
	Running *float64 // requests in the batch
	Waiting *float64 // requests queued
	KVCache *float64 // share of the KV cache in use, 0 to 1
	Spec    SpecCounters
	Prefix  PrefixCounters
}

// SpecCounters are a server's lifetime speculative-decoding counters at one
// moment. Only their difference over a window means anything.
type SpecCounters struct {
	// Present: a family's three counters were all found; Names is its
	// row.
	Present     bool
	Names       SpecNames
	Drafts      float64 // speculative steps
	DraftTokens float64 // tokens proposed by the drafter
	Accepted    float64 // of them accepted by the target model
	// PerPosition is accepted tokens by draft position, when exposed.
	PerPosition []float64
	// AcceptLength and AcceptRate are SGLang's own gauges, when exposed
	// (server-side recent averages, not deltas).
	AcceptLength, AcceptRate *float64
}

// SpecDelta is what the counters moved by over a window.
type SpecDelta struct {
	Drafts, DraftTokens, Accepted int64
	PerPosition                   []int64
}

// Since is the change from before to c. A counter that went down (the
// server restarted) makes the delta unusable: ok is false.
func (c SpecCounters) Since(before SpecCounters) (d SpecDelta, ok bool) {
	if !c.Present || !before.Present || c.Names.Family != before.Names.Family {
		return SpecDelta{}, false
	}
	d.Drafts = int64(math.Round(c.Drafts - before.Drafts))
	d.DraftTokens = int64(math.Round(c.DraftTokens - before.DraftTokens))
	d.Accepted = int64(math.Round(c.Accepted - before.Accepted))
	if d.Drafts < 0 || d.DraftTokens < 0 || d.Accepted < 0 {
		return SpecDelta{}, false
	}
	if len(c.PerPosition) > 0 && len(c.PerPosition) == len(before.PerPosition) {
		d.PerPosition = make([]int64, len(c.PerPosition))
		for i := range c.PerPosition {
			d.PerPosition[i] = int64(math.Round(c.PerPosition[i] - before.PerPosition[i]))
		}
	}
	return d, true
}

// AcceptanceRate is accepted / draft tokens; ok is false without drafts.
func (d SpecDelta) AcceptanceRate() (float64, bool) {
	if d.DraftTokens <= 0 {
		return 0, false
	}
	return float64(d.Accepted) / float64(d.DraftTokens), true
}

// MeanAcceptanceLength is 1 + accepted / drafts: the tokens one step of
// the target model yields on average. ok is false without drafts.
func (d SpecDelta) MeanAcceptanceLength() (float64, bool) {
	if d.Drafts <= 0 {
		return 0, false
	}
	return 1 + float64(d.Accepted)/float64(d.Drafts), true
}

// ParseServerMetrics reads a /metrics answer in the Prometheus text format.
// A body that breaks the format part-way still yields what was read before
// the break; the error is returned only when nothing we know was found.
func ParseServerMetrics(r io.Reader) (MetricsReading, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, perr := p.TextToMetricFamilies(r)
	var m MetricsReading
	for _, n := range metricNames {
		run, okR := sumMetric(fams, n.running...)
		wait, okW := sumMetric(fams, n.waiting...)
		kv, okK := meanMetric(fams, n.kvUsed...)
		if !okR && !okW && !okK {
			continue
		}
		m.Family = n.family
		if okR {
			m.Running = &run
		}
		if okW {
			m.Waiting = &wait
		}
		if okK {
			m.KVCache = &kv
		}
		break
	}
	for _, n := range specNames {
		if n.Drafts != "" {
			d, okD := sumMetric(fams, n.Drafts)
			dt, okT := sumMetric(fams, n.DraftTokens)
			a, okA := sumMetric(fams, n.Accepted)
			if okD && okT && okA {
				m.Spec = SpecCounters{Present: true, Names: n, Drafts: d, DraftTokens: dt, Accepted: a, PerPosition: perPosition(fams, n.PerPos)}
				break
			}
			continue
		}
		l, okL := meanMetric(fams, n.AcceptLength)
		r, okR := meanMetric(fams, n.AcceptRate)
		if okL || okR {
			m.Spec.Names = n
			if okL {
				m.Spec.AcceptLength = &l
			}
			if okR {
				m.Spec.AcceptRate = &r
			}
			break
		}
	}
	for _, n := range prefixCacheNames {
		q, okQ := sumMetric(fams, n.queries)
		h, okH := sumMetric(fams, n.hits)
		if okQ && okH {
			m.Prefix = PrefixCounters{Present: true, Queries: q, Hits: h, Names: n.hits + " / " + n.queries}
			break
		}
	}
	if m.Family == "" && !m.Spec.Present && m.Spec.AcceptLength == nil && m.Spec.AcceptRate == nil && !m.Prefix.Present {
		if perr != nil {
			return m, fmt.Errorf("the /metrics answer is not Prometheus text: %w", perr)
		}
		return m, errors.New("the /metrics answer holds none of the queue gauges this app knows (vLLM, SGLang, llama.cpp)")
	}
	return m, nil
}

// family finds a metric family by name; a counter may also be listed
// without its _total suffix.
func family(fams map[string]*dto.MetricFamily, name string) *dto.MetricFamily {
	if f := fams[name]; f != nil {
		return f
	}
	if n, ok := trimTotal(name); ok {
		return fams[n]
	}
	return nil
}

func trimTotal(name string) (string, bool) {
	const suf = "_total"
	if len(name) > len(suf) && name[len(name)-len(suf):] == suf {
		return name[:len(name)-len(suf)], true
	}
	return "", false
}

// sumMetric adds every series of the first of names that is present.
func sumMetric(fams map[string]*dto.MetricFamily, names ...string) (float64, bool) {
	sum, n := seriesTotal(fams, names)
	return sum, n > 0
}

// meanMetric averages every series of the first of names that is present.
func meanMetric(fams map[string]*dto.MetricFamily, names ...string) (float64, bool) {
	sum, n := seriesTotal(fams, names)
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// seriesTotal is the sum and count of the readable series of the first of
// names that has any.
func seriesTotal(fams map[string]*dto.MetricFamily, names []string) (float64, int) {
	for _, name := range names {
		f := family(fams, name)
		if f == nil {
			continue
		}
		sum, n := 0.0, 0
		for _, m := range f.GetMetric() {
			if v, ok := prom.Value(m); ok {
				sum += v
				n++
			}
		}
		if n > 0 {
			return sum, n
		}
	}
	return 0, 0
}

// perPosition reads an accepted-per-position counter (name), summed over
// the other labels, indexed by its "position" label.
func perPosition(fams map[string]*dto.MetricFamily, name string) []float64 {
	f := family(fams, name)
	if f == nil {
		return nil
	}
	var out []float64
	for _, m := range f.GetMetric() {
		pos := -1
		for _, l := range m.GetLabel() {
			if l.GetName() == "position" {
				if n, err := strconv.Atoi(l.GetValue()); err == nil && n >= 0 && n < 64 {
					pos = n
				}
			}
		}
		v, ok := prom.Value(m)
		if pos < 0 || !ok {
			continue
		}
		for len(out) <= pos {
			out = append(out, 0)
		}
		out[pos] += v
	}
	return out
}

// fetchMetrics reads GET /metrics, bounded in size and time.
func fetchMetrics(ctx context.Context, c *http.Client, e setup.Endpoint, b setup.Base, timeout time.Duration) (MetricsReading, error) {
	body, err := getBounded(ctx, c, e, b, "/metrics", "text/plain;version=0.0.4", timeout)
	if err != nil {
		return MetricsReading{}, err
	}
	return ParseServerMetrics(bytes.NewReader(body))
}

// fetchSlots reads llama-server's GET /slots (served with --slots; off by
// default in b4748, on in later builds): the slots busy with a request,
// as the running gauge. It is read only where /metrics has nothing
// (llama-server without --metrics), so another client can still be told.
func fetchSlots(ctx context.Context, c *http.Client, e setup.Endpoint, b setup.Base, timeout time.Duration) (MetricsReading, error) {
	body, err := getBounded(ctx, c, e, b, "/slots", "application/json", timeout)
	if err != nil {
		return MetricsReading{}, err
	}
	return ParseSlots(body)
}

// ParseSlots reads a llama-server /slots answer: a list of slots, each
// with is_processing (b4748 and later) or state (older builds: 0 idle).
func ParseSlots(body []byte) (MetricsReading, error) {
	var slots []struct {
		IsProcessing *bool `json:"is_processing"`
		State        *int  `json:"state"`
	}
	if err := json.Unmarshal(body, &slots); err != nil {
		return MetricsReading{}, fmt.Errorf("the /slots answer is not a list of slots: %w", err)
	}
	busy, known := 0, 0
	for _, sl := range slots {
		switch {
		case sl.IsProcessing != nil:
			known++
			if *sl.IsProcessing {
				busy++
			}
		case sl.State != nil:
			known++
			if *sl.State != 0 {
				busy++
			}
		}
	}
	if known == 0 {
		return MetricsReading{}, errors.New("the /slots answer says of no slot whether it is busy")
	}
	v := float64(busy)
	return MetricsReading{Family: results.FamilyLlamaCpp, Running: &v}, nil
}

// getBounded reads GET path, bounded in size and time; an answer that is
// not 200 is an error.
func getBounded(ctx context.Context, c *http.Client, e setup.Endpoint, b setup.Base, path, accept string, timeout time.Duration) ([]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, b.API(path), nil)
	if err != nil {
		return nil, err
	}
	authorize(e, req)
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		return nil, errors.New(scrub(rootCause(err), e.APIKey))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("GET %s answered HTTP %d", path, resp.StatusCode)
	}
	body, tooBig, err := readBounded(resp.Body, maxMetricsBody)
	if err != nil {
		return nil, errors.New(scrub(rootCause(err), e.APIKey))
	}
	if tooBig {
		return nil, fmt.Errorf("GET %s answered with more than %d MiB", path, maxMetricsBody>>20)
	}
	return body, nil
}

// metricsClient is a small client for /metrics, apart from the measured
// connections.
func metricsClient(e setup.Endpoint, b setup.Base) *http.Client {
	tr := newTransport(e, b, nil, nil)
	tr.MaxConnsPerHost = 0
	// A connection per reading, closed after it: llama-server serves HTTP
	// from a pool of -np + 2 threads, and a kept-alive idle connection
	// holds one of them for its 5 s keep-alive. The scraper's (every
	// second) held one for good, the prefix counters' another for 5 s
	// after each level began: on llama-server -np 1 at 4 users, 3 users
	// waited 5 s for a thread at the start of every level (docs/servers.md).
	tr.DisableKeepAlives = true
	// A redirect is not followed: the transport only dials the endpoint,
	// and the key goes nowhere else. /metrics then simply has nothing.
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &http.Client{Transport: tr, CheckRedirect: noRedirect}
}

// ReadServerMetrics reads the endpoint's /metrics once: what the endpoint
// screen's Test can show about it. An error means there is nothing usable
// there, which is common and harmless.
func ReadServerMetrics(ctx context.Context, e setup.Endpoint) (MetricsReading, error) {
	b, err := setup.ParseBase(e.URL)
	if err != nil {
		return MetricsReading{}, &EndpointError{Kind: ErrBadAddress, Msg: err.Error()}
	}
	c := metricsClient(e, b)
	defer c.CloseIdleConnections()
	return fetchMetrics(ctx, c, e, b, checkTimeout(e))
}

// metricsScraper reads /metrics at a fixed interval beside a plan. It asks
// once at the start; a server without a usable /metrics is left alone for
// the rest of the plan, silently.
type metricsScraper struct {
	every time.Duration
	clock func() time.Duration
	live  *Live

	mu     sync.Mutex
	series *results.ServerMetrics // nil until the first good scrape
	good   int                    // good scrapes so far
	// foreign sets each reading against this run's requests in flight
	// (foreign.go).
	foreign *foreignWatch

	cancel context.CancelFunc
	done   chan struct{}
}

// startMetricsScraper starts reading /metrics every interval (0 means
// DefaultMetricsInterval; negative means never). stop ends it. fl counts
// the run's requests in flight, which each reading is set against (nil:
// none is, as in a shard of a run from several machines).
func startMetricsScraper(ctx context.Context, e setup.Endpoint, b setup.Base, every time.Duration, clock func() time.Duration, live *Live, fl *flight) *metricsScraper {
	s := &metricsScraper{every: every, clock: clock, live: live, done: make(chan struct{}),
		foreign: &foreignWatch{flight: fl, live: live}}
	if every < 0 {
		close(s.done)
		return s
	}
	if s.every == 0 {
		s.every = DefaultMetricsInterval
	}
	ctx, s.cancel = context.WithCancel(ctx)
	go s.loop(ctx, e, b)
	return s
}

func (s *metricsScraper) loop(ctx context.Context, e setup.Endpoint, b setup.Base) {
	defer close(s.done)
	defer s.live.setForeign("") // said of this run only while it runs
	c := metricsClient(e, b)
	defer c.CloseIdleConnections()
	timeout := min(max(2*s.every, 2*time.Second), 5*time.Second)
	t := time.NewTicker(s.every)
	defer t.Stop()
	failedInRow := 0
	read, source := fetchMetrics, ""
	for {
		m, err := read(ctx, c, e, b, timeout)
		if s.series == nil && (err != nil || m.Family == "") {
			// No /metrics: llama-server's /slots still says its busy slots.
			if sm, serr := fetchSlots(ctx, c, e, b, timeout); serr == nil {
				m, err, read, source = sm, nil, fetchSlots, "/slots"
			}
		}
		at := s.clock()
		if ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		first := s.series == nil
		switch {
		case err == nil && m.Family != "":
			failedInRow = 0
			if first {
				s.series = &results.ServerMetrics{Family: m.Family, Source: source, IntervalS: s.every.Seconds(), Samples: []results.ServerMetricsSample{}}
			}
			smp := results.ServerMetricsSample{T: math.Round(at.Seconds()*1000) / 1000, Running: m.Running, Waiting: m.Waiting, KVCache: m.KVCache}
			s.add(smp)
			s.foreign.reading(at, m.Running, m.Waiting)
			s.mu.Unlock()
			s.live.serverSample(m.Family, smp)
		case first:
			// Nothing usable at the start: no series, no noise in the
			// file; the live view says why its server charts stay empty.
			s.mu.Unlock()
			why := "has none of the gauges vLLM, SGLang or llama.cpp publish"
			if err != nil {
				why = "did not answer (" + err.Error() + ")"
			}
			s.live.serverUnavailable("No server charts: this server's /metrics " + why + ".")
			return
		default:
			s.series.Failures++
			failedInRow++
			s.mu.Unlock()
			if failedInRow >= metricsGiveUp {
				s.live.serverUnavailable("The server's /metrics stopped answering: the server charts end here.")
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// add appends a sample, halving the series when it is full; once halved,
// only every second (fourth, …) scrape is kept, so the spacing stays even.
// Call with mu.
func (s *metricsScraper) add(smp results.ServerMetricsSample) {
	ser := s.series
	s.good++
	if (s.good-1)%(1<<ser.Thinned) != 0 {
		return
	}
	if len(ser.Samples) >= maxServerSamples {
		kept := ser.Samples[:0]
		for i := 0; i < len(ser.Samples); i += 2 {
			kept = append(kept, ser.Samples[i])
		}
		ser.Samples = kept
		ser.Thinned++
		ser.IntervalS *= 2
	}
	ser.Samples = append(ser.Samples, smp)
}

// snapshot returns a copy of the series so far, or nil.
func (s *metricsScraper) snapshot() *results.ServerMetrics {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.series == nil {
		return nil
	}
	c := *s.series
	c.Samples = append([]results.ServerMetricsSample(nil), s.series.Samples...)
	c.ForeignLoad = s.foreign.records()
	return &c
}

// stop ends the scraper, waits for it, and returns the series.
func (s *metricsScraper) stop() *results.ServerMetrics {
	if s == nil {
		return nil
	}
	if s.cancel != nil {
		s.cancel()
	}
	<-s.done
	return s.snapshot()
}
