// Package promptfile reads a prompts file a person gives (--prompts FILE)
// so a plan can send their own requests instead of synthetic ones.
//
// Two shapes are read, told apart by the file's first non-space byte:
//
//   - JSONL ("jsonl"): one JSON object a line, either
//     {"messages":[{"role":"system"|"user"|"assistant","content":"…"},…]}
//     ending with a user message, or {"prompt":"…"} (one user message).
//     Blank lines are skipped.
//   - ShareGPT ("sharegpt"): a JSON array (first byte '[') of objects with
//     "conversations":[{"from":"human"|"gpt"|"system","value":"…"},…];
//     the optional leading system turn and the first human turn are taken,
//     as vLLM's ShareGPT loader takes the first human turn. Objects with
//     "messages" or "prompt" are read inside the array as well.
//
// Any record may carry "max_tokens": N, the answer's cap for that prompt.
//
// Files can be gigabytes, so nothing holds the file: Scan streams it once
// (its SHA-256, its records checked one by one) and keeps only where each
// good record lies, 16 bytes a record; Sample reads back only the records
// it picks.
package promptfile

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// DefaultMaxRecordBytes is the longest record read when Options leaves
// MaxRecordBytes zero.
const DefaultMaxRecordBytes = 8 << 20

// maxBad is how many refused records an Index names.
const maxBad = 20

// chunk bounds every read from the file, and so what a reader holds
// beyond the record it is on.
const chunk = 64 << 10

// Options say how a prompts file is read.
type Options struct {
	// SkipBad skips malformed records (counted in Index.Skipped) instead of
	// refusing the file at the first one.
	SkipBad bool
	// MaxRecordBytes is the longest record (line or array entry) read;
	// 0 means DefaultMaxRecordBytes.
	MaxRecordBytes int
	// Progress, when given, is kept at how far the scan has read, for
	// whoever shows it while a large file is read.
	Progress *Progress
}

// Progress is how far a scan has read the file: Read of Size bytes, each
// stored by Scan as it goes and read by anyone at any time.
type Progress struct {
	Read, Size atomic.Int64
}

// ErrStopped is Scan's error when its context ended first.
var ErrStopped = errors.New("the prompts file was not read to its end: stopped")

// Message is one message of a prompt's chat.
type Message struct {
	Role    string // "system", "user" or "assistant"
	Content string
}

// Prompt is one record of a prompts file: the chat to send, its last
// message the user's.
type Prompt struct {
	Messages  []Message
	MaxTokens int // the answer's cap for this prompt; 0: the plan's
	Line      int // its line (JSONL) or entry (ShareGPT) number, 1-based
}

// Bad is one refused record.
type Bad struct {
	Line int // line or entry number, 1-based
	Why  string
}

// Index is what Scan learned of a prompts file: enough to pick records
// from it without reading it again.
type Index struct {
	Path    string
	Shape   string // "jsonl" or "sharegpt"
	SHA256  string // hex, of the whole file
	Size    int64
	Lines   int // physical lines (JSONL) or array entries (ShareGPT)
	Records int // usable records
	Skipped int // malformed records skipped (Options.SkipBad)
	Bad     []Bad

	spans []span
}

// span is where one good record lies, in 16 bytes: a million prompts
// index in 16 MB, whatever their length.
type span struct {
	off  int64
	n    uint32
	line uint32
}

// RecordError is a record that made Scan refuse the file.
type RecordError struct {
	Line  int  // line or entry number, 1-based
	Entry bool // an entry of a JSON array rather than a line
	Why   string
}

func (e *RecordError) Error() string {
	if e.Entry {
		return fmt.Sprintf("prompts file entry %d: %s", e.Line, e.Why)
	}
	return fmt.Sprintf("prompts file line %d: %s", e.Line, e.Why)
}

// Scan reads the prompts file at path once and indexes its records; it
// ends early, with ErrStopped, when ctx does.
func Scan(ctx context.Context, path string, opt Options) (*Index, error) {
	limit := opt.MaxRecordBytes
	if limit <= 0 {
		limit = DefaultMaxRecordBytes
	}
	// A record's length is kept in 32 bits.
	limit = min(limit, math.MaxInt32)

	f, st, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("the prompts file %s is not a plain file", path)
	}
	if st.Size() == 0 {
		return nil, fmt.Errorf("the prompts file %s is empty", path)
	}
	if opt.Progress != nil {
		opt.Progress.Size.Store(st.Size())
	}

	s := &scan{
		ix:    &Index{Path: path, Size: st.Size()},
		f:     f,
		h:     &hasher{h: sha256.New(), progress: opt.Progress, ctx: ctx},
		opt:   opt,
		limit: limit,
	}
	first, start, err := s.detect()
	if err != nil {
		return nil, err
	}
	if first == 0 {
		return nil, fmt.Errorf("the prompts file %s has no prompts in it, only blank lines", path)
	}
	if first == '[' {
		s.ix.Shape = "sharegpt"
		err = s.array(start)
	} else {
		s.ix.Shape = "jsonl"
		err = s.lines(start)
	}
	if err != nil {
		return nil, err
	}
	if err := s.h.finish(f, st.Size()); err != nil {
		return nil, fmt.Errorf("read the prompts file: %w", err)
	}
	ix := s.ix
	ix.SHA256 = hex.EncodeToString(s.h.h.Sum(nil))
	if ix.Records == 0 {
		what := "line"
		if ix.Shape == "sharegpt" {
			what = "entry"
		}
		if len(ix.Bad) > 0 {
			return nil, fmt.Errorf("the prompts file %s has no usable prompt: all %d were malformed; the first, %s %d: %s",
				path, ix.Skipped, what, ix.Bad[0].Line, ix.Bad[0].Why)
		}
		return nil, fmt.Errorf("the prompts file %s has no prompts in it", path)
	}
	if cap(ix.spans) > len(ix.spans)+len(ix.spans)/8 {
		// Give back what append's doubling left over: the index lives as
		// long as the run.
		ix.spans = append([]span(nil), ix.spans...)
	}
	return ix, nil
}

type scan struct {
	ix    *Index
	f     *os.File
	h     *hasher
	opt   Options
	limit int
}

// detect finds the first non-space byte (0 if none) and where reading
// starts: after a UTF-8 byte order mark, which some editors write.
func (s *scan) detect() (first byte, start int64, err error) {
	buf := make([]byte, 4096)
	for off := int64(0); ; {
		n, err := s.f.ReadAt(buf, off)
		p := buf[:n]
		if off == 0 && bytes.HasPrefix(p, bom) {
			p, start = p[len(bom):], int64(len(bom))
			s.h.write(0, bom)
		}
		if i := bytes.IndexFunc(p, func(r rune) bool { return !isSpace(r) }); i >= 0 {
			return p[i], start, nil
		}
		off += int64(n)
		if err == io.EOF {
			return 0, start, nil
		}
		if err != nil {
			return 0, 0, fmt.Errorf("read the prompts file: %w", err)
		}
	}
}

var bom = []byte{0xef, 0xbb, 0xbf}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\n' }

// bad records a malformed record: the error that refuses the file, or a
// skipped record with SkipBad.
func (s *scan) bad(line int, entry bool, why string) error {
	if !s.opt.SkipBad {
		return &RecordError{Line: line, Entry: entry, Why: why}
	}
	s.ix.Skipped++
	if len(s.ix.Bad) < maxBad {
		s.ix.Bad = append(s.ix.Bad, Bad{Line: line, Why: why})
	}
	return nil
}

func (s *scan) good(off int64, n int, line int) error {
	if uint64(line) > math.MaxUint32 {
		return fmt.Errorf("the prompts file %s has more than 4 billion lines", s.ix.Path)
	}
	s.ix.spans = append(s.ix.spans, span{off: off, n: uint32(n), line: uint32(line)})
	s.ix.Records++
	return nil
}

// readLine reads one physical line: the record without its line ending,
// the bytes read with the ending (0 at the end of the file), and whether
// it ran past limit, in which case the rest of it is read and dropped.
// The record is only valid until the next call.
func readLine(br *bufio.Reader, long *[]byte, limit int) (rec []byte, n int, tooLong bool, err error) {
	*long = (*long)[:0]
	for {
		p, err := br.ReadSlice('\n')
		n += len(p)
		switch {
		case tooLong:
		case err == nil && len(*long) == 0:
			rec = p // the common case: the whole line in the buffer
		case len(*long)+len(p) > limit+2: // +2: the line ending
			tooLong = true
			*long = (*long)[:0]
		default:
			*long = append(*long, p...)
			rec = *long
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, 0, false, err
		}
		break
	}
	rec = bytes.TrimSuffix(rec, []byte("\n"))
	rec = bytes.TrimSuffix(rec, []byte("\r"))
	if len(rec) > limit {
		tooLong = true
	}
	return rec, n, tooLong, nil
}

// errTooLong stops the JSON decoder at an entry past the limit.
var errTooLong = errors.New("entry too long")

// array reads a JSON array (the ShareGPT shape) from start: json.Decoder
// walks it, each entry decoded on its own. The decoder reads through a
// guard that stops it past an entry's limit, so an over-long entry is
// never held whole.
func (s *scan) array(start int64) error {
	guard := &fileReader{f: s.f, pos: start, h: s.h, end: -1}
	dec := json.NewDecoder(guard)
	base := start // file offset of the decoder's offset 0
	if _, err := dec.Token(); err != nil {
		return s.syntax(1, err)
	}
	for entry := 1; ; entry++ {
		if !dec.More() {
			break
		}
		from := base + dec.InputOffset()
		// The entry, the comma and a little space before it, and one read
		// beyond: what the decoder may read for an entry within the limit.
		guard.end = from + int64(s.limit) + 2*chunk
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, errTooLong) {
			if err := s.bad(entry, true, "longer than "+sizeWords(s.limit)); err != nil {
				return err
			}
			next, more, err := s.skipEntry(from)
			if err != nil {
				return err
			}
			s.ix.Lines = entry
			if !more {
				return s.trailing(&fileReader{f: s.f, pos: next + 1, h: s.h, end: -1})
			}
			// Start again past the entry, as if the array began there.
			guard = &fileReader{f: s.f, pos: next, h: s.h, end: -1}
			dec = json.NewDecoder(io.MultiReader(strings.NewReader("["), guard))
			base = next - 1
			if _, err := dec.Token(); err != nil {
				return s.syntax(entry+1, err)
			}
			continue
		}
		if err != nil {
			return s.syntax(entry, err)
		}
		guard.end = -1
		s.ix.Lines = entry
		end := base + dec.InputOffset()
		if len(raw) > s.limit {
			if err := s.bad(entry, true, "longer than "+sizeWords(s.limit)); err != nil {
				return err
			}
			continue
		}
		if _, why := parseRecord(raw, true); why != "" {
			if err := s.bad(entry, true, why); err != nil {
				return err
			}
			continue
		}
		if err := s.good(end-int64(len(raw)), len(raw), entry); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing ]
		return s.syntax(s.ix.Lines+1, err)
	}
	return s.trailing(io.MultiReader(dec.Buffered(), guard))
}

// trailing checks that only space follows the array's closing bracket;
// r starts just after it.
func (s *scan) trailing(r io.Reader) error {
	_, err := json.NewDecoder(r).Token()
	var se *json.SyntaxError
	switch {
	case err == io.EOF:
		return nil
	case err != nil && !errors.As(err, &se):
		return fmt.Errorf("read the prompts file: %w", err)
	default:
		return fmt.Errorf("the prompts file %s has more after the end of its list of prompts; it should be one JSON list", s.ix.Path)
	}
}

// syntax is the error for JSON the decoder could not read: it cannot find
// the entries after it, so even SkipBad refuses the file.
func (s *scan) syntax(entry int, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		why := "not valid JSON (" + se.Error() + ")"
		if s.opt.SkipBad {
			why += "; the entries after it cannot be found, so the file cannot be read"
		}
		return &RecordError{Line: entry, Entry: true, Why: why}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fmt.Errorf("the prompts file %s ends before its list of prompts does, after entry %d (cut short?)", s.ix.Path, s.ix.Lines)
	}
	return fmt.Errorf("read the prompts file: %w", err)
}

// skipEntry reads past the over-long entry that starts at from (or at the
// comma before it) without holding it, and returns where the next entry's
// reading starts: after the comma that follows, or at the closing bracket
// (more false).
func (s *scan) skipEntry(from int64) (next int64, more bool, err error) {
	r := &byteReader{br: bufio.NewReaderSize(&fileReader{f: s.f, pos: from, h: s.h, end: -1}, chunk), pos: from}
	c, err := r.nonSpace()
	if err == nil && c == ',' {
		c, err = r.nonSpace()
	}
	if err == nil {
		err = r.skipValue(c)
	}
	if err == nil {
		c, err = r.nonSpace()
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, false, s.syntax(s.ix.Lines+1, err)
	}
	switch c {
	case ',':
		return r.pos, true, nil
	case ']':
		return r.pos - 1, false, nil
	}
	return 0, false, s.syntax(s.ix.Lines+1, &json.SyntaxError{Offset: r.pos})
}

// byteReader reads a JSON value byte by byte, knowing its file offset.
type byteReader struct {
	br  *bufio.Reader
	pos int64
}

func (r *byteReader) next() (byte, error) {
	c, err := r.br.ReadByte()
	if err == nil {
		r.pos++
	}
	return c, err
}

func (r *byteReader) nonSpace() (byte, error) {
	for {
		c, err := r.next()
		if err != nil || !isSpace(rune(c)) {
			return c, err
		}
	}
}

// skipValue reads to the end of the value whose first byte c was read.
// It only finds the end of well-formed JSON; the decoder judges the rest.
func (r *byteReader) skipValue(c byte) error {
	var err error
	if c != '{' && c != '[' && c != '"' {
		// A bare number or word ends at the next delimiter, given back.
		for {
			if c, err = r.next(); err != nil {
				return err
			}
			if c == ',' || c == ']' || c == '}' || isSpace(rune(c)) {
				_ = r.br.UnreadByte()
				r.pos--
				return nil
			}
		}
	}
	depth, inString, escaped := 0, false, false
	for {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
		if depth == 0 && !inString {
			return nil
		}
		if c, err = r.next(); err != nil {
			return err
		}
	}
}

// fileReader reads the file from pos with ReadAt, at most one chunk a
// read, feeding the hash; with end ≥ 0 it refuses to read past end.
type fileReader struct {
	f   *os.File
	pos int64
	end int64
	h   *hasher
}

func (r *fileReader) Read(p []byte) (int, error) {
	if r.h != nil && r.h.ctx.Err() != nil {
		return 0, ErrStopped
	}
	if r.end >= 0 && r.pos >= r.end {
		return 0, errTooLong
	}
	if len(p) > chunk {
		p = p[:chunk]
	}
	if r.end >= 0 && int64(len(p)) > r.end-r.pos {
		p = p[:r.end-r.pos]
	}
	n, err := r.f.ReadAt(p, r.pos)
	if r.h != nil {
		r.h.write(r.pos, p[:n])
	}
	r.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// hasher hashes the file in order while readers go back over parts of it
// (an entry skipped is read again): it takes only bytes past what it has.
type hasher struct {
	h    hash.Hash
	upto int64
	// progress is told upto; every read ends once ctx has.
	progress *Progress
	ctx      context.Context
}

func (h *hasher) write(off int64, p []byte) {
	if end := off + int64(len(p)); end > h.upto && off <= h.upto {
		h.h.Write(p[h.upto-off:])
		h.upto = end
		if h.progress != nil {
			h.progress.Read.Store(end)
		}
	}
}

// finish hashes whatever of the file no reader reached.
func (h *hasher) finish(f *os.File, size int64) error {
	r := &fileReader{f: f, pos: h.upto, end: -1, h: h}
	_, err := io.Copy(io.Discard, io.LimitReader(r, size-h.upto))
	return err
}

// sizeWords says a size the way people read it: "8 MiB", "512 KiB".
func sizeWords(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// Sample picks n records with a PRNG seeded from seed: without replacement
// (a seeded shuffle) when n ≤ Records, and through fresh seeded shuffles of
// every record in turn when n is larger. The same seed gives the same
// prompts in the same order. Only the picked records are read back.
func (ix *Index) Sample(n int, seed int64) ([]Prompt, error) {
	if ix == nil || len(ix.spans) == 0 {
		return nil, errors.New("the prompts file has no prompts to pick from")
	}
	if n < 1 {
		return nil, fmt.Errorf("the number of prompts to pick must be at least 1, not %d", n)
	}
	picks := pick(len(ix.spans), n, seed)

	f, st, err := open(ix.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() != ix.Size {
		return nil, fmt.Errorf("the prompts file %s changed since it was read (%d bytes then, %d now); read it again", ix.Path, ix.Size, st.Size())
	}
	entry := ix.Shape == "sharegpt"
	out := make([]Prompt, 0, n)
	var buf []byte
	for _, i := range picks {
		sp := ix.spans[i]
		if cap(buf) < int(sp.n) {
			buf = make([]byte, sp.n)
		}
		buf = buf[:sp.n]
		if _, err := f.ReadAt(buf, sp.off); err != nil {
			return nil, fmt.Errorf("read the prompts file: %w", err)
		}
		p, why := parseRecord(buf, entry)
		if why != "" {
			return nil, fmt.Errorf("the prompts file %s changed since it was read (%s); read it again",
				ix.Path, (&RecordError{Line: int(sp.line), Entry: entry, Why: why}).Error())
		}
		p.Line = int(sp.line)
		out = append(out, p)
	}
	return out, nil
}

// pick draws n record numbers out of records: a Fisher–Yates shuffle cut
// after n draws, then further full shuffles while more are wanted. Up to n
// it keeps only the moved slots, so picking 1,000 of 100 million prompts
// takes memory for 1,000.
func pick(records, n int, seed int64) []int {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6b6f76617261)) // "kovara"
	out := make([]int, 0, n)
	if n < records/4 {
		moved := make(map[int]int, n)
		at := func(i int) int {
			if v, ok := moved[i]; ok {
				return v
			}
			return i
		}
		for i := range n {
			j := i + rng.IntN(records-i)
			vi, vj := at(i), at(j)
			out = append(out, vj)
			moved[j] = vi
		}
		return out
	}
	perm := make([]int, records)
	for len(out) < n {
		for i := range perm {
			perm[i] = i
		}
		for i := 0; i < records && len(out) < n; i++ {
			j := i + rng.IntN(records-i)
			perm[i], perm[j] = perm[j], perm[i]
			out = append(out, perm[i])
		}
	}
	return out
}

// open opens the prompts file and says what it is.
func open(path string) (*os.File, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open the prompts file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("read the prompts file: %w", err)
	}
	return f, st, nil
}
