package storage

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/trace"
)

// writeTrace writes reqs as a trace at path, as the recorder does, and
// dates the file at mod.
func writeTrace(t *testing.T, path string, mod time.Time, reqs ...trace.Request) {
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
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
}

// TestListTraces: a folder with a good trace, one whose last line a
// killed recorder cut, and a file that is no trace lists all three,
// newest first, with each one's figures or its error; what is not a
// .jsonl file is passed over.
func TestListTraces(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	dir := TracesDir(data)
	if err := os.MkdirAll(filepath.Join(dir, "old.jsonl"), 0o700); err != nil { // a folder, not a trace
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	ttft := 120.5
	writeTrace(t, filepath.Join(dir, "trace-good.jsonl"), now.Add(-3*time.Hour),
		trace.Request{Timestamp: 0, InputLength: 1200, OutputLength: 300, HashIDs: []int64{1, 2}, Model: "qwen3-8b", API: trace.APIChat, TTFTMs: &ttft},
		trace.Request{Timestamp: 90_500, InputLength: 4000, OutputLength: 0, Model: "qwen3-8b", Error: "the client hung up", Time: "2026-12-07T09:01:30.5+01:00"},
		trace.Request{Timestamp: 45_000, InputLength: 800, OutputLength: 200, Model: "llama-3.1-8b", API: trace.APIAnthropic},
	)
	cut := filepath.Join(dir, "trace-cut.jsonl")
	writeTrace(t, cut, now, trace.Request{Timestamp: 0, InputLength: 10, OutputLength: 5}, trace.Request{Timestamp: 2000, InputLength: 20, OutputLength: 7})
	f, err := os.OpenFile(cut, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"timestamp":3000,"input_len`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(cut, now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "notes.jsonl")
	if err := os.WriteFile(garbage, []byte("my shopping list\neggs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(garbage, now, now); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.txt"), []byte("not a trace"), 0o600); err != nil {
		t.Fatal(err)
	}

	list, err := ListTraces(data)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range list {
		names = append(names, s.Name)
	}
	if want := []string{"notes.jsonl", "trace-cut.jsonl", "trace-good.jsonl"}; !slices.Equal(names, want) {
		t.Fatalf("listed %q, want %q (newest first, only .jsonl files)", names, want)
	}
	tests := []struct {
		name string
		want TraceSummary
		err  string
	}{
		{name: "notes.jsonl", err: "line 1"},
		{name: "trace-cut.jsonl", want: TraceSummary{Requests: 2, Cut: 1, SpanS: 2, InputTokens: 30, OutputTokens: 12}},
		{name: "trace-good.jsonl", want: TraceSummary{Requests: 3, SpanS: 90.5, InputTokens: 6000, OutputTokens: 500,
			Models: []string{"qwen3-8b", "llama-3.1-8b"}, Failed: 1}},
	}
	for i, tc := range tests {
		got := list[i]
		if got.Path != filepath.Join(dir, tc.name) || got.Modified.IsZero() {
			t.Errorf("%s: path %q, modified %v", tc.name, got.Path, got.Modified)
		}
		if tc.err != "" {
			if got.Err == nil || !strings.Contains(got.Err.Error(), tc.err) || !errors.Is(got.Err, trace.ErrNotTrace) {
				t.Errorf("%s: error %v, want one naming %q", tc.name, got.Err, tc.err)
			}
			continue
		}
		if got.Err != nil {
			t.Errorf("%s: %v", tc.name, got.Err)
			continue
		}
		// The last request's time where the trace says it, else the file's.
		wantLast := got.Modified
		if tc.name == "trace-good.jsonl" {
			wantLast, _ = time.Parse(time.RFC3339, "2026-12-07T09:01:30.5+01:00")
		}
		if !got.Last.Equal(wantLast) {
			t.Errorf("%s: last request %v, want %v", tc.name, got.Last, wantLast)
		}
		got.Name, got.Path, got.Modified, got.Last = "", "", time.Time{}, time.Time{}
		if !slices.Equal(got.Models, tc.want.Models) {
			t.Errorf("%s: models %q, want %q", tc.name, got.Models, tc.want.Models)
		}
		got.Models, tc.want.Models = nil, nil
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

// TestListTracesNone: no traces folder yet (nothing recorded) is no
// traces and no error.
func TestListTracesNone(t *testing.T) {
	t.Parallel()
	list, err := ListTraces(filepath.Join(t.TempDir(), "data"))
	if err != nil || len(list) != 0 {
		t.Errorf("ListTraces = %v, %v; want none", list, err)
	}
}

// TestNewTracePathIsNew: a second recording started in the same second
// is given a file of its own, not the first one's to append to.
func TestNewTracePathIsNew(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	at := time.Date(2025, 3, 14, 9, 26, 53, 0, time.Local)
	var paths []string
	for range 3 {
		p, err := NewTracePath(data, at)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Base(p))
	}
	if want := []string{"trace-20250314-092653.jsonl", "trace-20250314-092653-2.jsonl", "trace-20250314-092653-3.jsonl"}; !slices.Equal(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
	if info, err := os.Stat(TracesDir(data)); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("the traces folder: %v %v, want readable by this user only", info.Mode(), err)
	}
}
