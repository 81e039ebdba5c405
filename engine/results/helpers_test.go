package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and docs/results.schema.json from the canonical copies")

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edit parses a JSON document, applies changes, and writes it back.
func edit(t testing.TB, data []byte, change func(doc map[string]any)) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	change(doc)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// at walks a JSON pointer's parent and returns the container and last key.
func at(doc any, ptr string) (any, string) {
	toks := strings.Split(ptr, "/")[1:]
	cur := doc
	for _, tok := range toks[:len(toks)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, _ := strconv.Atoi(tok)
			cur = c[i]
		}
	}
	return cur, toks[len(toks)-1]
}

func set(doc map[string]any, ptr string, v any) {
	parent, key := at(doc, ptr)
	switch c := parent.(type) {
	case map[string]any:
		c[key] = v
	case []any:
		i, _ := strconv.Atoi(key)
		c[i] = v
	}
}

func del(doc map[string]any, ptr string) {
	parent, key := at(doc, ptr)
	if m, ok := parent.(map[string]any); ok {
		delete(m, key)
	}
}

func setting(ptr string, v any) func(map[string]any) {
	return func(doc map[string]any) { set(doc, ptr, v) }
}

func deleting(ptr string) func(map[string]any) {
	return func(doc map[string]any) { del(doc, ptr) }
}

func violationsOf(t *testing.T, err error) []Violation {
	t.Helper()
	ve, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
	}
	return ve.Violations
}

// TestDescriptionsListWhatIsThere: a service level and a server's report
// list only the parts they have, in order, with ", " between.
func TestDescriptionsListWhatIsThere(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, got, want string
	}{
		{"no service level", (*RateSLO)(nil).Words(), ""},
		{"TTFT only", (&RateSLO{TTFTMs: 500}).Words(), "TTFT ≤ 500 ms"},
		{"every limit", (&RateSLO{TTFTMs: 1500, TPOTMs: 40, UserTPS: 12.5}).Words(), "TTFT ≤ 1.5 s, TPOT ≤ 40 ms, ≥ 12.5 tok/s a request"},
		{"tok/s only", (&RateSLO{UserTPS: 20}).Words(), "≥ 20 tok/s a request"},
		{"no report", (*TuneServer)(nil).Describe(), ""},
		{"empty report", (&TuneServer{}).Describe(), ""},
		{"llama.cpp", (&TuneServer{Family: FamilyLlamaCpp, Build: "b4748", Slots: 8, Context: 8192}).Describe(), "llama.cpp b4748, 8 slots, context 8,192 tokens a slot"},
		{"one slot", (&TuneServer{Family: FamilyLlamaCpp, Slots: 1, Context: 4096}).Describe(), "llama.cpp, 1 slot, context 4,096 tokens"},
		{"context only", (&TuneServer{Context: 2048}).Describe(), "context 2,048 tokens"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}
