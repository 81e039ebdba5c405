//go:build unix

package serverproc

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kovara/desktop/internal/serverproc/serverproctest"
	"github.com/kovara/desktop/internal/shellwords"
)

// The test binary is also the stand-in server, its child, and an app that
// starts one and is then killed (standIn, below).
const (
	standInEnv = "KOVARA_TEST_STANDIN" // serve:PORT, fail, silent, sleep
	appEnv     = "KOVARA_TEST_APP"     // PORT: start a stand-in, then wait to be killed
	appSSHEnv  = "KOVARA_TEST_APP_SSH" // the fake app starts its stand-in through ssh to this host
)

func TestMain(m *testing.M) {
	Supervise()
	if mode := os.Getenv(standInEnv); mode != "" {
		standIn(mode)
		return
	}
	if port := os.Getenv(appEnv); port != "" {
		fakeApp(port)
		return
	}
	os.Exit(m.Run())
}

// standIn plays a server: "serve:PORT" starts a child of its own that
// ignores SIGTERM (as a server's worker might), says both pids, and
// answers /v1/models; "fail" writes a loader's error and exits 1;
// "silent" never listens.
func standIn(mode string) {
	switch {
	case strings.HasPrefix(mode, "serve:"):
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), standInEnv+"=sleep")
		if err := child.Start(); err != nil {
			fmt.Println("cannot start child:", err)
			os.Exit(3)
		}
		fmt.Printf("standin pid %d child %d\n", os.Getpid(), child.Process.Pid)
		http.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"data":[{"id":"m"}]}`) })
		fmt.Println(http.ListenAndServe("127.0.0.1:"+strings.TrimPrefix(mode, "serve:"), nil))
		os.Exit(1)
	case mode == "fail":
		fmt.Println("loading model 'q4.gguf'")
		fmt.Fprintln(os.Stderr, "CUDA error: out of memory")
		os.Exit(1)
	case mode == "sleep":
		signal.Ignore(syscall.SIGTERM)
		fallthrough
	default: // silent
		time.Sleep(time.Hour)
	}
}

// fakeApp starts a stand-in as the app would and says its pids.
func fakeApp(port string) {
	spec := standInSpec("serve:" + port)
	spec.SSH = os.Getenv(appSSHEnv)
	s, err := Start(context.Background(), spec, Options{URL: "http://127.0.0.1:" + port, Grace: time.Second})
	if err != nil {
		fmt.Println("start:", err)
		os.Exit(1)
	}
	// The server's output reaches the log a moment after it answers.
	for range 600 {
		for _, l := range s.Log() {
			if strings.HasPrefix(l, "standin pid") {
				fmt.Println(l)
				time.Sleep(time.Hour)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Println("the stand-in never said its pids")
	os.Exit(1)
}

func standInSpec(mode string) Spec {
	return Spec{Command: shellwords.Join([]string{os.Args[0]}), Env: []string{standInEnv + "=" + mode}}
}

// pids reads the stand-in's "standin pid P child C" line from log, which
// the server's output reaches a moment after it answers.
func pids(t *testing.T, log func() []string) (int, int) {
	t.Helper()
	for range 600 {
		for _, l := range log() {
			var p, c int
			if _, err := fmt.Sscanf(l, "standin pid %d child %d", &p, &c); err == nil {
				return p, c
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the stand-in never said its pids: %q", log())
	return 0, 0
}

// alive says whether pid is a live process (a zombie is not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err)
	}
	// pid (comm) S …: the state follows the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// gone waits, up to a bound no healthy machine comes near, for pids to end.
func gone(t *testing.T, how string, pids ...int) {
	t.Helper()
	for range 200 {
		left := 0
		for _, p := range pids {
			if alive(p) {
				left++
			}
		}
		if left == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range pids {
		if alive(p) {
			t.Errorf("%s: process %d is still running", how, p)
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// TestStartAndStop: a started server answers, and Stop ends it and the
// child it started, even one that ignores SIGTERM.
func TestStartAndStop(t *testing.T) {
	port := serverproctest.FreePort(t)
	s, err := Start(context.Background(), standInSpec("serve:"+port), Options{URL: "http://127.0.0.1:" + port + "/v1", Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p, c := pids(t, s.Log)
	if !alive(p) || !alive(c) {
		t.Fatalf("the stand-in %d and its child %d should run", p, c)
	}
	resp, err := http.Get("http://127.0.0.1:" + port + "/v1/models")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the started server does not answer: %v", err)
	}
	resp.Body.Close()
	s.Stop()
	gone(t, "after Stop", p, c)
	select {
	case <-s.Exited():
	default:
		t.Error("Stop returned before the supervisor ended")
	}
}

// TestAppKilled: kill -9 of the app leaves no server running: the
// supervisor hears of it and ends the server's group.
func TestAppKilled(t *testing.T) {
	port := serverproctest.FreePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	app := exec.CommandContext(ctx, os.Args[0]) // killed at the latest by the timeout
	app.Env = append(os.Environ(), appEnv+"="+port)
	out, _ := app.StdoutPipe()
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	p, c := pids(t, func() []string { return []string{strings.TrimSpace(line)} })
	app.Process.Signal(syscall.SIGKILL)
	app.Wait()
	gone(t, "after kill -9 of the app", p, c)
}

// TestServerEnvironment: a setting's environment reaches the server and
// not the supervisor (a PATH meant for the server must not change it).
func TestServerEnvironment(t *testing.T) {
	port := serverproctest.FreePort(t)
	spec := standInSpec("serve:" + port)
	spec.Env = append(spec.Env, "KOVARA_TEST_MARK=for the server")
	s, err := Start(context.Background(), spec, Options{URL: "http://127.0.0.1:" + port, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	p, _ := pids(t, s.Log)
	env := func(pid int) []string {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		return strings.Split(string(b), "\x00")
	}
	if !slices.Contains(env(p), "KOVARA_TEST_MARK=for the server") {
		t.Error("the server did not get its environment")
	}
	sup := env(s.cmd.Process.Pid)
	if slices.Contains(sup, "KOVARA_TEST_MARK=for the server") || !slices.ContainsFunc(sup, func(kv string) bool { return strings.HasPrefix(kv, supervisorEnv+"=") }) {
		t.Error("the supervisor got the server's environment as its own")
	}
}

// TestServerExitsBeforeReady: a server that exits while loading fails
// its start with its own last lines.
func TestServerExitsBeforeReady(t *testing.T) {
	_, err := Start(context.Background(), standInSpec("fail"), Options{URL: "http://127.0.0.1:" + serverproctest.FreePort(t)})
	if err == nil || !strings.Contains(err.Error(), "the server exited before it answered (exit status 1)") || !strings.Contains(err.Error(), "CUDA error: out of memory") {
		t.Errorf("err = %v", err)
	}
}

// TestServerNeverReady: a server that never answers is stopped at the
// start-up timeout, and the error says so.
func TestServerNeverReady(t *testing.T) {
	port := serverproctest.FreePort(t)
	_, err := Start(context.Background(), standInSpec("silent"), Options{URL: "http://127.0.0.1:" + port, StartTimeout: time.Second, Grace: time.Second})
	if err == nil || !strings.Contains(err.Error(), "did not answer http://127.0.0.1:"+port+"/v1/models within 1s") || !strings.Contains(err.Error(), "it wrote nothing") {
		t.Errorf("err = %v", err)
	}
}

// TestPortInUse: where something already answers, nothing is started.
func TestPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	_, err = Start(context.Background(), Spec{Command: "/nonexistent/server"}, Options{URL: "http://" + addr})
	if err == nil || !strings.Contains(err.Error(), "something is already listening on "+addr) {
		t.Errorf("err = %v", err)
	}
}

func TestSpecWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec Spec
		want string
		err  string
	}{
		{Spec{Command: "llama-server -m '/m/a b.gguf' -np 8"}, "llama-server -m '/m/a b.gguf' -np 8", ""},
		{Spec{Command: "ollama serve", Env: []string{"OLLAMA_NUM_PARALLEL=4"}, SSH: "me@gpu-box"},
			"ssh -tt -o BatchMode=yes -o ConnectTimeout=10 -o LogLevel=ERROR me@gpu-box 'exec env OLLAMA_NUM_PARALLEL=4 ollama serve'", ""},
		{Spec{Command: "llama-server", SSH: "gpu-box"}, "ssh -tt -o BatchMode=yes -o ConnectTimeout=10 -o LogLevel=ERROR gpu-box 'exec llama-server'", ""},
		{Spec{Command: "llama-server > log"}, "", "the server's command"},
		{Spec{Command: "x", Env: []string{"A B=1"}}, "", "not NAME=VALUE"},
		{Spec{Command: "OLLAMA_NUM_PARALLEL=4 ollama serve"}, "", "put NAME=VALUE in the setting's environment"},
		{Spec{Command: "x", SSH: "-oProxyCommand=evil"}, "", "ssh would misread"},
		{Spec{Command: "ssh -p 2222 me@gpu-box llama-server -np 8"},
			"ssh -tt -o BatchMode=yes -o ConnectTimeout=10 -o LogLevel=ERROR -p 2222 me@gpu-box llama-server -np 8", ""},
		{Spec{Command: "/usr/bin/ssh gpu-box ollama serve", Env: []string{"OLLAMA_NUM_PARALLEL=4"}}, "", "would reach ssh on this machine"},
	}
	for _, tt := range tests {
		got, err := tt.spec.words(true)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%+v: %q %v, want an error saying %s", tt.spec, got, err, tt.err)
			}
			continue
		}
		if err != nil || shellwords.Join(got) != tt.want {
			t.Errorf("%+v: %s %v, want %s", tt.spec, shellwords.Join(got), err, tt.want)
		}
	}
}
