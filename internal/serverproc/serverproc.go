// Package serverproc starts an inference server the app was asked to
// start (a setting of the settings comparison), waits until it answers,
// keeps the last lines of its log, and stops it again: on Stop, and when
// the app itself ends, however it ends.
//
// The server never runs as the app's own child. The app starts a small
// supervisor (its own binary again, see Supervise), and the supervisor
// starts the server as the leader of a new process group. On Linux the
// kernel tells the supervisor when the app dies (even by kill -9;
// elsewhere it notices its parent change); the supervisor then stops the
// server's whole group, so a server's own children (Ollama's runners,
// vLLM's workers) go too. Processes are found by their group, never by
// name.
package serverproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kovara/desktop/internal/shellwords"
)

// Spec is how to start one server: its command line as the person wrote
// it, the environment it adds, and where it runs.
type Spec struct {
	Command string   // "llama-server -m /models/q4.gguf -np 8 --port 8081"
	Env     []string // "OLLAMA_NUM_PARALLEL=4"
	// SSH runs it on another machine through the system ssh ("user@host"
	// or "host"), with the person's keys or agent (BatchMode); "" runs it
	// on this one.
	SSH string
}

// Options bound a start.
type Options struct {
	// URL is the server's address once it runs (its OpenAI base, with or
	// without /v1): nothing may answer there before the start, and the
	// server is ready when its model list answers there.
	URL string
	// StartTimeout bounds the wait for the model list; 0 is 5 minutes
	// (a large model loads for minutes).
	StartTimeout time.Duration
	// Grace is how long a stopped server has to exit after SIGTERM before
	// it is killed; 0 is 10 s.
	Grace time.Duration
	// Client asks the server; nil is a client with 2 s per request.
	Client *http.Client
}

const (
	defaultStartTimeout = 5 * time.Minute
	defaultGrace        = 10 * time.Second
	pollEvery           = 250 * time.Millisecond
	logLines            = 200  // lines of the server's output kept
	logLineMax          = 2048 // bytes of one line kept
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// words is the program and arguments the supervisor runs for s: the
// command itself, or ssh with it as the remote command.
// With tty, ssh gives the remote command a terminal (a server's, so that
// it is hung up on when this side stops); a one-off command needs none.
func (s Spec) words(tty bool) ([]string, error) {
	argv, err := shellwords.Split(s.Command)
	if err != nil {
		return nil, fmt.Errorf("the server's command: %w", err)
	}
	if k, _, ok := strings.Cut(argv[0], "="); ok && envName.MatchString(k) {
		return nil, fmt.Errorf("the server's command begins with %q: put NAME=VALUE in the setting's environment, and the program first in its command", argv[0])
	}
	for _, kv := range s.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || !envName.MatchString(k) {
			return nil, fmt.Errorf("the environment entry %q is not NAME=VALUE", kv)
		}
	}
	if s.SSH == "" && filepath.Base(argv[0]) == "ssh" {
		return s.ownSSH(argv, tty)
	}
	if s.SSH == "" {
		return argv, nil
	}
	// Over ssh the environment goes in the remote command (env NAME=VALUE
	// …), and not into the local ssh's (launch is given none).
	if strings.HasPrefix(s.SSH, "-") || strings.ContainsAny(s.SSH, " \t'\"\\;|&$`") {
		return nil, fmt.Errorf("the ssh destination %q has characters ssh would misread: write user@host", s.SSH)
	}
	// exec makes the server the remote shell's own process.
	remote := "exec " + shellwords.Join(argv)
	if len(s.Env) > 0 {
		remote = "exec env " + shellwords.Join(s.Env) + " " + shellwords.Join(argv)
	}
	return append(append([]string{"ssh"}, sshOptions(tty)...), s.SSH, remote), nil
}

// ownSSH is a command that is itself ssh ("ssh gpu-box llama-server …",
// the setting's ssh host written into its command): ssh is given what
// the app gives its own (sshOptions), before the person's options, which
// may override them.
func (s Spec) ownSSH(argv []string, tty bool) ([]string, error) {
	if len(s.Env) > 0 {
		return nil, errors.New("the server's command is ssh, so its environment would reach ssh on this machine and not the server: write it into the remote command (ssh HOST env NAME=VALUE …), or give the setting its ssh host")
	}
	return append(append([]string{argv[0]}, sshOptions(tty)...), argv[1:]...), nil
}

// sshOptions are ssh's options for a server (tty) or a one-off command:
// -tt gives the remote command a terminal, so it is hung up on when this
// side's ssh is stopped; BatchMode, since nobody can answer a password
// prompt; LogLevel=ERROR, since ssh's own notices ("Connection to HOST
// closed." after every remote exit, under a terminal) would otherwise be
// the server's last line, in place of the one that says why it ended.
func sshOptions(tty bool) []string {
	var o []string
	if tty {
		o = append(o, "-tt")
	}
	return append(o, "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "LogLevel=ERROR")
}

// Server is a server the app started.
type Server struct {
	cmd    *exec.Cmd
	grace  time.Duration
	log    *ringLog
	exited chan struct{} // closed once the supervisor has been waited for
	err    error         // its exit, once exited is closed
	once   sync.Once
	// remote is the host:port of a server started through ssh, which
	// Stop waits to see released; "" for one on this machine.
	remote string
}

// Start starts the server of spec and returns once it answers at opt.URL.
// A server that exits first, or does not answer within the start-up
// timeout, is stopped and its error says why, with its last lines.
func Start(ctx context.Context, spec Spec, opt Options) (*Server, error) {
	argv, err := spec.words(true)
	if err != nil {
		return nil, err
	}
	models, err := modelsURL(opt.URL)
	if err != nil {
		return nil, err
	}
	if err := portFree(models); err != nil {
		return nil, err
	}
	if opt.StartTimeout <= 0 {
		opt.StartTimeout = defaultStartTimeout
	}
	if opt.Grace <= 0 {
		opt.Grace = defaultGrace
	}
	client := opt.Client
	if client == nil {
		client = pollClient()
	}
	env := spec.Env
	if spec.SSH != "" {
		env = nil // in the remote command already (words)
	}
	s, err := launch(argv, env, opt.Grace)
	if err != nil {
		return nil, err
	}
	if filepath.Base(argv[0]) == "ssh" { // the setting's ssh host, or ssh in its command
		s.remote = hostPort(models)
	}
	if err := s.awaitReady(ctx, client, models, opt.StartTimeout); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// modelsURL is the model list under base (with or without /v1).
func modelsURL(base string) (string, error) {
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("the server's address %q is not an http:// or https:// URL", base)
	}
	if !strings.HasSuffix(u.Path, "/v1") {
		u.Path += "/v1"
	}
	u.Path += "/models"
	return u.String(), nil
}

// portFree refuses to start a server where something already answers:
// the run would measure that one instead.
func portFree(models string) error {
	host := hostPort(models)
	if !answers(host) {
		return nil
	}
	return fmt.Errorf("something is already listening on %s before the server was started: stop it, or give this setting's server another port (a benchmark would measure the one already there)", host)
}

// hostPort is the host:port a server's URL is reached at.
func hostPort(models string) string {
	u, _ := url.Parse(models)
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	return u.Host
}

// answers says whether something accepts connections at host.
func answers(host string) bool {
	c, err := net.DialTimeout("tcp", host, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// released waits, up to limit, until nothing answers at host: a server
// on another machine ends a moment after ssh hangs up on it, out of this
// machine's sight, and the next server on its port must find it free.
func released(host string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for answers(host) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
}

// awaitReady polls the model list until it answers 200, the server
// exits, the timeout passes or ctx ends.
func (s *Server) awaitReady(ctx context.Context, client *http.Client, models string, timeout time.Duration) error {
	err := await(ctx, client, models, timeout, s.exited)
	switch {
	case errors.Is(err, errExited) && s.remote != "" && exitStatus(s.err) == sshFailed:
		return &StartError{Why: "ssh could not start the server on its machine: it did not connect or was not let in (ssh's exit status 255)", Lines: s.log.lines()}
	case errors.Is(err, errExited):
		return &StartError{Why: fmt.Sprintf("the server exited before it answered (%v)", s.err), Lines: s.log.lines()}
	case errors.Is(err, context.DeadlineExceeded):
		return &StartError{Why: fmt.Sprintf("the server did not answer %s within %v", models, timeout), Lines: s.log.lines()}
	case err != nil:
		return fmt.Errorf("stopped while the server was starting: %w", err)
	}
	return nil
}

// StartError is a server that did not become ready: why, in words, and
// the last lines it wrote (the log holds the rest of the story: "CUDA
// error: out of memory", "failed to open GGUF file").
type StartError struct {
	Why   string
	Lines []string
}

func (e *StartError) Error() string { return e.Why + said(e.Lines) }

// Last is the last line the server wrote, "" when it wrote nothing.
func (e *StartError) Last() string {
	if len(e.Lines) == 0 {
		return ""
	}
	return e.Lines[len(e.Lines)-1]
}

var errExited = errors.New("exited")

// exitStatus is the status an ended process exited with (the
// supervisor's is its server's, or ssh's); -1 when it did not exit.
func exitStatus(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// sshFailed is ssh's exit status when ssh itself failed (no connection,
// not let in, host key refused), as against the remote command's own.
const sshFailed = 255

// await polls models until it answers 200; errExited when exited closes
// first, context.DeadlineExceeded after timeout, ctx's error when it ends.
func await(ctx context.Context, client *http.Client, models string, timeout time.Duration, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, models, nil)
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return errExited
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// withoutOurs is env without this package's own variables.
func withoutOurs(env []string) []string {
	return slices.DeleteFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, supervisorEnv+"=") || strings.HasPrefix(kv, serverEnvVar+"=")
	})
}

// pollClient asks a starting server whether it answers, a connection a
// question: a kept-alive idle one would hold one of a small server's HTTP
// threads (llama-server's -np + 2) for seconds into the run.
func pollClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
}

// AwaitServer waits until a server the person restarts by hand answers
// its model list at url, for at most timeout (0: 5 minutes).
func AwaitServer(ctx context.Context, url string, timeout time.Duration) error {
	models, err := modelsURL(url)
	if err != nil {
		return err
	}
	if timeout <= 0 {
		timeout = defaultStartTimeout
	}
	err = await(ctx, pollClient(), models, timeout, nil)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("the server did not answer %s within %v", models, timeout)
	}
	return err
}

// RunOnce runs a short command of the person's (a setting's "before"
// command: a power limit, a cache drop) on the server's machine, locally
// or through ssh, and waits for it, for at most timeout. Its output's
// last lines come back with its error.
func RunOnce(ctx context.Context, spec Spec, timeout time.Duration) error {
	argv, err := spec.words(false)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if spec.SSH == "" {
		cmd.Env = append(withoutOurs(os.Environ()), spec.Env...)
	}
	out := &ringLog{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 2 * time.Second
	onceAttr(cmd)
	if err := cmd.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("it did not finish within %v%s", timeout, out.said())
		}
		return fmt.Errorf("it failed (%v)%s", err, out.said())
	}
	return nil
}

// Exited is closed once the server has ended, on its own or stopped.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Err is how the server ended, once Exited is closed.
func (s *Server) Err() error {
	<-s.exited
	return s.err
}

// Log is the last lines the server wrote (stdout and stderr together).
func (s *Server) Log() []string { return s.log.lines() }

// Stop stops the server and everything it started: SIGTERM to its process
// group, then SIGKILL after the grace time. It returns once they are gone;
// through ssh, once ssh has hung up and the far side's server no longer
// answers on its port (for at most the grace time and 5 s more).
func (s *Server) Stop() {
	s.once.Do(func() {
		s.terminate()
		select {
		case <-s.exited:
		case <-time.After(s.grace + 5*time.Second):
			s.kill() // the supervisor itself did not answer
			<-s.exited
		}
		if s.remote != "" {
			released(s.remote, s.grace+5*time.Second)
		}
	})
}

// ringLog keeps the last lines written to it.
type ringLog struct {
	mu      sync.Mutex
	buf     []string
	partial []byte
}

func (r *ringLog) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range p {
		if b == '\n' {
			r.add()
			continue
		}
		if len(r.partial) < logLineMax && b != '\r' {
			r.partial = append(r.partial, b)
		}
	}
	return len(p), nil
}

// add ends the current line. Call with mu.
func (r *ringLog) add() {
	r.buf = append(r.buf, string(r.partial))
	r.partial = r.partial[:0]
	if len(r.buf) > logLines {
		r.buf = r.buf[len(r.buf)-logLines:]
	}
}

func (r *ringLog) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.buf...)
	if len(r.partial) > 0 {
		out = append(out, string(r.partial))
	}
	return out
}

// said is the last few lines for a sentence: "; its last lines: …".
func (r *ringLog) said() string { return said(r.lines()) }

// said is "; its last lines:" and up to eight of them, for an error.
func said(ls []string) string {
	if len(ls) == 0 {
		return "; it wrote nothing"
	}
	ls = ls[max(0, len(ls)-8):]
	return "; its last lines:\n" + strings.Join(ls, "\n")
}

// supervisorEnv marks the app's binary started as a server's supervisor
// (its value: the grace time in ms); serverEnvVar carries the server's
// own environment entries (a JSON list) to the server alone.
const (
	supervisorEnv = "KOVARA_SERVER_SUPERVISOR"
	serverEnvVar  = "KOVARA_SERVER_ENV"
)

// Supervise makes this process a server's supervisor when the app started
// it as one, and never returns then. Both binaries call it first thing in
// main (and tests in TestMain); otherwise it returns at once.
func Supervise() {
	if os.Getenv(supervisorEnv) == "" {
		return
	}
	os.Exit(supervise(os.Args[1:]))
}
