package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Format is what kind of file Import read.
type Format string

// The formats Import knows.
const (
	// FormatKovara is this app's own trace (Read).
	FormatKovara Format = "kovara-bench"
	// FormatMooncake is Mooncake's JSON lines (kvcache-ai/Mooncake,
	// FAST25-release/traces): timestamp in ms, input_length,
	// output_length, hash_ids of MooncakeBlockTokens tokens.
	FormatMooncake Format = "mooncake"
	// FormatBurstGPT is BurstGPT's CSV (HPMLL/BurstGPT): Timestamp in
	// seconds, Model, Request tokens, Response tokens, Total tokens,
	// Log Type (BurstGPT_3 adds Session ID and Elapsed time).
	FormatBurstGPT Format = "burstgpt"
)

// MooncakeBlockTokens is the size of a Mooncake hash id's block: 512
// tokens (Mooncake's FAST25-release/README.md), where this app's own
// blocks are BlockBytes bytes. An imported Mooncake request says so by
// PromptBytes and BlockBytes 0: its HashIDs are blocks of
// MooncakeBlockTokens tokens, the last one the rest of InputLength.
const MooncakeBlockTokens = 512

// MaxImport bounds the requests Import reads where its caller gives no
// bound: BurstGPT_1.csv's 1.43 million rows fit, its 3.86-million-row
// BurstGPT_2.csv does not (cut it with head -n, or give a larger max).
const MaxImport = 2_000_000

// BurstGPTFailed is the Error of an imported BurstGPT row with 0
// response tokens: BurstGPT logs a request that failed that way.
const BurstGPTFailed = "failed in the source trace (BurstGPT logged 0 response tokens)"

// ErrEmpty is Import's error for a file with no request in it.
var ErrEmpty = errors.New("the file has no requests in it")

// Imported is what Import read.
type Imported struct {
	Format Format
	// Requests are sorted by Timestamp (a stable sort: requests at the
	// same ms keep the file's order). For Mooncake and BurstGPT the
	// first is at 0: both formats' times are relative, and an excerpt
	// cut from the middle of a trace starts its replay at once.
	// This app's own traces keep their timestamps.
	Requests []Request
	// Cut is 1 where this app's trace ended in a line cut short (a
	// recorder killed mid-write), passed over; see Read.
	Cut int
	// Failed counts BurstGPT rows with 0 response tokens: kept, with
	// Error BurstGPTFailed, so the replay's arrivals are the trace's.
	Failed int
	// Rounded counts Mooncake timestamps with a fraction of a ms (some
	// copies write 1500.0 or 1500.25), rounded to the nearest ms.
	Rounded int
}

// Import reads a trace of any format it knows, telling which from the
// content: a JSON line with any of this app's own fields is this app's
// trace (read by Read), a JSON line with Mooncake's fields only is
// Mooncake's, and a CSV header with a Timestamp column is BurstGPT's.
// Lines are at most MaxLine bytes and at most max requests are read
// (max <= 0: MaxImport); more is an error. Errors name the line.
func Import(r io.Reader, max int) (Imported, error) {
	if max <= 0 {
		max = MaxImport
	}
	// Find the first line that is not blank, keeping every byte read so
	// the format's reader reads the file from its start.
	rec := &recorder{r: r}
	sc := bufio.NewScanner(rec)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	n := 0
	var first []byte
	for sc.Scan() {
		n++
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			first = line
			break
		}
	}
	if err := sc.Err(); err != nil {
		return Imported{}, lineErr(n+1, err)
	}
	if first == nil {
		return Imported{}, ErrEmpty
	}
	all := io.MultiReader(bytes.NewReader(rec.buf), r)

	var im Imported
	var err error
	switch detect(first) {
	case FormatKovara:
		im.Format = FormatKovara
		im.Requests, im.Cut, err = Read(all, max)
	case FormatMooncake:
		im.Format = FormatMooncake
		im.Requests, im.Rounded, err = readMooncake(all, max)
	case FormatBurstGPT:
		im.Format = FormatBurstGPT
		im.Requests, im.Failed, err = readBurstGPT(all, max)
	default:
		return Imported{}, fmt.Errorf("line %d: %w: this app reads its own traces and Mooncake's (JSON lines with timestamp, input_length, output_length, hash_ids) and BurstGPT's (a CSV whose header is Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type)", n, ErrNotTrace)
	}
	if err != nil {
		return Imported{}, err
	}
	if len(im.Requests) == 0 {
		return Imported{}, ErrEmpty
	}
	slices.SortStableFunc(im.Requests, func(a, b Request) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
	if im.Format != FormatKovara {
		start := im.Requests[0].Timestamp
		for i := range im.Requests {
			im.Requests[i].Timestamp -= start
		}
	}
	return im, nil
}

// recorder keeps what it reads.
type recorder struct {
	r   io.Reader
	buf []byte
}

func (c *recorder) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.buf = append(c.buf, p[:n]...)
	return n, err
}

// ownFields are the fields only this app's traces write.
var ownFields = []string{"time", "api", "path", "model", "stream", "max_tokens", "prompt_bytes", "block_bytes", "cached_tokens", "ttft_ms", "duration_ms", "status", "error", "usage", "message_ids"}

// detect says which format a file whose first non-blank line is line
// is, or "" for none.
func detect(line []byte) Format {
	if line[0] == '{' {
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) != nil {
			return ""
		}
		for _, k := range ownFields {
			if _, ok := m[k]; ok {
				return FormatKovara
			}
		}
		if _, ok := m["timestamp"]; ok {
			return FormatMooncake
		}
		if _, ok := m["input_length"]; ok {
			return FormatMooncake
		}
		return ""
	}
	rec, err := csv.NewReader(bytes.NewReader(line)).Read()
	if err != nil || len(rec) < 2 {
		return ""
	}
	for _, name := range rec {
		if column(name) == "timestamp" {
			return FormatBurstGPT
		}
	}
	return ""
}

// column is a CSV header's name as compared: no byte-order mark, no
// spaces around, lower case.
func column(name string) string {
	return strings.ToLower(strings.TrimSpace(strings.TrimPrefix(name, "\ufeff")))
}

// lineErr words a scanner's error on line n.
func lineErr(n int, err error) error {
	if errors.Is(err, bufio.ErrTooLong) || errors.Is(err, errLineTooLong) {
		return fmt.Errorf("line %d is longer than %d bytes: a trace's lines are far shorter, so this is not a trace (or it is damaged)", n, MaxLine)
	}
	return fmt.Errorf("read the trace: %w", err)
}

// mooncakeLine is a Mooncake request as read: numbers kept as written,
// to tell 1500, 1500.0 and 1500.25 apart.
type mooncakeLine struct {
	Timestamp    *json.Number  `json:"timestamp"`
	InputLength  *json.Number  `json:"input_length"`
	OutputLength *json.Number  `json:"output_length"`
	HashIDs      []json.Number `json:"hash_ids"`
}

// maxMs bounds a timestamp: 2^53 ms (285,000 years), whole in a float.
const maxMs = 1 << 53

// readMooncake reads Mooncake's JSON lines, blank lines skipped. Every
// other line must be a request: a trace downloaded whole has no cut
// line, and a damaged one is better said than half replayed.
func readMooncake(r io.Reader, max int) (reqs []Request, rounded int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m mooncakeLine
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, 0, fmt.Errorf("line %d: %w: each line of a Mooncake trace is a JSON object such as {\"timestamp\": 0, \"input_length\": 6758, \"output_length\": 500, \"hash_ids\": [0, 1, 2]}", n, ErrNotTrace)
		}
		if m.Timestamp == nil || m.InputLength == nil || m.OutputLength == nil {
			return nil, 0, fmt.Errorf("line %d: %w: a Mooncake line needs timestamp, input_length and output_length", n, ErrNotTrace)
		}
		ts, frac, err := millis(*m.Timestamp)
		if err != nil {
			return nil, 0, fmt.Errorf("line %d: timestamp: %w", n, err)
		}
		if frac {
			rounded++
		}
		q := Request{Timestamp: ts}
		if q.InputLength, err = tokens(m.InputLength.String()); err != nil {
			return nil, 0, fmt.Errorf("line %d: input_length: %w", n, err)
		}
		if q.OutputLength, err = tokens(m.OutputLength.String()); err != nil {
			return nil, 0, fmt.Errorf("line %d: output_length: %w", n, err)
		}
		if len(m.HashIDs) > 0 {
			q.HashIDs = make([]int64, len(m.HashIDs))
			for i, h := range m.HashIDs {
				id, err := strconv.ParseInt(h.String(), 10, 64)
				if err != nil || id < 0 {
					return nil, 0, fmt.Errorf("line %d: hash_ids: %q is not a whole number of 0 or more", n, h.String())
				}
				q.HashIDs[i] = id
			}
		}
		if len(reqs) == max {
			return nil, 0, tooMany(max)
		}
		reqs = append(reqs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, lineErr(n+1, err)
	}
	return reqs, rounded, nil
}

// millis reads a timestamp in ms: a whole number, or a number with a
// fraction rounded to the nearest ms (frac true).
func millis(n json.Number) (ms int64, frac bool, err error) {
	if v, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		if v < 0 || v >= maxMs {
			return 0, false, fmt.Errorf("%s is not a time from the trace's start (0 to 2^53 ms)", n)
		}
		return v, false, nil
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f >= maxMs {
		return 0, false, fmt.Errorf("%s is not a time from the trace's start (0 to 2^53 ms)", n)
	}
	return int64(math.Round(f)), f != math.Trunc(f), nil
}

// maxTokens bounds a token count: a billion is past any model's context.
const maxTokens = 1 << 30

// tokens reads a token count: a whole number of 0 or more, written as
// 500 or 500.0 (a CSV written by pandas may say 500.0).
func tokens(s string) (int, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		if v < 0 || v > maxTokens {
			return 0, fmt.Errorf("%s is not a token count (0 to %d)", s, maxTokens)
		}
		return int(v), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > maxTokens {
		return 0, fmt.Errorf("%q is not a token count (a whole number from 0 to %d)", s, maxTokens)
	}
	return int(f), nil
}

func tooMany(max int) error {
	return fmt.Errorf("the trace has more than %d requests: import a part of it (its first lines: head -n %d)", max, max)
}

// BurstGPT's columns, as column names them.
const (
	colTimestamp = "timestamp"
	colModel     = "model"
	colRequest   = "request tokens"
	colResponse  = "response tokens"
)

// maxSeconds bounds a BurstGPT timestamp so its ms stay under maxMs.
const maxSeconds = maxMs / 1000

// readBurstGPT reads BurstGPT's CSV. Its columns are found by their
// header's names, so BurstGPT_3's Session ID and Elapsed time (put
// second and third) move nothing; Total tokens, Log Type ("Conversation
// log": ChatGPT's web conversations; "API log": its API), Session ID
// and Elapsed time have no field in a Request and are passed over.
func readBurstGPT(r io.Reader, max int) (reqs []Request, failed int, err error) {
	lr := &lineLimit{r: r, max: MaxLine}
	cr := csv.NewReader(lr)
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	head, err := cr.Read()
	if err != nil {
		return nil, 0, csvErr(lr, err)
	}
	at := map[string]int{}
	for i, name := range head {
		if _, dup := at[column(name)]; !dup {
			at[column(name)] = i
		}
	}
	for _, want := range []string{colTimestamp, colRequest, colResponse} {
		if _, ok := at[want]; !ok {
			return nil, 0, fmt.Errorf("line 1: the CSV has no %q column: a BurstGPT trace's header is Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type", burstGPTName(want))
		}
	}
	model, hasModel := at[colModel]
	models := map[string]string{} // one string per model name, not one per row
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, csvErr(lr, err)
		}
		line, _ := cr.FieldPos(0)
		sec, err := strconv.ParseFloat(strings.TrimSpace(rec[at[colTimestamp]]), 64)
		if err != nil || math.IsNaN(sec) || sec < 0 || sec >= maxSeconds {
			return nil, 0, fmt.Errorf("line %d: Timestamp %q is not a time in seconds from the trace's start", line, rec[at[colTimestamp]])
		}
		q := Request{Timestamp: int64(math.Round(sec * 1000))}
		if q.InputLength, err = tokens(rec[at[colRequest]]); err != nil {
			return nil, 0, fmt.Errorf("line %d: Request tokens: %w", line, err)
		}
		if q.OutputLength, err = tokens(rec[at[colResponse]]); err != nil {
			return nil, 0, fmt.Errorf("line %d: Response tokens: %w", line, err)
		}
		if q.OutputLength == 0 {
			q.Error = BurstGPTFailed
			failed++
		}
		if hasModel {
			name := strings.TrimSpace(rec[model])
			if s, ok := models[name]; ok {
				name = s
			} else if len(models) < 1000 {
				models[name] = name
			}
			q.Model = name
		}
		if len(reqs) == max {
			return nil, 0, tooMany(max)
		}
		reqs = append(reqs, q)
	}
	return reqs, failed, nil
}

// burstGPTName is a column's name as BurstGPT's header writes it.
func burstGPTName(col string) string {
	switch col {
	case colTimestamp:
		return "Timestamp"
	case colRequest:
		return "Request tokens"
	case colResponse:
		return "Response tokens"
	}
	return col
}

// csvErr words a CSV reader's error.
func csvErr(lr *lineLimit, err error) error {
	if errors.Is(err, errLineTooLong) {
		return lineErr(lr.line, err)
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return fmt.Errorf("line %d: this row has a different number of fields from the header's", pe.Line)
		}
		return fmt.Errorf("line %d: not a CSV row: %v", pe.Line, pe.Err)
	}
	if err == io.EOF {
		return ErrEmpty
	}
	return fmt.Errorf("read the trace: %w", err)
}

var errLineTooLong = errors.New("line too long")

// lineLimit fails a read that would pass a line longer than max bytes,
// which the CSV reader would otherwise hold whole; line is the line it
// is in (from 1).
type lineLimit struct {
	r    io.Reader
	max  int
	cur  int
	line int
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if l.line == 0 {
		l.line = 1
	}
	n, err := l.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			l.line++
			l.cur = 0
			continue
		}
		l.cur++
		if l.cur > l.max {
			// Pass on the bytes before the long line's end, then fail.
			return i, errLineTooLong
		}
	}
	return n, err
}
