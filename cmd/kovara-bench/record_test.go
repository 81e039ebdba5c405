package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/trace"
	"github.com/kovara/desktop/internal/serverproc/serverproctest"
	"github.com/kovara/desktop/internal/shellwords"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// kovara-bench record killed outright (SIGKILL) in the middle of an
// answer: the client's stream ends (an error, not a hang), and the trace
// reads back with every request that had ended before the kill.
func TestRecordKilledMidStream(t *testing.T) {
	cfg := fast()
	cfg.TokenInterval, cfg.Models = 20*time.Millisecond, []string{"m"}
	cfg.Personality = sim.VLLM
	up := startSim(t, cfg)
	port := serverproctest.FreePort(t)
	path := filepath.Join(t.TempDir(), "t.jsonl")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), cliArgsEnv+"="+shellwords.Join([]string{"record", "--upstream", up, "--listen", "127.0.0.1:" + port, "-o", path}))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "Recording: point your clients at http://127.0.0.1:"+port) {
		t.Fatalf("the recorder said %q, %v", line, err)
	}
	base := "http://127.0.0.1:" + port
	body := func(max int) io.Reader {
		b, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "max_tokens": max,
			"messages": []map[string]string{{"role": "user", "content": "tell me a long story"}}})
		return bytes.NewReader(b)
	}
	for range 3 { // whole answers before the kill
		resp, err := http.Post(base+"/v1/chat/completions", "application/json", body(4))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", body(2000)) // 40 s of answer
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, br)
		ended <- err
	}()
	select {
	case err := <-ended:
		if err == nil {
			t.Error("the stream ended as if whole, not cut")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the client's stream hangs after the recorder was killed")
	}
	resp.Body.Close()
	cmd.Wait()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reqs, _, err := trace.Read(f, 0)
	if err != nil || len(reqs) != 3 {
		t.Fatalf("the trace after the kill: %d requests, %v; want the 3 that ended", len(reqs), err)
	}
	if s := storage.SummariseTrace(path); s.Requests != 3 || s.Err != nil || s.Models[0] != "m" {
		t.Errorf("summary %+v", s)
	}
}

// record's bad input is said, and nothing listens.
func TestRecordBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"record"}, "--upstream is the server to record"},
		{[]string{"record", "--upstream", "127.0.0.1:8080"}, "should be the server's address"},
		{[]string{"record", "--upstream", "http://127.0.0.1:8080", "extra"}, "unexpected argument \"extra"},
		{[]string{"record", "--upstream", "http://127.0.0.1:8080", "--listen", "nonsense"}, "could not listen on nonsense"},
	} {
		code, _, stderr := runCLI(append(c.args, "-o", filepath.Join(t.TempDir(), "t.jsonl"))...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, %q; want %q", c.args, code, stderr, c.want)
		}
	}
}

// writeTrace writes reqs as a trace at path.
func writeTrace(t *testing.T, path string, reqs []trace.Request) {
	t.Helper()
	w, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range reqs {
		if err := w.Add(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// A trace replayed by the rate plan: every request with an answer sent,
// the result says how it matched the recording, and its report never
// names the trace's path; --speed without --trace is refused.
func TestRunReplaysATrace(t *testing.T) {
	cfg := fast()
	cfg.Models = []string{"m"}
	url := startSim(t, cfg)
	dir := t.TempDir()
	path := filepath.Join(dir, "my-secret-day.jsonl")
	var reqs []trace.Request
	for i := range 6 {
		reqs = append(reqs, trace.Request{Timestamp: int64(i * 50), InputLength: 300 + 40*i, OutputLength: 8, HashIDs: []int64{int64(100 + i)}, API: trace.APIChat, Stream: true})
	}
	writeTrace(t, path, append(reqs, trace.Request{Timestamp: 400, InputLength: 50, OutputLength: 0, Error: "the server answered 500"}))
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := runCLI("run", "--plan", "rate", "--endpoint", url, "--trace", path, "--speed", "2", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "The replay sent 6 of the trace's 7 requests (kovara-bench) at their recorded times divided by 2") ||
		!strings.Contains(stdout, "1 the recording had no answer to were not sent") || !strings.Contains(stdout, "Prompt tokens:") {
		t.Errorf("the result does not say how the replay matched:\n%s", stdout)
	}
	code, md, stderr := runCLI("report", out)
	if code != exitOK || strings.Contains(md, "my-secret-day") || !strings.Contains(md, "The replay sent") {
		t.Errorf("report exit %d, %s:\n%s", code, stderr, md)
	}
	for _, format := range []string{"html", "csv", "jsonl"} {
		code, text, stderr := runCLI("report", out, "--format", format)
		if code != exitOK || strings.Contains(text, "my-secret-day") {
			t.Errorf("report --format %s: exit %d, %s; names the trace's path: %v", format, code, stderr, strings.Contains(text, "my-secret-day"))
		}
	}
	if code, _, stderr := runCLI("run", "--plan", "rate", "--endpoint", url, "--speed", "2"); code != exitBadInput || !strings.Contains(stderr, "apply to --trace") {
		t.Errorf("--speed alone: exit %d, %q", code, stderr)
	}
}

// Compare settings replaying a trace: each turn the trace's replay,
// saved in the library labelled with its setting and round; the verdict
// said in the replay; the comparison's report never names the trace's
// path; the Kovara plan's level flags are refused beside --trace.
func TestTuneReplaysATrace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "my-secret-day.jsonl")
	var reqs []trace.Request
	for i := range 8 {
		reqs = append(reqs, trace.Request{Timestamp: int64(i * 100), InputLength: 200, OutputLength: 16, HashIDs: []int64{int64(100 + i)}, API: trace.APIChat, Stream: true})
	}
	writeTrace(t, path, reqs)
	out := filepath.Join(dir, "tune.json")
	code, stdout, stderr := runCLI("demo", "--plan", "tune", "--trace", path, "--speed", "2", "--rounds", "2", "--no-answers", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "each setting replays the trace my-secret-day.jsonl at its recorded times, 2 times faster") {
		t.Errorf("what it sends is not said:\n%s", stderr)
	}
	// Whether q8 is called slower in two rounds depends on the machine:
	// the verdict's first words and the table's level hold on any.
	first, _, _ := strings.Cut(stdout, "\n")
	if !strings.HasPrefix(first, "q8 ") || !regexp.MustCompile(`(?m)^replay +output tok/s +q8 `).MatchString(stdout) {
		t.Errorf("first line %q, want the verdict on q8; the table's rows at the replay:\n%s", first, stdout)
	}
	lib, err := openLibrary()
	if err != nil {
		t.Fatal(err)
	}
	list, err := lib.List()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	d, err := plans.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	runs := d.(plans.Tune).Result.Runs
	for _, r := range runs {
		i := slices.IndexFunc(list, func(s storage.Summary) bool { return s.ID == r.RunID })
		if i < 0 || list[i].Plan != results.PlanRate || !strings.HasSuffix(list[i].Label, "(settings comparison)") {
			t.Errorf("run %q of the comparison: not a labelled replay in the library", r.RunID)
		}
	}
	if len(runs) != 4 {
		t.Errorf("%d runs, want 4 (2 settings × 2 rounds)", len(runs))
	}
	for _, format := range []string{"md", "html", "csv"} {
		code, text, stderr := runCLI("report", out, "--format", format)
		if code != exitOK || strings.Contains(text, "my-secret-day") {
			t.Errorf("report --format %s: exit %d, %s; names the trace's path: %v", format, code, stderr, strings.Contains(text, "my-secret-day"))
		}
	}
	if code, _, stderr := runCLI("demo", "--plan", "tune", "--trace", path, "--concurrency", "1,8"); code != exitBadInput || !strings.Contains(stderr, "--concurrency with --trace") {
		t.Errorf("--concurrency with --trace: exit %d, %q", code, stderr)
	}
}
