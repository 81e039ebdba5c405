package results

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// topKeys are a JSON object's keys in the order they were written.
func topKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %v %v", tok, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// planDocCase is one plan document kind as the tests below use it: a
// document of it made from its header, and its keys as files of it have
// always been written (docs/plans.md).
type planDocCase struct {
	name string
	doc  func(h PlanHeader) PlanDocument
	// marshal and decode are the kind's writer and reader.
	marshal func(PlanDocument) ([]byte, error)
	decode  func([]byte) (PlanDocument, error)
	format  string
	keys    []string
}

func docCase[T any, D interface {
	*T
	PlanDocument
}](name string, k DocKind[T], doc func(PlanHeader) D, keys []string) planDocCase {
	return planDocCase{
		name:    name,
		doc:     func(h PlanHeader) PlanDocument { return doc(h) },
		marshal: func(d PlanDocument) ([]byte, error) { return MarshalDocument(d.(D)) },
		decode: func(data []byte) (PlanDocument, error) {
			r, err := k.Decode(data)
			if err != nil {
				return nil, err
			}
			return D(r), nil
		},
		format: k.Format,
		keys:   keys,
	}
}

var planDocCases = []planDocCase{
	docCase("capacity", CapacityDoc, func(h PlanHeader) *CapacityResult { return &CapacityResult{PlanHeader: h} },
		[]string{"format", "format_version", "about", "publishable", "complete", "created_at", "model",
			"settings", "answer", "probes", "runs", "local"}),
	docCase("context", ContextDoc, func(h PlanHeader) *ContextResult { return &ContextResult{PlanHeader: h, ServerModel: "m"} },
		[]string{"format", "format_version", "about", "publishable", "complete", "created_at", "model", "server_model",
			"settings", "engine", "compat", "calibration", "depths", "warnings", "local"}),
	docCase("specdec", SpecDecDoc, func(h PlanHeader) *SpecDecResult { return &SpecDecResult{PlanHeader: h, ServerModel: "m"} },
		[]string{"format", "format_version", "about", "publishable", "complete", "created_at", "model", "server_model",
			"settings", "engine", "compat", "counters", "levels", "warnings", "local"}),
	docCase("tune", TuneDoc, func(h PlanHeader) *TuneResult { return &TuneResult{PlanHeader: h} },
		[]string{"format", "format_version", "about", "publishable", "complete", "created_at", "model",
			"plan", "settings", "runs", "verdicts", "answers", "warnings", "local"}),
	// The three-stage document keeps its own order, and no publishable.
	docCase("stages", StagesDoc, func(h PlanHeader) *StagesResult {
		return &StagesResult{Format: h.Format, FormatVersion: h.FormatVersion, About: h.About, Complete: h.Complete,
			CreatedAt: h.CreatedAt, Model: h.Model, ServerModel: "m"}
	}, []string{"format", "format_version", "plan", "plan_version", "about", "complete", "quick", "created_at", "tested_on",
		"model", "server_model", "settings", "engine", "compat", "token_source", "decode", "prefill", "users",
		"bench_note", "warnings", "local"}),
}

// TestPlanDocumentsKeepTheirKeys: every plan document is written with the
// keys, in the order, its files have always had; the header embedded in
// four of them comes first, as its fields did before it was one struct.
func TestPlanDocumentsKeepTheirKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range planDocCases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := tc.marshal(tc.doc(PlanHeader{Format: tc.format, FormatVersion: 1}))
			if err != nil {
				t.Fatal(err)
			}
			if got := topKeys(t, data); !slices.Equal(got, tc.keys) {
				t.Errorf("keys\n got %q\nwant %q", got, tc.keys)
			}
		})
	}
}

// TestDocKinds: each kind's header is its format, version 1, its about
// sentence, the time in UTC and the model; a document written from it
// reads back with the same header; another kind's document, and another
// version, are refused in a sentence naming the kind.
func TestDocKinds(t *testing.T) {
	t.Parallel()
	made := time.Date(2026, 12, 3, 11, 30, 0, 0, time.FixedZone("CET", 3600))
	kinds := map[string]struct {
		header func(time.Time, string) PlanHeader
		what   string
	}{
		"capacity": {CapacityDoc.Header, CapacityDoc.What},
		"context":  {ContextDoc.Header, ContextDoc.What},
		"specdec":  {SpecDecDoc.Header, SpecDecDoc.What},
		"tune":     {TuneDoc.Header, TuneDoc.What},
		"stages":   {StagesDoc.Header, StagesDoc.What},
	}
	for i, tc := range planDocCases {
		t.Run(tc.name, func(t *testing.T) {
			k := kinds[tc.name]
			h := k.header(made, "qwen3-8b")
			want := PlanHeader{Format: tc.format, FormatVersion: 1, About: h.About, CreatedAt: "2026-12-03T10:30:00Z", Model: "qwen3-8b"}
			if h != want || !strings.Contains(h.About, "Kovara") {
				t.Fatalf("header %+v, want %+v with an about sentence", h, want)
			}
			h.Complete = true
			data, err := tc.marshal(tc.doc(h))
			if err != nil {
				t.Fatal(err)
			}
			back, err := tc.decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if got := back.Header(); got != h {
				t.Errorf("read back %+v, want %+v", got, h)
			}
			other := planDocCases[(i+1)%len(planDocCases)]
			if _, err := other.decode(data); err == nil || !strings.Contains(err.Error(), "not a "+kinds[other.name].what) {
				t.Errorf("read as a %s: %v", other.name, err)
			}
			v2 := bytes.Replace(data, []byte(`"format_version": 1`), []byte(`"format_version": 2`), 1)
			if _, err := tc.decode(v2); err == nil || !strings.Contains(err.Error(), k.what+" format_version 2 is not supported") {
				t.Errorf("version 2: %v", err)
			}
		})
	}
}

// TestMarshalNilPlanDocument: a nil document is an error, not "null".
func TestMarshalNilPlanDocument(t *testing.T) {
	t.Parallel()
	if b, err := MarshalDocument((*ContextResult)(nil)); err == nil {
		t.Fatalf("wrote %s", b)
	}
}
