package stream

import (
	"bytes"
	"errors"
	"io"
	"time"
)

// DefaultMaxLine is the line limit NewReader uses when given 0: 16 MiB.
const DefaultMaxLine = 16 << 20

// ErrLineTooLong reports a line, or the joined data of one event, longer
// than the reader's limit.
var ErrLineTooLong = errors.New("stream: sse line longer than the limit")

const (
	// initialBuf is the read buffer a fresh Reader starts with; it grows
	// (doubling, capped at the line limit) only while one line is longer.
	initialBuf = 32 << 10
	// keepOnReset is the largest buffer Reset keeps. A buffer grown for a
	// freak long line is dropped so an idle slot does not pin megabytes.
	keepOnReset = 1 << 20
	// maxEmptyReads is how many (0, nil) reads in a row are tolerated
	// before the source is declared stuck.
	maxEmptyReads = 100
)

var (
	utf8BOM = []byte{0xEF, 0xBB, 0xBF}
	doneMsg = []byte("[DONE]")

	errBadRead = errors.New("stream: source returned an invalid byte count")
)

// Reader reads Server-Sent Events. It is not safe for concurrent use.
type Reader struct {
	src     io.Reader
	clock   func() time.Duration
	maxLine int

	buf  []byte // buf[pos:end] is unread input
	pos  int
	end  int
	scan int // buf[pos:scan] is known to hold no CR or LF

	// skipLF is set when a line ended at a CR that was the last byte
	// available: an LF arriving next belongs to that CR and is dropped.
	skipLF  bool
	bomDone bool

	// The line most recently found by peekLine, not yet consumed.
	nextPos  int
	nextSkip bool

	readAt time.Duration // clock value after the latest Read with bytes
	rerr   error         // error returned by the source (io.EOF included)

	data    []byte        // pending or current event data
	typ     []byte        // pending or current event type
	hasData bool          // a data field has been seen for the pending event
	at      time.Duration // time of the pending event's last data line
	// first and last index data's non-space bytes (first is -1 while
	// there are none), kept up to date as lines are appended so that
	// checking whether the data is a whole message costs O(1).
	first, last int

	err  error // final error reported by Err
	done bool  // no more events
}

// NewReader reads Server-Sent Events from r. clock returns a monotonic
// offset (for example time.Since(runStart)); the reader calls it right
// after every Read that returned bytes, so an event's At is the time its
// bytes came off the socket, not the time Next was called. A nil clock
// leaves every At at zero. maxLine bounds any single line and the joined
// data of one event; 0 means DefaultMaxLine.
func NewReader(r io.Reader, clock func() time.Duration, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	size := initialBuf
	if size > maxLine+1 {
		size = maxLine + 1
	}
	rd := &Reader{clock: clock, maxLine: maxLine, buf: make([]byte, size)}
	rd.Reset(r)
	return rd
}

// Reset points the reader at a new source, keeping its buffers (unless a
// long line grew them past 1 MiB) and its clock and limit.
func (r *Reader) Reset(src io.Reader) {
	if len(r.buf) > keepOnReset {
		size := initialBuf
		if size > r.maxLine+1 {
			size = r.maxLine + 1
		}
		r.buf = make([]byte, size)
	}
	if cap(r.data) > keepOnReset {
		r.data = nil
	}
	if cap(r.typ) > keepOnReset {
		r.typ = nil
	}
	r.src = src
	r.pos, r.end, r.scan = 0, 0, 0
	r.skipLF, r.bomDone = false, false
	r.nextPos, r.nextSkip = 0, false
	r.readAt, r.rerr = 0, nil
	r.clearEvent()
	r.err, r.done = nil, false
}

// Data returns the current event's data: its data lines joined with '\n'.
// The slice is only valid until the next call to Next or Reset.
func (r *Reader) Data() []byte { return r.data }

// EventType returns the current event's `event:` field, empty when the
// event had none. Valid until the next call to Next or Reset.
func (r *Reader) EventType() []byte { return r.typ }

// At returns the clock value taken after the Read that delivered the end of
// the current event's last data line.
func (r *Reader) At() time.Duration { return r.at }

// Err returns nil after a clean end of input, ErrLineTooLong when a line or
// an event's joined data went over the limit, and otherwise the error
// returned by the source (io.ErrNoProgress when it kept returning nothing).
func (r *Reader) Err() error { return r.err }

// Next advances to the next event that carries data and reports whether
// there was one. An event ends at a blank line; it also ends, for servers
// that leave out blank lines, when a new data or event line arrives while
// the pending data already forms a whole message (`[DONE]` or a JSON
// object), and at the end of input. "[DONE]" comes back as an ordinary
// event.
func (r *Reader) Next() bool {
	r.clearEvent()
	if r.done {
		return false
	}
	for {
		line, ok := r.peekLine()
		if !ok {
			return r.finish()
		}
		if len(line) == 0 {
			r.consume()
			if len(r.data) > 0 {
				return true
			}
			// An event without data is not dispatched (SSE rules); its
			// type goes with it.
			r.clearEvent()
			continue
		}
		if line[0] == ':' {
			r.consume()
			continue
		}
		name, value := line, line[len(line):]
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(name) {
		case "data", "error":
			if r.pendingComplete() {
				// Leave this line unread: it starts the next event.
				return true
			}
			r.consume()
			if name[0] == 'e' {
				// llama.cpp (b4748) sends a failure inside a stream as a
				// field of its own, "error: {...}", where others send an
				// error event's data: taken as an event of type "error".
				r.typ = append(r.typ[:0], "error"...)
			}
			extra := len(value)
			if r.hasData {
				extra++
			}
			if len(r.data)+extra > r.maxLine {
				r.fail(ErrLineTooLong)
				return false
			}
			if r.hasData {
				r.data = append(r.data, '\n')
			}
			r.appendData(value)
			r.hasData = true
			r.at = r.readAt
		case "event":
			if r.pendingComplete() {
				return true
			}
			r.consume()
			r.typ = append(r.typ[:0], value...)
		default:
			// id, retry and unknown fields do not matter to a benchmark.
			r.consume()
		}
	}
}

func (r *Reader) clearEvent() {
	r.data, r.typ, r.hasData, r.at = r.data[:0], r.typ[:0], false, 0
	r.first, r.last = -1, -1
}

// appendData adds one data line's value and updates first and last. Each
// byte is looked at no more than twice over the life of an event.
func (r *Reader) appendData(value []byte) {
	off := len(r.data)
	r.data = append(r.data, value...)
	if r.first < 0 {
		for i, c := range value {
			if !isSpace(c) {
				r.first = off + i
				break
			}
		}
	}
	for i := len(value) - 1; i >= 0; i-- {
		if !isSpace(value[i]) {
			r.last = off + i
			break
		}
	}
}

func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// pendingComplete reports whether the pending data, ignoring surrounding
// white space, is already a whole message ("[DONE]" or {...}), so that a
// following data or event line must start a new event.
func (r *Reader) pendingComplete() bool {
	if r.first < 0 {
		return false
	}
	d := r.data[r.first : r.last+1]
	return d[0] == '{' && d[len(d)-1] == '}' || bytes.Equal(d, doneMsg)
}

// finish runs when no further line can be had: it hands out the pending
// event, if there is one worth handing out, and records the final error.
func (r *Reader) finish() bool {
	r.done = true
	if r.err == nil && r.rerr != nil && r.rerr != io.EOF {
		r.err = r.rerr
	}
	if len(r.data) == 0 {
		return false
	}
	// At a clean end all pending data is delivered; after an error only
	// data that is already a whole message, since the rest was cut short.
	return r.err == nil || r.pendingComplete()
}

func (r *Reader) fail(err error) {
	r.err = err
	r.done = true
}

// consume moves past the line most recently returned by peekLine.
func (r *Reader) consume() {
	r.pos, r.scan, r.skipLF = r.nextPos, r.nextPos, r.nextSkip
}

// peekLine returns the next complete line without its terminator, reading
// from the source as needed, and remembers where the line ends so that
// consume can move past it. Calling it again without consume returns the
// same line. At a clean end of input an unterminated last line counts as a
// line. It returns false at the end of input, on a read error and on an
// over-long line (setting r.err for the last).
func (r *Reader) peekLine() ([]byte, bool) {
	for {
		if r.skipLF && r.pos < r.end {
			if r.buf[r.pos] == '\n' {
				r.pos++
				if r.scan < r.pos {
					r.scan = r.pos
				}
			}
			r.skipLF = false
		}
		if !r.bomDone {
			avail := r.buf[r.pos:r.end]
			if len(avail) < len(utf8BOM) && r.rerr == nil && bytes.HasPrefix(utf8BOM, avail) {
				r.fill()
				continue
			}
			if bytes.HasPrefix(avail, utf8BOM) {
				r.pos += len(utf8BOM)
				r.scan = r.pos
			}
			r.bomDone = true
		}
		if r.scan < r.end {
			seg := r.buf[r.scan:r.end]
			lf := bytes.IndexByte(seg, '\n')
			head := seg
			if lf >= 0 {
				head = seg[:lf]
			}
			if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
				e := r.scan + cr
				r.nextPos, r.nextSkip = e+1, false
				switch {
				case e+1 == r.end:
					r.nextSkip = true // the LF, if any, has not arrived yet
				case r.buf[e+1] == '\n':
					r.nextPos = e + 2
				}
				return r.line(e)
			}
			if lf >= 0 {
				e := r.scan + lf
				r.nextPos, r.nextSkip = e+1, false
				return r.line(e)
			}
			r.scan = r.end
		}
		if r.end-r.pos > r.maxLine {
			r.fail(ErrLineTooLong)
			return nil, false
		}
		if r.rerr != nil {
			if r.rerr == io.EOF && r.pos < r.end {
				r.nextPos, r.nextSkip = r.end, false
				return r.buf[r.pos:r.end], true
			}
			return nil, false
		}
		r.fill()
	}
}

// line returns buf[pos:e] after checking it against the limit.
func (r *Reader) line(e int) ([]byte, bool) {
	if e-r.pos > r.maxLine {
		r.fail(ErrLineTooLong)
		return nil, false
	}
	return r.buf[r.pos:e], true
}

// fill makes room in buf and performs one Read that returns bytes or an
// error. It is only called when buf[pos:end] holds no complete line, so
// every line end found afterwards came from this Read, and readAt is the
// right time stamp for all of them.
func (r *Reader) fill() {
	switch {
	case r.pos == r.end:
		r.pos, r.end, r.scan = 0, 0, 0
	case r.pos > 0 && (r.end == len(r.buf) || r.pos >= len(r.buf)/2):
		n := copy(r.buf, r.buf[r.pos:r.end])
		r.scan -= r.pos
		r.pos, r.end = 0, n
	}
	if r.end == len(r.buf) {
		// One partial line fills the buffer. peekLine has checked that it
		// is within the limit, so the buffer is below maxLine+1 and may
		// grow, never past maxLine+1.
		// Doubling stops one step early: rather than grow to the limit
		// and then again by one byte, jump straight to maxLine+1.
		size := 2 * len(r.buf)
		if size >= r.maxLine {
			size = r.maxLine + 1
		}
		nb := make([]byte, size)
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for range maxEmptyReads {
		n, err := r.src.Read(r.buf[r.end:])
		if n < 0 || n > len(r.buf)-r.end {
			r.rerr = errBadRead
			return
		}
		if n > 0 {
			r.end += n
			if r.clock != nil {
				r.readAt = r.clock()
			}
		}
		if err != nil {
			r.rerr = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.rerr = io.ErrNoProgress
}
