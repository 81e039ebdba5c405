package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/trace"
)

// tracesSub is the folder, beside the results, of the traces recorded
// (kovara-bench record, the app's Record my traffic).
const tracesSub = "traces"

// MaxTraceRequests bounds a trace read whole: a week of a busy household
// or an agent's day is some tens of thousands.
const MaxTraceRequests = 2_000_000

// TracesDir is the folder of the traces under dataDir.
func TracesDir(dataDir string) string { return filepath.Join(dataDir, tracesSub) }

// NewTracePath is where a recording started at t is written, the folder
// made (readable by this user only): a file not there yet, so a second
// recording started in the same second (Stop, then Record again) gets a
// file of its own ("trace-20250102-150405-2.jsonl") instead of adding its
// lines, with another salt and another start, to the first one's.
func NewTracePath(dataDir string, t time.Time) (string, error) {
	dir := TracesDir(dataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("make the traces folder: %w", err)
	}
	base := "trace-" + t.Format("20060102-150405")
	for i := 1; i <= maxSameSecond; i++ {
		name := base + ".jsonl"
		if i > 1 {
			name = fmt.Sprintf("%s-%d.jsonl", base, i)
		}
		path := filepath.Join(dir, name)
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
	}
	return "", fmt.Errorf("the traces folder %s already has %d traces started at %s", dir, maxSameSecond, t.Format("15:04:05"))
}

// maxSameSecond bounds the traces NewTracePath names for one second.
const maxSameSecond = 100

// TraceSummary is what History says of a trace.
type TraceSummary struct {
	Name     string // the file's name
	Path     string
	Modified time.Time
	// Last is the last request's arrival where the trace says it (this
	// app's), else Modified: a trace copied or imported keeps its own
	// time, not the copy's.
	Last     time.Time
	Requests int
	// Cut is 1 where the trace's last line was cut (a recorder killed
	// mid-write): it is passed over.
	Cut int
	// SpanS is the time from the first request to the last, in seconds.
	SpanS        float64
	InputTokens  int64
	OutputTokens int64
	Models       []string
	Failed       int // requests with an error
	Err          error
}

// ListTraces summarises every trace under dataDir, the newest first; one
// that cannot be read is listed with its error.
func ListTraces(dataDir string) ([]TraceSummary, error) {
	entries, err := os.ReadDir(TracesDir(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the traces folder: %w", err)
	}
	var out []TraceSummary
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		out = append(out, SummariseTrace(filepath.Join(TracesDir(dataDir), e.Name())))
	}
	slices.SortFunc(out, func(a, b TraceSummary) int { return b.Modified.Compare(a.Modified) })
	return out, nil
}

// SummariseTrace reads the trace at path.
func SummariseTrace(path string) TraceSummary {
	s := TraceSummary{Name: filepath.Base(path), Path: path}
	f, err := os.Open(path)
	if err != nil {
		s.Err = fmt.Errorf("open the trace: %w", err)
		return s
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		s.Modified = st.ModTime()
	}
	reqs, cut, err := trace.Read(f, MaxTraceRequests)
	if err != nil {
		s.Err = err
		return s
	}
	s.Requests, s.Cut = len(reqs), cut
	for i, q := range reqs {
		s.InputTokens += int64(q.InputLength)
		s.OutputTokens += int64(q.OutputLength)
		if q.Model != "" && !slices.Contains(s.Models, q.Model) {
			s.Models = append(s.Models, q.Model)
		}
		if q.Error != "" {
			s.Failed++
		}
		if i > 0 {
			s.SpanS = max(s.SpanS, float64(q.Timestamp-reqs[0].Timestamp)/1000)
		}
		if at, err := time.Parse(time.RFC3339Nano, q.Time); err == nil && at.After(s.Last) {
			s.Last = at
		}
	}
	if s.Last.IsZero() {
		s.Last = s.Modified
	}
	return s
}
