package hw

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/kovara/desktop/internal/clip"
	"github.com/kovara/desktop/internal/shellwords"
)

// waitDelay bounds how long Wait may block on the child's output pipes
// after it was told to stop.
const waitDelay = 2 * time.Second

// shell runs programs on this machine or, when sshDest is set, on another
// one through the system ssh.
type shell struct {
	sshDest string // "user@host" or "host"; "" = this machine
	sshPort string
	host    string // label without the user
}

func (sh shell) remote() bool { return sh.sshDest != "" }

// where names the machine for sentences: "this machine" or the host.
func (sh shell) where() string {
	if sh.remote() {
		return sh.host
	}
	return "this machine"
}

// command builds the process for prog args…, wired so that cancelling ctx
// kills its whole process group.
func (sh shell) command(ctx context.Context, prog string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if sh.remote() {
		a := []string{"-o", "BatchMode=yes", "-o", "ConnectTimeout=5"}
		if sh.sshPort != "" {
			a = append(a, "-p", sh.sshPort)
		}
		a = append(a, sh.sshDest, remoteCommand(prog, args))
		cmd = exec.CommandContext(ctx, "ssh", a...)
	} else {
		cmd = exec.CommandContext(ctx, prog, args...)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
	}
	prepare(cmd)
	return cmd
}

// remoteCommand joins a program and its arguments into the one string ssh
// hands to the remote shell, quoting what the shell would interpret.
func remoteCommand(prog string, args []string) string {
	return shellwords.Join(append([]string{prog}, args...))
}

// run runs prog once with a timeout and returns its standard output
// (at most limit bytes). Errors are sentences.
func (sh shell) run(ctx context.Context, timeout time.Duration, limit int, prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := sh.command(ctx, prog, args...)
	out := &capWriter{limit: limit}
	errOut := &capWriter{limit: 4096}
	cmd.Stdout, cmd.Stderr = out, errOut
	err := cmd.Run()
	killGroup(cmd)
	if err == nil && out.over {
		return nil, fmt.Errorf("%s on %s printed more than %d KiB", prog, sh.where(), limit>>10)
	}
	if err == nil {
		return out.Bytes(), nil
	}
	if ctx.Err() == context.DeadlineExceeded {
		return nil, &runError{msg: fmt.Sprintf("%s on %s did not answer within %s", prog, sh.where(), seconds(timeout)), err: ctx.Err()}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, sh.explain(prog, err, out.String(), errOut.String())
}

// runError is a failure in words, keeping the underlying error for errors.Is.
type runError struct {
	msg  string
	err  error
	code int // exit code when the program ran and failed; 0 otherwise
}

func (e *runError) Error() string { return e.msg }
func (e *runError) Unwrap() error { return e.err }

// explain turns a failed start or exit of prog into one sentence. stdout
// matters: nvidia-smi prints its own failures there.
func (sh shell) explain(prog string, err error, stdout, stderr string) error {
	where := sh.where()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return &runError{msg: fmt.Sprintf("%s on %s ended on its own", prog, where)}
	case errors.Is(err, exec.ErrNotFound) && sh.remote():
		return &runError{msg: "the ssh program was not found on this machine; install OpenSSH or choose another GPU source", err: err}
	case errors.Is(err, exec.ErrNotFound):
		return &runError{msg: fmt.Sprintf("%s was not found on this machine", prog), err: err}
	case errors.As(err, &ee):
		code := ee.ExitCode()
		if sh.remote() && code == 255 {
			reason := lastLine(stderr) // ssh's fatal message comes after its warnings
			if reason == "" {
				reason = "no reason given"
			}
			return &runError{msg: fmt.Sprintf("ssh could not connect to %s (%s)", where, reason), err: err, code: code}
		}
		detail := firstLine(stdout)
		if detail == "" {
			detail = firstLine(stderr)
		}
		if sh.remote() && code == 127 {
			return &runError{msg: fmt.Sprintf("%s is not installed on %s (or not on the PATH that ssh commands get there)", prog, where), err: err, code: code}
		}
		if code < 0 {
			return &runError{msg: fmt.Sprintf("%s on %s was killed (%s)", prog, where, ee.ProcessState.String()), err: err}
		}
		msg := fmt.Sprintf("%s on %s exited with code %d", prog, where, code)
		if detail != "" {
			msg += " (" + detail + ")"
		}
		return &runError{msg: msg, err: err, code: code}
	default:
		return &runError{msg: fmt.Sprintf("%s on %s could not be started: %s", prog, where, clip.Line(err.Error(), 160)), err: err}
	}
}

// firstLine is the first non-blank line of s, cleaned for a sentence.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = clip.Line(l, 160); l != "" {
			return l
		}
	}
	return ""
}

// lastLine is the last non-blank line of s, cleaned for a sentence.
func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := clip.Line(lines[i], 160); l != "" {
			return l
		}
	}
	return ""
}

// seconds formats a duration for sentences: "10 s", "0.5 s".
func seconds(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", d.Seconds()), "0"), ".") + " s"
}

// capWriter keeps the first limit bytes written to it and notes whether
// more came.
type capWriter struct {
	mu    sync.Mutex
	limit int
	buf   bytes.Buffer
	over  bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	room := w.limit - w.buf.Len()
	if room < len(p) {
		w.over = true
		if room > 0 {
			w.buf.Write(p[:room])
		}
		return len(p), nil
	}
	w.buf.Write(p)
	return len(p), nil
}

func (w *capWriter) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

func (w *capWriter) String() string { return string(w.Bytes()) }

// lineWriter hands each complete line written to it to line, as soon as it
// arrives. A line longer than max is not a line of ours: tooLong is called
// once and everything after it is dropped. Only exec's copying goroutine
// writes to it.
type lineWriter struct {
	max     int
	line    func(string)
	tooLong func()
	buf     []byte
	dead    bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && !w.dead {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if len(w.buf)+len(chunk) > w.max {
			w.dead, w.buf = true, nil
			w.tooLong()
			break
		}
		if i < 0 {
			w.buf = append(w.buf, chunk...)
			break
		}
		if len(w.buf) > 0 {
			w.buf = append(w.buf, chunk...)
			w.line(string(w.buf))
			w.buf = w.buf[:0]
		} else {
			w.line(string(chunk))
		}
		p = p[i+1:]
	}
	return n, nil
}
