//go:build linux

// Command readfloor measures the least CPU a streaming client can spend
// per output token on a given server and load, so that kovara-bench's cost
// can be held against a floor and not only against another client
// (docs/performance.md, "The floor").
//
// It does nothing a client could leave out: one OS thread waits on one
// epoll set over every open stream, makes one read a readiness, counts the
// content deltas in what it read and closes the stream at [DONE] or end of
// file. No HTTP or JSON parsing, no timestamps, no Go netpoller, no
// goroutine wakeup per chunk. Like kovara-bench it reads every chunk as
// soon as it arrives, so what it costs is what waking once a chunk costs
// on this machine.
//
//	go run ./scripts/readfloor --url http://127.0.0.1:8080 --concurrency 8 --requests 64
//
// It prints the requests done and failed, content tokens, reads, reads
// that found more than one token waiting, the process's CPU (getrusage)
// per token and its voluntary context switches per token.
//
// --read-late D sleeps D after each wakeup before waiting again: fewer
// wakeups, each finding more chunks, which shows what reading late would
// save. kovara-bench does not do it: a read that finds two chunks of one
// stream has one kernel timestamp for both (read-together counts them).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// idleLimit ends a stream that has sent nothing for this long.
const idleLimit = 60 * time.Second

var (
	contentKey = []byte(`"content":"`)
	doneEvent  = []byte("data: [DONE]")
)

// tailLen is the length of contentKey and one byte less than doneEvent's:
// see feed.
const tailLen = 11

type options struct {
	addr         *unix.SockaddrInet4
	host, model  string
	concurrency  int
	requests     int
	outputTokens int
	inputWords   int
}

type counters struct {
	done, failed, tokens, reads, together, wakeups atomic.Int64
}

func main() {
	u := flag.String("url", "http://127.0.0.1:8080", "server base URL (plain http, IPv4)")
	model := flag.String("model", "tiny", "model id to ask for")
	conc := flag.Int("concurrency", 8, "streams open at once")
	reqs := flag.Int("requests", 64, "requests in all")
	out := flag.Int("output-tokens", 256, "max_tokens of each request (ignore_eos is set)")
	words := flag.Int("input-words", 770, "words in each prompt")
	late := flag.Duration("read-late", 0, "sleep this long after each wakeup before waiting again (what reading late would save; 0: read at once)")
	flag.Parse()
	o := options{model: *model, concurrency: *conc, requests: *reqs, outputTokens: *out, inputWords: *words}
	if err := o.resolve(*u); err != nil {
		fmt.Fprintln(os.Stderr, "readfloor:", err)
		os.Exit(2)
	}
	// The loop blocks in epoll_wait while holding its P, so the workers
	// that connect and send need another one.
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
	var c counters
	l, err := newLoop(&c, *late)
	if err != nil {
		fmt.Fprintln(os.Stderr, "readfloor:", err)
		os.Exit(1)
	}
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range o.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := next.Add(1); n <= int64(o.requests); n = next.Add(1) {
				if err := l.stream(&o, int(n)); err != nil {
					c.failed.Add(1)
					fmt.Fprintln(os.Stderr, "readfloor: request", n, err)
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "readfloor: getrusage:", err)
		os.Exit(1)
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	tok := c.tokens.Load()
	fmt.Printf("requests %d failed %d tokens %d reads %d read-together %d wakeups %d wall %.1fs user %.2fs sys %.2fs\n",
		c.done.Load(), c.failed.Load(), tok, c.reads.Load(), c.together.Load(), c.wakeups.Load(),
		wall.Seconds(), float64(ru.Utime.Nano())/1e9, float64(ru.Stime.Nano())/1e9)
	if tok > 0 {
		fmt.Printf("cpu per token %.1f µs, voluntary context switches per token %.2f\n",
			float64(cpu.Nanoseconds())/1e3/float64(tok), float64(ru.Nvcsw)/float64(tok))
	}
	// A run with failures did less work than asked: its cost is not
	// comparable with another client's.
	if c.failed.Load() > 0 {
		os.Exit(1)
	}
}

func (o *options) resolve(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return fmt.Errorf("the url %q is not a plain http URL", raw)
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	ta, err := net.ResolveTCPAddr("tcp4", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return fmt.Errorf("resolving %s: %w", u.Host, err)
	}
	sa := &unix.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To4())
	o.addr, o.host = sa, u.Host
	return nil
}

func (o *options) request(n int) []byte {
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"Request %d: %s"}],"max_tokens":%d,"temperature":0,"stream":true,"ignore_eos":true}`,
		o.model, n, strings.Repeat("word ", o.inputWords), o.outputTokens)
	return fmt.Appendf(nil, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", o.host, len(body), body)
}

// stream is one request's connection while the loop reads it.
type stream struct {
	fd      int
	started bool      // the status line was checked
	tail    []byte    // the last bytes of the previous read, for keys split across reads
	last    time.Time // the last read, for idleLimit
	err     error
	done    chan struct{}
}

type loop struct {
	ep      int
	c       *counters
	scratch []byte        // the loop's: a stream's tail joined to its read
	late    time.Duration // the read-late flag
	mu      sync.Mutex    // guards open: workers add, the loop reads and removes
	// open is looked up once a readiness; the lock is uncontended apart
	// from a request's start and end.
	open map[int]*stream
}

func newLoop(c *counters, late time.Duration) (*loop, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	l := &loop{ep: ep, c: c, late: late, open: map[int]*stream{}}
	go l.run()
	return l, nil
}

// stream connects, sends request n and waits until the loop has read the
// whole answer.
func (l *loop) stream(o *options, n int) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	s := &stream{fd: fd, done: make(chan struct{})}
	if err := l.open1(o, n, s); err != nil {
		unix.Close(fd)
		return err
	}
	<-s.done
	if s.err != nil {
		return s.err
	}
	l.c.done.Add(1)
	return nil
}

// open1 connects s, sends request n and hands s to the loop, which closes
// it from then on.
func (l *loop) open1(o *options, n int, s *stream) error {
	// SO_SNDTIMEO bounds both the blocking connect and the blocking send.
	tv := unix.NsecToTimeval(int64(10 * time.Second))
	if err := unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		return fmt.Errorf("setting the send timeout: %w", err)
	}
	if err := unix.Connect(s.fd, o.addr); err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	for req := o.request(n); len(req) > 0; {
		k, err := unix.Write(s.fd, req)
		if err != nil {
			return fmt.Errorf("sending: %w", err)
		}
		req = req[k:]
	}
	if err := unix.SetNonblock(s.fd, true); err != nil {
		return fmt.Errorf("setting non-blocking: %w", err)
	}
	s.last = time.Now()
	l.mu.Lock()
	l.open[s.fd] = s
	l.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(s.fd)}
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, s.fd, &ev); err != nil {
		l.mu.Lock()
		delete(l.open, s.fd)
		l.mu.Unlock()
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

// run is the one reading thread. Its system calls are raw: the Go
// runtime's bookkeeping around a system call (entersyscall, sysmon
// handing the P away) is a cost the floor should not include.
func (l *loop) run() {
	runtime.LockOSThread()
	evs := make([]unix.EpollEvent, 256)
	buf := make([]byte, 64<<10)
	late := unix.NsecToTimespec(int64(l.late))
	for {
		if l.late > 0 {
			// Raw, like the rest: time.Sleep on a locked thread would hand
			// the goroutine through the scheduler.
			unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&late)), 0, 0)
		}
		r, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.ep),
			uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 1000, 0, 0)
		if errno == unix.EINTR {
			runtime.Gosched()
			continue
		}
		if errno != 0 {
			fmt.Fprintln(os.Stderr, "readfloor: epoll_pwait:", errno)
			os.Exit(1)
		}
		if r == 0 {
			l.expire()
			continue
		}
		l.c.wakeups.Add(1)
		for _, ev := range evs[:r] {
			l.mu.Lock()
			s := l.open[int(ev.Fd)]
			l.mu.Unlock()
			if s != nil {
				l.read(s, buf)
			}
		}
	}
}

// read makes the one read a readiness gets.
func (l *loop) read(s *stream, buf []byte) {
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(s.fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	switch {
	case errno == unix.EAGAIN:
		return
	case errno != 0:
		l.finish(s, fmt.Errorf("reading: %w", errno))
		return
	case n == 0:
		if !s.started {
			l.finish(s, errors.New("the server closed the connection before answering"))
			return
		}
		l.finish(s, nil)
		return
	}
	l.c.reads.Add(1)
	s.last = time.Now()
	d := buf[:n]
	if !s.started {
		s.started = true
		if !bytes.HasPrefix(d, []byte("HTTP/1.1 200")) && !bytes.HasPrefix(d, []byte("HTTP/1.0 200")) {
			line, _, _ := bytes.Cut(d, []byte("\r\n"))
			l.finish(s, fmt.Errorf("the server answered %q", line))
			return
		}
	}
	work, k, done := s.feed(l.scratch, d)
	l.scratch = work
	l.c.tokens.Add(int64(k))
	if k > 1 {
		l.c.together.Add(1)
	}
	if done {
		l.finish(s, nil)
	}
}

// feed counts the content deltas in one read and says whether the read
// held the end of the stream. A key split across two reads is whole in
// the previous read's tail followed by this read; a content key counts
// only with a byte after it, so one that fills the whole tail was not
// counted before. work is scratch grown to hold the tail and the read.
func (s *stream) feed(scratch, d []byte) (work []byte, tokens int, done bool) {
	work = append(append(scratch[:0], s.tail...), d...)
	tokens = countContent(work)
	done = bytes.Contains(work, doneEvent)
	s.tail = append(s.tail[:0], work[len(work)-min(len(work), tailLen):]...)
	return work, tokens, done
}

// countContent counts content deltas that carry text: "content":"x…, not
// the empty or null content of a role chunk.
func countContent(b []byte) int {
	n := 0
	for {
		i := bytes.Index(b, contentKey)
		if i < 0 {
			return n
		}
		b = b[i+len(contentKey):]
		if len(b) > 0 && b[0] != '"' {
			n++
		}
	}
}

// expire ends streams that have been silent past idleLimit.
func (l *loop) expire() {
	l.mu.Lock()
	var stale []*stream
	for _, s := range l.open {
		if time.Since(s.last) > idleLimit {
			stale = append(stale, s)
		}
	}
	l.mu.Unlock()
	for _, s := range stale {
		l.finish(s, fmt.Errorf("nothing arrived for %s", idleLimit))
	}
}

func (l *loop) finish(s *stream, err error) {
	// Deleting before closing keeps a reused fd number from meeting an old
	// registration.
	_ = unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, s.fd, nil)
	l.mu.Lock()
	delete(l.open, s.fd)
	l.mu.Unlock()
	unix.Close(s.fd)
	s.err = err
	close(s.done)
}
