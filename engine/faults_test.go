package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/stream"
)

// The fault matrix: every simulator fault, on every personality, at one
// stream and at 32, must give each faulted request its class and nothing
// else, and the run must go on to a valid, complete file whose counts are
// exactly the faults injected.

// matrixFaults is every fault the simulator can inject and the class the
// method gives it ("" for one that must still succeed).
var matrixFaults = []struct {
	fault sim.Fault
	class string
}{
	{sim.Fault429, "http_429"},
	{sim.Fault500, "http_500"},
	{sim.Fault503, "http_503"},
	{sim.FaultReset, ClassConnection},
	{sim.FaultErrorEvent, ClassErrorEvent},
	{sim.FaultMalformed, ClassMalformedStream},
	{sim.FaultNoDone, ClassEndedEarly},
	{sim.FaultEmpty, ClassEmptyCompletion},
	{sim.FaultStall, ClassTimeout},
	{sim.FaultBuffer, ""},                     // late, but a whole and valid stream
	{sim.FaultHugeLine, ClassMalformedStream}, // past the 16 MiB line limit
}

var matrixPersonalities = []sim.Personality{sim.VLLM, sim.LlamaCpp, sim.Ollama, sim.Strict, sim.SGLang}

// matrixCell is one level shape of the matrix: its concurrency, its
// request count and which of its requests (0-based) get the fault.
type matrixCell struct {
	conc, requests int
	faulted        []int
}

var matrixCells = []matrixCell{
	{conc: 1, requests: 3, faulted: []int{1}},
	// 40 requests over 32 slots: some slots start a second request after
	// a fault broke their connection.
	{conc: 32, requests: 40, faulted: []int{0, 17, 39}},
}

// stallTimeout is the per-request timeout of the cells where a request
// stalls; long enough that no healthy 8-token request at 1 ms a token
// gets near it even under the race detector on a small, busy machine (at
// 2 s, with a CPU hog on both cores, 11 of 40 healthy requests at 32
// streams timed out). The stalled ones wait it out together, so it costs
// the test its length once.
const stallTimeout = 15 * time.Second

// faultPlan is the small, fast plan every matrix cell runs.
func faultPlan(c matrixCell, timeout time.Duration) setup.KovaraPlan {
	p := setup.DefaultPlan()
	p.InputTokens, p.OutputTokens = 32, 8
	p.Concurrency = []int{c.conc}
	p.Requests, p.Warmup = c.requests, 0
	p.Timeout = timeout
	return p
}

// runCells runs fn for every cell as a subtest, all at once but for the
// limits of each cell's lane: a cell that waits (a stall) costs nothing,
// one that copies 16 MiB lines costs memory and, under the race detector,
// seconds of CPU, so only a few of those run together.
func runCells(t *testing.T, names []string, lane func(i int) chan struct{}, fn func(t *testing.T, i int)) {
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			if sem := lane(i); sem != nil {
				sem <- struct{}{}
				defer func() { <-sem }()
			}
			t.Run(name, func(t *testing.T) { fn(t, i) })
		})
	}
	wg.Wait()
}

// TestFaultMatrix is not parallel with the package's other tests: its
// 16 MiB lines would eat the CPU that their own short timeouts assume.
func TestFaultMatrix(t *testing.T) {
	type cell struct {
		p     sim.Personality
		fault sim.Fault
		class string
		shape matrixCell
	}
	var cells []cell
	var names []string
	for _, f := range matrixFaults {
		for _, p := range matrixPersonalities {
			for _, c := range matrixCells {
				if f.fault == sim.FaultHugeLine && c.conc > 1 {
					c.faulted = c.faulted[1:2] // one 16 MiB line per cell is enough
				}
				cells = append(cells, cell{p, f.fault, f.class, c})
				names = append(names, fmt.Sprintf("%s/%s/c%d", f.fault, p, c.conc))
			}
		}
	}
	heavy, normal := make(chan struct{}, 2), make(chan struct{}, 6)
	lane := func(i int) chan struct{} {
		switch cells[i].fault {
		case sim.FaultStall:
			return nil
		case sim.FaultHugeLine:
			return heavy
		}
		return normal
	}
	runCells(t, names, lane, func(t *testing.T, i int) {
		c := cells[i]
		timeout := 60 * time.Second
		if c.fault == sim.FaultStall {
			timeout = stallTimeout
		}
		plan := faultPlan(c.shape, timeout)
		faulted := map[int64]bool{}
		for _, k := range c.shape.faulted {
			faulted[prompt.MeasuredRequest(plan.Warmup, plan.Requests, 0, k)] = true
		}
		cfg := sim.Config{
			Personality: c.p, TokenInterval: time.Millisecond, PrefillRate: 1e6,
			HugeLineBytes: stream.DefaultMaxLine + 1024,
			Faults: func(n int64) sim.Fault {
				if faulted[n] {
					return c.fault
				}
				return sim.FaultNone
			},
		}
		_, url := startSim(t, cfg)
		var recs []RequestRecord
		obs := Observer{Requests: func(_ int, r []RequestRecord) { recs = r }}
		f, err := Run(context.Background(), plan, setup.Endpoint{URL: url}, obs)
		if err != nil {
			t.Fatalf("Run: %v (a fault inside a level must not stop the run)", err)
		}
		if !f.Complete || len(f.Runs) != 1 || len(f.Local.Levels) != 1 {
			t.Fatalf("complete=%v runs=%d levels=%d", f.Complete, len(f.Runs), len(f.Local.Levels))
		}
		mustValid(t, f)

		// Each request has exactly its class: the faulted ones theirs, the
		// rest none.
		if len(recs) != plan.Requests {
			t.Fatalf("%d request records, want %d", len(recs), plan.Requests)
		}
		for _, r := range recs {
			want := ""
			if faulted[r.N] {
				want = c.class
			}
			if r.Class != want {
				t.Errorf("request %d: class %q, want %q", r.N, r.Class, want)
			}
		}

		n := len(c.shape.faulted)
		wantOK, wantErr, wantTimeout := plan.Requests-n, n, 0
		wantClasses := map[string]int{c.class: n}
		switch c.class {
		case "":
			wantOK, wantErr, wantClasses = plan.Requests, 0, map[string]int{}
		case ClassTimeout:
			wantErr, wantTimeout = 0, n
		}
		m := f.Runs[0].Metrics
		if m.RequestsOK != wantOK || m.RequestsError != wantErr || m.RequestsTimeout != wantTimeout {
			t.Errorf("ok/error/timeout = %d/%d/%d, want %d/%d/%d", m.RequestsOK, m.RequestsError, m.RequestsTimeout, wantOK, wantErr, wantTimeout)
		}
		lv := f.Local.Levels[0]
		if !mapsEqual(lv.Errors, wantClasses) {
			t.Errorf("local.levels[0].errors = %v, want %v", lv.Errors, wantClasses)
		}
		if c.class != "" {
			msgs := lv.Messages[c.class]
			if len(msgs) == 0 || len(msgs) > messagesPerClass {
				t.Errorf("messages for %s: %q", c.class, msgs)
			}
			for _, msg := range msgs {
				if strings.TrimSpace(msg) == "" || len(msg) > 400 {
					t.Errorf("message for %s is empty or unbounded (%d bytes)", c.class, len(msg))
				}
			}
		}
		if m.TTFTMs == nil || m.TTFTMs.N != wantOK {
			t.Errorf("ttft sample %+v, want n=%d (only successes)", m.TTFTMs, wantOK)
		}
		// The failures are the first thing the result says, with how
		// many succeeded; a clean level says nothing about failures.
		failed := fmt.Sprintf("%d of %d requests failed at concurrency %d (%s: %d); the figures describe the %d that succeeded",
			n, plan.Requests, f.Runs[0].Concurrency, results.ClassName(c.class), n, wantOK)
		ws := results.Warnings(f)
		switch {
		case c.class == "" && containsWord(warningTexts(f), "requests failed"):
			t.Errorf("warnings %q on a clean level", warningTexts(f))
		// (The sentence may go on to say why, as it does for Ollama.)
		case c.class != "" && (len(ws) == 0 || !strings.HasPrefix(ws[0].Text, failed) || ws[0].Severity != results.SeverityProblem):
			t.Errorf("warnings %q, want first the problem %q", warningTexts(f), failed)
		}
	})
}

// A huge line under the limit is just a big chunk: the request succeeds.
func TestHugeLineUnderTheLimitSucceeds(t *testing.T) {
	t.Parallel()
	shape := matrixCell{conc: 1, requests: 2, faulted: []int{0}}
	plan := faultPlan(shape, 30*time.Second)
	first := prompt.MeasuredRequest(0, plan.Requests, 0, 0)
	_, url := startSim(t, sim.Config{
		TokenInterval: time.Millisecond, PrefillRate: 1e6, HugeLineBytes: 2 << 20,
		Faults: func(n int64) sim.Fault {
			if n == first {
				return sim.FaultHugeLine
			}
			return sim.FaultNone
		},
	})
	f, err := Run(context.Background(), plan, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	mustValid(t, f)
	if m := f.Runs[0].Metrics; m.RequestsOK != 2 || m.RequestsError != 0 {
		t.Errorf("ok %d errors %d (%v), want 2 0", m.RequestsOK, m.RequestsError, f.Local.Levels[0].Errors)
	}
}

// --- Servers that misbehave in ways the simulator does not -------------

var requestNumberRE = regexp.MustCompile(`Request (\d+):`)

// measuredOnly serves the simulator, except that measured requests (those
// numbered from first on) go to bad instead; so the check, the probe and
// calibration pass and the misbehaviour lands inside a level.
func measuredOnly(t *testing.T, first int64, bad http.HandlerFunc) string {
	t.Helper()
	s := sim.New(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if m := requestNumberRE.FindSubmatch(body); m != nil {
				if n, _ := strconv.ParseInt(string(m[1]), 10, 64); n >= first {
					bad(w, r)
					return
				}
			}
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		s.Close()
	})
	return ts.URL
}

func sseHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush()
}

const textChunk = `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" hi"},"finish_reason":null}]}` + "\n\n"

// closeConn drops the connection without an answer.
func closeConn(w http.ResponseWriter, _ *http.Request) {
	c, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	c.Close()
}

// TestMisbehavingServersInsideALevel puts each misbehaviour on every
// measured request: each gets one class, the run goes on to a valid file.
func TestMisbehavingServersInsideALevel(t *testing.T) {
	t.Parallel()
	plan := faultPlan(matrixCell{conc: 2, requests: 4}, 1500*time.Millisecond)
	first := prompt.MeasuredRequest(plan.Warmup, plan.Requests, 0, 0)
	tests := []struct {
		name  string
		bad   http.HandlerFunc
		class string // "" means every request succeeds
	}{
		{"closes every connection", closeConn, ClassConnection},
		{"200 with a JSON body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":8,"total_tokens":48}}`)
		}, ClassMalformedStream},
		{"200 with an HTML page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>Welcome to nginx!</body></html>\n")
		}, ClassMalformedStream},
		{"buffers the whole stream", func(w http.ResponseWriter, r *http.Request) {
			// A proxy that collects the stream and sends it in one piece,
			// with a length, after the last token.
			var b bytes.Buffer
			for range 8 {
				time.Sleep(time.Millisecond)
				b.WriteString(textChunk)
			}
			b.WriteString(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\ndata: [DONE]\n\n")
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
			w.Write(b.Bytes())
		}, ""},
		{"streams forever", func(w http.ResponseWriter, r *http.Request) {
			sseHeaders(w)
			rc := http.NewResponseController(w)
			for r.Context().Err() == nil {
				if _, err := io.WriteString(w, textChunk); err != nil {
					return
				}
				rc.Flush()
				time.Sleep(2 * time.Millisecond)
			}
		}, ClassTimeout},
		{"sends nothing after the headers", func(w http.ResponseWriter, r *http.Request) {
			sseHeaders(w)
			<-r.Context().Done()
		}, ClassTimeout},
		{"sends no headers at all", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, ClassTimeout},
		{"trickles one byte at a time", func(w http.ResponseWriter, r *http.Request) {
			// Slowloris: bytes keep coming, a line never ends.
			sseHeaders(w)
			rc := http.NewResponseController(w)
			io.WriteString(w, "data: ")
			for r.Context().Err() == nil {
				if _, err := io.WriteString(w, "x"); err != nil {
					return
				}
				rc.Flush()
				time.Sleep(5 * time.Millisecond)
			}
		}, ClassTimeout},
		{"answers 200 with an empty body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
		}, ClassEndedEarly},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := measuredOnly(t, first, tc.bad)
			var recs []RequestRecord
			f, err := Run(context.Background(), plan, setup.Endpoint{URL: url}, Observer{Requests: func(_ int, r []RequestRecord) { recs = r }})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			mustValid(t, f)
			for _, r := range recs {
				if r.Class != tc.class {
					t.Errorf("request %d: class %q, want %q", r.N, r.Class, tc.class)
				}
			}
			m := f.Runs[0].Metrics
			lv := f.Local.Levels[0]
			switch tc.class {
			case "":
				if m.RequestsOK != 4 || len(lv.Errors) != 0 {
					t.Errorf("ok %d errors %v, want 4 and none", m.RequestsOK, lv.Errors)
				}
			case ClassTimeout:
				if m.RequestsTimeout != 4 || m.RequestsOK != 0 || m.RequestsError != 0 || lv.Errors[ClassTimeout] != 4 {
					t.Errorf("ok/err/timeout %d/%d/%d, errors %v", m.RequestsOK, m.RequestsError, m.RequestsTimeout, lv.Errors)
				}
			default:
				if m.RequestsError != 4 || m.RequestsOK != 0 || lv.Errors[tc.class] != 4 || len(lv.Errors) != 1 {
					t.Errorf("ok/err/timeout %d/%d/%d, errors %v", m.RequestsOK, m.RequestsError, m.RequestsTimeout, lv.Errors)
				}
			}
			if want := fmt.Sprintf("all 4 requests failed at concurrency 2 (%s: 4): the level has no figures", results.ClassName(tc.class)); tc.class != "" && !slices.Contains(warningTexts(f), want) {
				t.Errorf("warnings %q should say every request failed, and how", warningTexts(f))
			}
			t.Logf("messages: %v", lv.Messages)
		})
	}
}

// TestMisbehavingServersStopTheCheck: when the server misbehaves from the
// very first request, the run stops at the check or the probe with one
// sentence that says what is wrong, and no file.
func TestMisbehavingServersStopTheCheck(t *testing.T) {
	t.Parallel()
	tcpClose := func(t *testing.T) string { return "http://" + closingServer(t) }
	handler := func(h http.HandlerFunc) func(t *testing.T) string {
		return func(t *testing.T) string {
			ts := httptest.NewServer(h)
			t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
			return ts.URL
		}
	}
	models := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"me"}]}`)
	}
	tests := []struct {
		name  string
		start func(t *testing.T) string
		kind  ErrorKind // 0: a *StageError
		want  []string
	}{
		{"accepts and closes every connection", tcpClose, ErrUnreachable, []string{"closed the connection without answering", "https://"}},
		{"closes every HTTP connection", handler(closeConn), ErrUnreachable, []string{"closed the connection without answering"}},
		{"non-SSE chat answer", handler(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/models") {
				models(w)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)
		}), 0, []string{"probing", "application/json, not an event stream", "stream: true"}},
		{"chat connection closed", handler(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/models") {
				models(w)
				return
			}
			closeConn(w, r)
		}), 0, []string{"probing", "the streaming chat request failed", "closed a new connection without answering", "answered at this address before"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := tc.start(t)
			plan := faultPlan(matrixCell{conc: 1, requests: 1}, 5*time.Second)
			f, err := Run(context.Background(), plan, setup.Endpoint{URL: url, Timeout: 5 * time.Second}, Observer{})
			if f != nil || err == nil {
				t.Fatalf("file %v err %v: want no file and an error", f != nil, err)
			}
			var ee *EndpointError
			var se *StageError
			switch {
			case tc.kind != 0 && (!errors.As(err, &ee) || ee.Kind != tc.kind):
				t.Errorf("err %T %v, want an EndpointError of kind %d", err, err, tc.kind)
			case tc.kind == 0 && !errors.As(err, &se):
				t.Errorf("err %T %v, want a StageError", err, err)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Count(msg, "\n") > 0 {
				t.Errorf("error is more than one line: %q", msg)
			}
			t.Logf("error: %s", msg)
		})
	}
}

// TestHugeModelList: a 50 MiB /v1/models is refused with a sentence, and
// the client stops reading well before the end of it.
func TestHugeModelList(t *testing.T) {
	// Not parallel: it measures this process's allocations.
	const total = 50 << 20
	var written atomic.Int64
	done := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			select {
			case done <- struct{}{}:
			default:
			}
		}()
		w.Header().Set("Content-Type", "application/json")
		bw := bufio.NewWriterSize(w, 64<<10)
		n, _ := io.WriteString(bw, `{"object":"list","data":[`)
		written.Add(int64(n))
		entry := []byte(`{"id":"model-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx","object":"model","owned_by":"me"},`)
		for written.Load() < total {
			n, err := bw.Write(entry)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
		bw.WriteString(`{"id":"last"}]}`)
		bw.Flush()
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := listModelsAt(context.Background(), setup.Endpoint{URL: ts.URL})
	runtime.ReadMemStats(&after)
	var ee *EndpointError
	if !errors.As(err, &ee) || ee.Kind != ErrNotOpenAI || !strings.Contains(ee.Msg, "more than 8 MiB") || !strings.Contains(ee.Msg, "not a model list") {
		t.Fatalf("err = %v, want a refusal of the oversized list", err)
	}
	// The client reads at most 8 MiB; reading all 50 would allocate well
	// over 100 MiB. (The count includes the in-process server's own.)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("reading the list allocated %d MiB; it should stop near the 8 MiB limit", alloc>>20)
	}
	// The server finds the connection gone long before its 50 MiB are out.
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the server is still writing: the client did not hang up")
	}
	if w := written.Load(); w >= total/2 {
		t.Errorf("the server wrote all %d MiB: the client read the whole list", w>>20)
	}
	t.Logf("server wrote %.1f MiB before the client hung up; client allocated %.1f MiB",
		float64(written.Load())/(1<<20), float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))

	// The same through Run: a clear sentence, no file.
	f, err := Run(context.Background(), faultPlan(matrixCell{conc: 1, requests: 1}, time.Minute), setup.Endpoint{URL: ts.URL}, Observer{})
	if f != nil || !errors.As(err, &ee) || ee.Kind != ErrNotOpenAI {
		t.Errorf("Run: file %v err %v", f != nil, err)
	}
}

// A results file of a run where every request failed still validates and
// keeps its level.
func TestEveryRequestFailsStillValid(t *testing.T) {
	t.Parallel()
	plan := faultPlan(matrixCell{conc: 32, requests: 32}, 30*time.Second)
	_, url := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6,
		Faults: func(n int64) sim.Fault {
			if n >= prompt.MeasuredRequest(0, 32, 0, 0) {
				return sim.Fault503
			}
			return sim.FaultNone
		}})
	f, err := Run(context.Background(), plan, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	mustValid(t, f)
	m := f.Runs[0].Metrics
	if m.RequestsOK != 0 || m.RequestsError != 32 || m.TTFTMs != nil && m.TTFTMs.N != 0 || m.OutputTokensMean != nil {
		t.Errorf("metrics %+v", m)
	}
	if lv := f.Local.Levels[0]; lv.Errors["http_503"] != 32 || len(lv.Messages["http_503"]) != 1 {
		t.Errorf("level %+v", lv)
	}
}
