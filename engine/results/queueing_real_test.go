package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueueingOnRealRuns holds the queueing rule to runs made on real
// servers (testdata/queueing; docs/servers.md says how they were served):
// one that queued is said with the slots it served, one that did not is
// not flagged, and a capacity search says it as a note.
func TestQueueingOnRealRuns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		capacity bool
		want     string // in the queueing warning; "" for none
		severity Severity
	}{
		// Ollama's defaults, 1 and 4 users: one request at a time.
		{"ollama-default-1-4.json", false, "the server served about 1 request at a time", SeverityProblem},
		// OLLAMA_NUM_PARALLEL=4 at 4 users: every request in a slot.
		{"ollama-par4-1-4.json", false, "", ""},
		// Four slots at 8 users, the answers slowed by sharing two cores.
		{"ollama-par4-1-8.json", false, "the server served about 4 requests at a time", SeverityProblem},
		// llama-server -np 2 at 8 users quotes its own slot count.
		{"llama-np2-1-8.json", false, "the server serves 2 at a time, its parallel slots (/props total_slots)", SeverityProblem},
		{"ollama-default-capacity.json", true, "the server served about 1 request at a time", SeverityNote},
		{"ollama-par4-capacity.json", true, "the server served about 4 requests at a time", SeverityNote},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(filepath.Join("testdata", "queueing", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		var ws []Warning
		if tt.capacity {
			c, err := CapacityDoc.Decode(data)
			if err != nil {
				t.Fatalf("%s: %v", tt.file, err)
			}
			ws = c.Warnings()
		} else {
			f, err := Decode(data)
			if err != nil {
				t.Fatalf("%s: %v", tt.file, err)
			}
			ws = Warnings(f)
		}
		var got []Warning
		for _, w := range ws {
			if w.Kind == WarnQueueing {
				got = append(got, w)
			}
		}
		switch {
		case tt.want == "" && len(got) != 0:
			t.Errorf("%s: queueing said of a server that did not queue: %q", tt.file, got[0].Text)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0].Text, tt.want) || got[0].Severity != tt.severity):
			t.Errorf("%s: queueing warnings %+v, want one %s saying %q", tt.file, got, tt.severity, tt.want)
		}
	}
}
