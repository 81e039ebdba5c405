package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/trace"
	"github.com/kovara/desktop/internal/serverproc"
	"github.com/kovara/desktop/internal/serverproc/serverproctest"
	"github.com/kovara/desktop/internal/shellwords"
)

// The settings comparison's tests start servers: this test binary again,
// as a simulator (tuneSimEnv) or as one that cannot load its model, under
// serverproc's supervisor (Supervise).
const (
	tuneSimEnv = "KOVARA_TEST_TUNE_SIM" // [log:FILE|]ADDR[,pidfile]: serve a fast simulator (ADDR "flags": on its --port), first printing FILE as its start-up log (then as llama.cpp); "broken": fail to load
)

func TestMain(m *testing.M) {
	serverproc.Supervise()
	if mode := os.Getenv(tuneSimEnv); mode != "" {
		tuneStandIn(mode)
		return
	}
	os.Exit(m.Run())
}

func tuneStandIn(mode string) {
	if mode == "broken" {
		fmt.Println("llama_model_load: loading model from '/models/missing.gguf'")
		fmt.Fprintln(os.Stderr, "gguf_init_from_file: failed to open GGUF file '/models/missing.gguf' (No such file or directory)")
		os.Exit(1)
	}
	cfg := fastSim()
	if rest, ok := strings.CutPrefix(mode, "log:"); ok {
		// A llama-server's start-up: its log, then it answers.
		file, m, _ := strings.Cut(rest, "|")
		b, err := os.ReadFile(file)
		if err != nil {
			fmt.Println("cannot read the log:", err)
			os.Exit(1)
		}
		os.Stdout.Write(b)
		mode, cfg.Personality = m, sim.LlamaCpp
	}
	addr, pidfile, _ := strings.Cut(mode, ",")
	if addr == "flags" {
		// Where its command line says, as llama-server listens.
		addr = "127.0.0.1:" + flagValue(os.Args[1:], "--port")
	}
	if pidfile != "" {
		_ = os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	cfg.Models = []string{"m"}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	srv, _, err := sim.Start(cfg, addr)
	if err != nil {
		fmt.Println("cannot listen:", err)
		os.Exit(1)
	}
	fmt.Println("simulator up on", addr)
	<-ctx.Done()
	srv.Close()
}

func tinyTunePlan() setup.KovaraPlan {
	p := smallPlan()
	p.Concurrency, p.Requests, p.InputTokens, p.OutputTokens, p.Warmup = []int{1, 2}, 4, 32, 8, 1
	return p
}

// tuneLog collects what a comparison said, safely from its goroutines.
type tuneLog struct {
	mu     sync.Mutex
	status []TuneStatus
	saved  []*results.File
}

func (l *tuneLog) observer() TuneObserver {
	return TuneObserver{
		Observer: Observer{Live: NewLive()},
		Status: func(s TuneStatus) {
			l.mu.Lock()
			l.status = append(l.status, s)
			l.mu.Unlock()
		},
		Saved: func(f *results.File) string {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.saved = append(l.saved, f)
			return fmt.Sprintf("run-%d", len(l.saved))
		},
	}
}

func TestTuneModelsInterleaved(t *testing.T) {
	t.Parallel()
	cfg := fastSim()
	cfg.Models = []string{"q4", "q8"}
	_, url := startSim(t, cfg)
	var log tuneLog
	plan := setup.TunePlan{
		Settings: []setup.TuneSetting{{Name: "q4", How: setup.ByModel, Model: "q4"}, {Name: "q8", How: setup.ByModel, Model: "q8"}},
		Rounds:   3, Inner: tinyTunePlan(),
	}
	res, err := RunTune(context.Background(), plan, setup.Endpoint{URL: url}, log.observer())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Problems()) > 0 {
		t.Fatalf("complete %v, problems %q", res.Complete, res.Problems())
	}
	// The rounds take turns: q4 q8, q8 q4, q4 q8.
	var got []string
	for _, r := range res.Runs {
		got = append(got, fmt.Sprintf("%d:%s", r.Round, res.Settings[r.Setting].Name))
	}
	if want := []string{"1:q4", "1:q8", "2:q8", "2:q4", "3:q4", "3:q8"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	// Every run is an ordinary run, saved, labelled with its setting and
	// round, with a fresh seed and the setting's model.
	if len(log.saved) != 6 {
		t.Fatalf("%d runs saved, want 6", len(log.saved))
	}
	seeds := map[int64]bool{}
	for i, f := range log.saved {
		r := res.Runs[i]
		if f.Local.Tune == nil || f.Local.Tune.Setting != res.Settings[r.Setting].Name || f.Local.Tune.Round != r.Round || f.Local.Tune.Rounds != 3 {
			t.Errorf("run %d's place: %+v, want %s round %d of 3", i, f.Local.Tune, res.Settings[r.Setting].Name, r.Round)
		}
		if f.Local.RequestedModel != res.Settings[r.Setting].Model && f.Runs[0].ModelID != res.Settings[r.Setting].Model {
			t.Errorf("run %d asked for %q, want %q", i, f.Local.RequestedModel, res.Settings[r.Setting].Model)
		}
		if r.RunID != fmt.Sprintf("run-%d", i+1) || !f.Local.FreshSeed {
			t.Errorf("run %d: id %q, fresh seed %v", i, r.RunID, f.Local.FreshSeed)
		}
		seeds[f.Runs[0].Seed] = true
		mustValid(t, f)
	}
	if len(seeds) != 6 {
		t.Errorf("%d seeds among 6 runs: each run needs fresh prompts", len(seeds))
	}
	// A verdict per level and headline metric, each from three pairs.
	// (ITL p50 is left out: on a loaded machine most of an 8-token
	// answer's chunks can come off the socket together, its median gap
	// is then 0, and a run has no figure to pair.)
	for _, c := range []int{1, 2} {
		for _, id := range []string{"output_throughput", "ttft_p50", "latency_p50"} {
			i := slices.IndexFunc(res.Verdicts, func(v results.TuneVerdict) bool { return v.Concurrency == c && v.Metric == id })
			if i < 0 {
				t.Errorf("no verdict on %s at %d", id, c)
				continue
			}
			if v := res.Verdicts[i]; v.Rounds != 3 || v.Verdict == results.TuneUnknown || v.Base <= 0 || v.Value <= 0 || !(v.Low <= v.Change && v.Change <= v.High) {
				t.Errorf("%s at %d: %+v", id, c, v)
			}
		}
	}
	// Two models answer differently, and the check names every prompt.
	if len(res.Answers) != 1 || res.Answers[0].Prompts != len(SpecDecPrompts) || len(res.Answers[0].Differ) != len(SpecDecPrompts) {
		t.Fatalf("answers: %+v", res.Answers)
	}
	if s := res.AnswersSentence(); !strings.Contains(s, fmt.Sprintf("differ from q4's in %d of %d prompts (code, chat", len(SpecDecPrompts), len(SpecDecPrompts))) {
		t.Errorf("answers sentence: %q", s)
	}
	if len(res.Local.Answers) != 2 || res.Local.Answers[0][0] == "" || res.Local.Answers[0][0] == res.Local.Answers[1][0] {
		t.Errorf("the answers kept: %q", res.Local.Answers)
	}
	if _, err := results.MarshalDocument(res); err != nil {
		t.Fatal(err)
	}
}

func TestTuneSameModelAnswersAlike(t *testing.T) {
	t.Parallel()
	cfg := fastSim()
	cfg.Models = []string{"m"}
	_, url := startSim(t, cfg)
	var log tuneLog
	plan := setup.TunePlan{
		Settings: []setup.TuneSetting{{Name: "A", How: setup.ByModel, Model: "m"}, {Name: "B", How: setup.ByModel, Model: "m"}},
		Rounds:   1, Inner: tinyTunePlan(),
	}
	res, err := RunTune(context.Background(), plan, setup.Endpoint{URL: url}, log.observer())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Answers) != 1 || res.Answers[0].Prompts != len(SpecDecPrompts) || len(res.Answers[0].Differ) != 0 {
		t.Fatalf("answers: %+v", res.Answers)
	}
	if s := res.AnswersSentence(); !strings.Contains(s, "B answers the same as A in all 10 prompts") {
		t.Errorf("answers sentence: %q", s)
	}
	// One round gives no interval: nothing is called, and it says so.
	for _, v := range res.Verdicts {
		if v.Verdict != results.TuneUnknown {
			t.Errorf("%s at %d after one round: %s", v.Metric, v.Concurrency, v.Verdict)
		}
	}
	if h := res.Headline(); !strings.Contains(h, "too few rounds") {
		t.Errorf("headline: %q", h)
	}
}

// TestTuneAnswersTokenByToken: on a llama.cpp server the answers check
// says how far each setting's distribution is from the first's, not only
// whether ten answers read alike: a model of the same weights within the
// floor, one "quantised" beyond it with the ruler's words; a server whose
// chat route cannot be read (it restarts the answer) says why, once.
func TestTuneAnswersTokenByToken(t *testing.T) {
	t.Parallel()
	cfg := fastSim()
	cfg.Personality = sim.LlamaCpp
	cfg.Models = []string{"f16", "copy", "q4"}
	cfg.Answers = sim.Distribution{ModelDrift: map[string]float64{"q4": 0.6}, DriftSeed: 5}
	_, url := startSim(t, cfg)
	var log tuneLog
	plan := setup.TunePlan{
		Settings: []setup.TuneSetting{{Name: "f16", How: setup.ByModel, Model: "f16"}, {Name: "copy", How: setup.ByModel, Model: "copy"}, {Name: "q4", How: setup.ByModel, Model: "q4"}},
		Rounds:   1, Inner: tinyTunePlan(),
	}
	res, err := RunTune(context.Background(), plan, setup.Endpoint{URL: url}, log.observer())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Answers) != 2 || res.Answers[0].Drift == nil || res.Answers[1].Drift == nil {
		t.Fatalf("answers %+v, warnings %q, note %q", res.Answers, res.Warnings, res.DriftNote)
	}
	// Its progress was said as it went, to the last request.
	var last string
	for _, st := range log.status {
		if st.Setting == "q4" && strings.HasPrefix(st.Doing, "comparing the answers token by token") {
			last = st.Doing
		}
	}
	if want := fmt.Sprintf("comparing the answers token by token: %d of %d", tuneDriftPlan.ReadRequests(), tuneDriftPlan.ReadRequests()); last != want {
		t.Errorf("q4's last progress %q, want %q", last, want)
	}
	same, q4 := res.Answers[0].Drift, res.Answers[1].Drift
	if same.KLBeyond || same.SameTopBeyond || same.KLMean != 0 || same.Ruler != "" {
		t.Errorf("the same weights: %+v, want within the floor", same)
	}
	if !q4.KLBeyond || q4.KLMean <= 0 || q4.Ruler == "" || q4.Prompts != setup.AnswerPromptsVersion || q4.Positions == 0 {
		t.Errorf("the drifted model: %+v, want beyond the floor with the ruler's words", q4)
	}
	s := res.AnswersSentence()
	for _, want := range []string{"copy against f16 token by token: same top token 100.0 % (floor 100.0 %), KL divergence 0 nats a token (floor 0): within the floor — ",
		"q4 against f16 token by token: ", ": beyond the floor on "} {
		if !strings.Contains(s, want) {
			t.Errorf("answers sentence %q\nwant %q in it", s, want)
		}
	}

	// A vLLM that answers a final assistant message again: the text
	// check as before, and one sentence of why not token by token.
	_, vurl := startSim(t, func() sim.Config {
		c := fastSim()
		c.Models, c.Answers.ChatRestarts = []string{"a", "b"}, true
		return c
	}())
	plan.Settings = []setup.TuneSetting{{Name: "a", How: setup.ByModel, Model: "a"}, {Name: "b", How: setup.ByModel, Model: "b"}}
	res, err = RunTune(context.Background(), plan, setup.Endpoint{URL: vurl}, log.observer())
	if err != nil {
		t.Fatal(err)
	}
	if s := res.AnswersSentence(); !strings.Contains(s, "Their distributions were not compared token by token: the baseline read again along its code answer: the server does not continue a final assistant message") || res.Answers[0].Drift != nil {
		t.Errorf("vLLM's answers sentence: %q", s)
	}
}

// Settings with commands: each turn starts its server and stops it; one
// whose server cannot load its model fails with the server's own last
// lines, and the others still run; no server is left when it ends.
func TestTuneCommands(t *testing.T) {
	port := serverproctest.FreePort(t)
	url := "http://127.0.0.1:" + port
	dir := t.TempDir()
	self := shellwords.Join([]string{os.Args[0], "-test.run=^$"})
	setting := func(name, mode string) setup.TuneSetting {
		return setup.TuneSetting{Name: name, How: setup.ByCommand, Command: self, Env: []string{tuneSimEnv + "=" + mode}}
	}
	plan := setup.TunePlan{
		Settings: []setup.TuneSetting{
			setting("first", "127.0.0.1:"+port+","+filepath.Join(dir, "first")),
			setting("broken", "broken"),
			setting("again", "127.0.0.1:"+port+","+filepath.Join(dir, "again")),
		},
		Rounds: 2, Inner: tinyTunePlan(), StartTimeout: time.Minute, NoAnswers: true,
	}
	// The plan's model is the one the endpoint's own server named (the
	// app's Model field): a started server that does not serve it is
	// asked for the only model it serves, as two llama-servers of two
	// model files each name theirs by its own path.
	plan.Inner.Model = "/models/what-the-endpoint-served.gguf"
	var log tuneLog
	res, err := RunTune(context.Background(), plan, setup.Endpoint{URL: url}, log.observer())
	if err != nil {
		t.Fatal(err)
	}
	if res.Settings[0].Model != "m" || res.Settings[2].Model != "m" {
		t.Errorf("models asked: %q and %q, want each started server's only one, m", res.Settings[0].Model, res.Settings[2].Model)
	}
	broken := res.Settings[1]
	if !strings.Contains(broken.Failed, "the server exited before it answered") || !strings.Contains(broken.Failed, "failed to open GGUF file '/models/missing.gguf'") {
		t.Errorf("the broken setting failed with %q, want the exit and the server's last line", broken.Failed)
	}
	if res.Settings[0].Rounds != 2 || res.Settings[2].Rounds != 2 || broken.Rounds != 0 {
		t.Errorf("rounds measured: %d, %d, %d; want 2, 0, 2", res.Settings[0].Rounds, broken.Rounds, res.Settings[2].Rounds)
	}
	if len(res.Runs) != 4 || len(log.saved) != 4 {
		t.Errorf("%d runs, %d saved: want the two working settings' four", len(res.Runs), len(log.saved))
	}
	if p := res.Problems(); len(p) != 1 || !strings.HasPrefix(p[0], "setting broken could not be measured: ") {
		t.Errorf("problems %q", p)
	}
	if !strings.Contains(res.Headline(), "broken could not be measured") {
		t.Errorf("headline %q", res.Headline())
	}
	// Each turn started, then stopped, its server.
	var doing []string
	for _, s := range log.status {
		if s.Setting == "first" && s.Round == 1 {
			doing = append(doing, s.Doing)
		}
	}
	if want := []string{"starting the server", "measuring", "stopping the server"}; !slices.Equal(doing, want) {
		t.Errorf("first setting's first turn: %q, want %q", doing, want)
	}
	for _, name := range []string{"first", "again"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(string(b))
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s's server (pid %d) is still there after the comparison: %v", name, pid, err)
		}
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
		c.Close()
		t.Errorf("something still answers on the servers' port")
	}
}

// A setting changed by hand waits for the person, then for the server.
func TestTuneByHand(t *testing.T) {
	t.Parallel()
	cfg := fastSim()
	cfg.Models = []string{"m"}
	_, url := startSim(t, cfg)
	var log tuneLog
	obs := log.observer()
	var asked []string
	obs.Pause = func(_ context.Context, s setup.TuneSetting) error {
		asked = append(asked, s.Instruction)
		return nil
	}
	plan := setup.TunePlan{
		Settings: []setup.TuneSetting{{Name: "1", How: setup.ByHand, Instruction: "restart Ollama with OLLAMA_NUM_PARALLEL=1"}, {Name: "4", How: setup.ByHand, Instruction: "restart Ollama with OLLAMA_NUM_PARALLEL=4"}},
		Rounds:   2, Inner: tinyTunePlan(), NoAnswers: true,
	}
	plan.Inner.Model = "m"
	res, err := RunTune(context.Background(), plan, setup.Endpoint{URL: url}, obs)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"restart Ollama with OLLAMA_NUM_PARALLEL=1", "restart Ollama with OLLAMA_NUM_PARALLEL=4", "restart Ollama with OLLAMA_NUM_PARALLEL=4", "restart Ollama with OLLAMA_NUM_PARALLEL=1"}; !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
	if len(res.Runs) != 4 || !res.Complete {
		t.Errorf("%d runs, complete %v", len(res.Runs), res.Complete)
	}
	// Without anyone to ask, such a plan is refused before it starts.
	obs.Pause = nil
	var pe *PlanError
	if _, err := RunTune(context.Background(), plan, setup.Endpoint{URL: url}, obs); !errors.As(err, &pe) {
		t.Errorf("no one to ask: %v, want a plan error", err)
	}
}

// A stop mid-comparison returns what was measured, marked incomplete.
func TestTuneStopped(t *testing.T) {
	t.Parallel()
	cfg := fastSim()
	cfg.Models = []string{"m"}
	_, url := startSim(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var log tuneLog
	obs := log.observer()
	saved := obs.Saved
	obs.Saved = func(f *results.File) string {
		defer cancel() // after the first run
		return saved(f)
	}
	plan := setup.TunePlan{
		Settings: []setup.TuneSetting{{Name: "A", How: setup.ByModel, Model: "m"}, {Name: "B", How: setup.ByModel, Model: "m"}},
		Rounds:   3, Inner: tinyTunePlan(), NoAnswers: true,
	}
	res, err := RunTune(ctx, plan, setup.Endpoint{URL: url}, obs)
	if !errors.Is(err, ErrInterrupted) || res == nil || res.Complete || len(res.Runs) != 1 {
		t.Fatalf("err %v, result %+v", err, res)
	}
}

func TestTunePlanRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		plan setup.TunePlan
		want string
	}{
		{"one setting", setup.TunePlan{Settings: []setup.TuneSetting{{Name: "A", How: setup.ByModel, Model: "m"}}}, "takes 2 to 8 settings, not 1"},
		{"same names", setup.TunePlan{Settings: []setup.TuneSetting{{Name: "A", How: setup.ByModel, Model: "m"}, {Name: "A", How: setup.ByModel, Model: "n"}}}, `two settings are called "A"`},
		{"no command", setup.TunePlan{Settings: []setup.TuneSetting{{Name: "A", How: setup.ByCommand}, {Name: "B", How: setup.ByModel, Model: "n"}}}, `setting "A" starts the server but has no command`},
		{"no how", setup.TunePlan{Settings: []setup.TuneSetting{{Name: "A"}, {Name: "B", How: setup.ByModel, Model: "n"}}}, `"" is not a way to reach a setting`},
		{"rounds", setup.TunePlan{Rounds: -1, Settings: []setup.TuneSetting{{Name: "A", How: setup.ByModel, Model: "m"}, {Name: "B", How: setup.ByModel, Model: "n"}}}, "rounds -1 is not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.plan.Inner = tinyTunePlan()
			err := tt.plan.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want it to say %q", err, tt.want)
			}
		})
	}
}

// A setting's command before its turn runs before each of its turns; one
// that fails fails its setting, in its own words, and the others run.
func TestTuneBefore(t *testing.T) {
	t.Parallel()
	cfg := fastSim()
	cfg.Models = []string{"m"}
	_, url := startSim(t, cfg)
	marks := filepath.Join(t.TempDir(), "marks")
	plan := setup.TunePlan{
		Settings: []setup.TuneSetting{
			{Name: "A", How: setup.ByModel, Model: "m", Before: "sh -c " + shellwords.Quote("echo A >> "+marks)},
			{Name: "B", How: setup.ByModel, Model: "m", Before: "sh -c " + shellwords.Quote("echo no power limit here >&2; exit 3")},
		},
		Rounds: 2, Inner: tinyTunePlan(), NoAnswers: true,
	}
	var log tuneLog
	res, err := RunTune(context.Background(), plan, setup.Endpoint{URL: url}, log.observer())
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(marks); string(b) != "A\nA\n" {
		t.Errorf("A's command before its turns ran %q times, want twice", b)
	}
	if f := res.Settings[1].Failed; !strings.Contains(f, "its command before the turn: it failed (exit status 3)") || !strings.Contains(f, "no power limit here") {
		t.Errorf("B failed with %q", f)
	}
	if res.Settings[0].Rounds != 2 || len(res.Runs) != 2 {
		t.Errorf("A measured %d rounds in %d runs", res.Settings[0].Rounds, len(res.Runs))
	}
}

// Two settings that start the server differently, which it reports alike:
// warned about when the server says its slots (llama.cpp), not when it
// says too little to tell (Ollama reports no OLLAMA_NUM_PARALLEL).
func TestTuneSameServers(t *testing.T) {
	t.Parallel()
	llama := results.TuneServer{Family: results.FamilyLlamaCpp, Build: "b4748", Slots: 2, Context: 4096}
	tests := []struct {
		name   string
		server results.TuneServer
		b      string // the second setting's command; the first's is "srv -np 2"
		warned bool
	}{
		{"slots asked for, not reported", llama, "srv -np 8", true},
		{"context asked for, not reported", llama, "srv -np 2 --ctx-size=8192", true},
		{"a flag the server does not report", llama, "srv -np 2 -tb 2", false},
		{"ollama", results.TuneServer{Family: results.FamilyOllama, Build: "0.24.0", Context: 4096}, "srv -np 8", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := tt.server, tt.server
			run := &tuneRun{
				plan: setup.TunePlan{Settings: []setup.TuneSetting{{Name: "A", How: setup.ByCommand, Command: "srv -np 2"}, {Name: "B", How: setup.ByCommand, Command: tt.b}}},
				res:  &results.TuneResult{Settings: []results.TuneSetting{{Name: "A", How: setup.ByCommand, Server: &a}, {Name: "B", How: setup.ByCommand, Server: &b}}},
			}
			run.sameServers()
			if got := len(run.res.Warnings) == 1 && strings.Contains(run.res.Warnings[0], "A and B: the server reported the same configuration in both"); got != tt.warned {
				t.Errorf("warnings %q, want warned %v", run.res.Warnings, tt.warned)
			}
		})
	}
}

// The report of #47: the endpoint at one port, where the person's usual
// server already answers, and settings whose llama-server commands give
// their own --port. The servers are waited for, measured and asked the
// answers where their commands listen, and the sentence said before
// anything starts names that address (the endpoint's answered all along,
// and was refused as "already listening").
func TestTuneCommandListensOnItsPort(t *testing.T) {
	other := fastSim()
	other.Models = []string{"other"}
	_, url := startSim(t, other)
	port := serverproctest.FreePort(t)
	dir := t.TempDir()
	llama := filepath.Join(dir, "llama-server") // this test binary, by that name
	if err := os.Symlink(os.Args[0], llama); err != nil {
		t.Fatal(err)
	}
	setting := func(name, np string) setup.TuneSetting {
		return setup.TuneSetting{Name: name, How: setup.ByCommand, Command: shellwords.Join([]string{llama, "-m", "x.gguf", "-np", np, "--port", port}),
			Env: []string{tuneSimEnv + "=flags," + filepath.Join(dir, name)}}
	}
	plan := setup.TunePlan{Settings: []setup.TuneSetting{setting("np2", "2"), setting("np8", "8")}, Rounds: 1, Inner: tinyTunePlan(), StartTimeout: time.Minute}
	plan.Inner.Model = "m" // the endpoint's server has no such model
	endpoint := strings.TrimPrefix(url, "http://")
	var said []string
	for _, l := range TuneListens(plan.Settings, url) {
		said = append(said, l.Line())
	}
	want := []string{
		"The endpoint is " + endpoint + " but setting np2's command listens on 127.0.0.1:" + port + " (its --port): the runs go to " + port + ".",
		"The endpoint is " + endpoint + " but setting np8's command listens on 127.0.0.1:" + port + " (its --port): the runs go to " + port + ".",
	}
	if !slices.Equal(said, want) {
		t.Errorf("said %q\nwant %q", said, want)
	}
	var log tuneLog
	res, err := RunTune(context.Background(), plan, setup.Endpoint{URL: url}, log.observer())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Settings {
		if s.Failed != "" || s.Rounds != 1 || s.Model != "m" {
			t.Errorf("setting %s: failed %q, %d rounds, model %q; want its own server's m measured once", s.Name, s.Failed, s.Rounds, s.Model)
		}
	}
	if len(log.saved) != 2 {
		t.Fatalf("%d runs saved, want 2", len(log.saved))
	}
	for _, f := range log.saved {
		if got, want := f.Local.Endpoint, "http://127.0.0.1:"+port; got != want || f.Local.RequestedModel != "m" {
			t.Errorf("%s measured %s (model %q), want %s (m)", f.Local.Tune.Setting, got, f.Local.RequestedModel, want)
		}
	}
	// The answers were asked of the setting's own server too.
	if len(res.Answers) != 1 || res.Answers[0].Prompts != len(SpecDecPrompts) || len(res.Answers[0].Differ) != 0 {
		t.Errorf("answers: %+v, warnings %q", res.Answers, res.Warnings)
	}
	// The result keeps the endpoint the person gave.
	if res.Local.Endpoint != url {
		t.Errorf("the comparison's endpoint is %q, want %q", res.Local.Endpoint, url)
	}
}

// Something already answers where the setting's server would listen: the
// start is refused naming that address, the command's own port when it
// gives one, the endpoint's when the command says the same.
func TestTuneCommandPortTaken(t *testing.T) {
	dir := t.TempDir()
	llama := filepath.Join(dir, "llama-server")
	if err := os.Symlink(os.Args[0], llama); err != nil {
		t.Fatal(err)
	}
	_, taken := startSim(t, fastSim())
	takenPort := taken[strings.LastIndexByte(taken, ':')+1:]
	free := "http://127.0.0.1:" + serverproctest.FreePort(t)
	tests := []struct {
		name     string
		endpoint string
		port     string // the command's --port
		want     string
	}{
		{"the command's port", free, takenPort, "something is already listening on 127.0.0.1:" + takenPort + " before the server was started"},
		{"the endpoint's port, the command's too", taken, takenPort, "something is already listening on 127.0.0.1:" + takenPort + " before the server was started"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := setup.TuneSetting{Name: "B", How: setup.ByCommand, Command: shellwords.Join([]string{llama, "--port", tt.port}), Env: []string{tuneSimEnv + "=flags"}}
			plan := setup.TunePlan{Settings: []setup.TuneSetting{{Name: "A", How: setup.ByModel, Model: "x"}, s}, Rounds: 1, Inner: tinyTunePlan(), StartTimeout: 20 * time.Second, NoAnswers: true}
			var log tuneLog
			res, err := RunTune(context.Background(), plan, setup.Endpoint{URL: tt.endpoint}, log.observer())
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Settings[1].Failed; !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q\nwant it to begin %q", got, tt.want)
			}
		})
	}
}

// TestTuneSaysWhereTheModelRan: a started llama-server's start-up log
// says where it put the model (real logs, testdata/serverlogs): one
// setting's partial offload (1 of 35 layers on the GPU) is a problem of
// the comparison and of each of its runs; a CPU build's is said beside
// the setting, no problem.
func TestTuneSaysWhereTheModelRan(t *testing.T) {
	port := serverproctest.FreePort(t)
	url := "http://127.0.0.1:" + port
	self := shellwords.Join([]string{os.Args[0], "-test.run=^$"})
	logs, err := filepath.Abs(filepath.Join("testdata", "serverlogs"))
	if err != nil {
		t.Fatal(err)
	}
	setting := func(name, log string) setup.TuneSetting {
		return setup.TuneSetting{Name: name, How: setup.ByCommand, Command: self, Env: []string{tuneSimEnv + "=log:" + filepath.Join(logs, log) + "|127.0.0.1:" + port}}
	}
	plan := setup.TunePlan{
		Settings: []setup.TuneSetting{setting("cpu", "llamacpp-b4748-cpu.log"), setting("split", "llamacpp-partial-offload.log")},
		Rounds:   2, Inner: tinyTunePlan(), StartTimeout: time.Minute, NoAnswers: true,
	}
	var log tuneLog
	res, err := RunTune(context.Background(), plan, setup.Endpoint{URL: url}, log.observer())
	if err != nil {
		t.Fatal(err)
	}
	cpu, split := res.Settings[0].Server, res.Settings[1].Server
	if cpu == nil || cpu.Placement == nil || !cpu.Placement.NoGPU || !strings.Contains(cpu.Describe(), "no GPU (a CPU build)") {
		t.Errorf("the CPU build: %+v", cpu)
	}
	if split == nil || split.Placement == nil || split.Placement.LayersGPU != 1 || !strings.Contains(split.Describe(), "1 of 35 layers on the GPU") {
		t.Errorf("the split model: %+v", split)
	}
	want := "setting split: llama.cpp ran 34 of this model's 35 layers on the CPU"
	if ps := res.Problems(); !slices.ContainsFunc(ps, func(p string) bool { return strings.HasPrefix(p, want) }) || len(ps) != 1 {
		t.Errorf("problems %q, want only %q…", ps, want)
	}
	for _, f := range log.saved {
		problems, _ := results.Split(results.Warnings(f))
		splitRun := f.Local.Tune.Setting == "split"
		if has := slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, "split model") }); has != splitRun {
			t.Errorf("%s's run: problems %q", f.Local.Tune.Setting, problems)
		}
	}
}

// A settings comparison that replays a trace in each turn in place of
// the Kovara plan's levels: each run is the trace's replay at its
// recorded times, saved as a rate result labelled with its setting and
// round; the verdict is read in the replay (its one level), and a
// setting that decodes slower is slower there beyond noise.
func TestTuneReplaysATrace(t *testing.T) {
	t.Parallel()
	var reqs []trace.Request
	for i := range 12 {
		reqs = append(reqs, trace.Request{Timestamp: int64(i) * 150, InputLength: 200, OutputLength: 24, HashIDs: []int64{int64(100 + i)}, DurationMs: 200})
	}
	path := writeTrace(t, reqs)
	cfg := fastSim()
	cfg.Models = []string{"fast", "slow"}
	cfg.ModelSlowdown = map[string]float64{"slow": 3}
	_, url := startSim(t, cfg)
	inner := tinyTunePlan()
	plan := setup.TunePlan{
		Settings: []setup.TuneSetting{{Name: "fast", How: setup.ByModel, Model: "fast"}, {Name: "slow", How: setup.ByModel, Model: "slow"}},
		Rounds:   3, Inner: inner, NoAnswers: true,
		Replay: &setup.RatePlan{Replay: &setup.Replay{File: path, Speed: 2}, MaxInFlight: 8, MetricsInterval: -1},
	}
	var log tuneLog
	var mu sync.Mutex
	var replays []*results.RateResult
	obs := log.observer()
	obs.SavedReplay = func(r *results.RateResult) string {
		mu.Lock()
		defer mu.Unlock()
		replays = append(replays, r)
		return fmt.Sprintf("replay-%d", len(replays))
	}
	res, err := RunTune(context.Background(), plan, setup.Endpoint{URL: url}, obs)
	if err != nil {
		t.Fatal(err)
	}
	if len(log.saved) != 0 || len(replays) != 6 {
		t.Fatalf("%d Kovara runs and %d replays saved, want none and 6", len(log.saved), len(replays))
	}
	for _, r := range replays {
		if r.Replay == nil || r.Replay.Sent != 12 || r.Local.Tune == nil || r.Local.Tune.Rounds != 3 || r.Local.TraceFile != path {
			t.Errorf("a replay: match %+v, tune %+v, trace %q", r.Replay, r.Local.Tune, r.Local.TraceFile)
		}
	}
	if got := res.Plan; !slices.Equal(got.Concurrency, []int{results.TuneReplayLevel}) || got.Replay == nil || got.Replay.Requests != 12 || got.Replay.Speed != 2 || res.Local.TraceFile != path {
		t.Errorf("plan %+v (replay %+v), trace %q", got, got.Replay, res.Local.TraceFile)
	}
	var latency *results.TuneVerdict
	for i, v := range res.Verdicts {
		if v.Setting == 1 && v.Metric == "latency_p50" && v.Concurrency == results.TuneReplayLevel {
			latency = &res.Verdicts[i]
		}
	}
	// Decoding three times slower lengthens the replay's answers by far
	// more than any machine's noise; whether three rounds call it is
	// the statistic's, held on seeded figures (TestTuneReplayWords).
	if latency == nil || latency.Rounds != 3 || latency.Change < 0.5 {
		t.Fatalf("latency p50 verdict %+v, want a change of over +50 %% over 3 rounds", latency)
	}
	if rows := res.Table().Rows; len(rows) == 0 || rows[0][0] != "replay" {
		t.Errorf("table's first row %q, want the replay's level", rows[0])
	}
}
