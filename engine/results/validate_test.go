package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const docsSchema = "../../docs/results.schema.json"

func TestDocsSchemaIsCanonicalCopy(t *testing.T) {
	if *update {
		if err := os.WriteFile(docsSchema, SchemaJSON, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(docsSchema)
	if err != nil {
		t.Fatalf("%v\nengine/results/schema.json is canonical: copy it to docs/results.schema.json (or run go test ./engine/results/ -run TestDocsSchema -update)", err)
	}
	if !bytes.Equal(got, SchemaJSON) {
		t.Fatal("docs/results.schema.json differs from engine/results/schema.json.\n" +
			"engine/results/schema.json is canonical: edit it, then copy it over docs/results.schema.json\n" +
			"(cp engine/results/schema.json docs/results.schema.json, or go test ./engine/results/ -run TestDocsSchema -update)")
	}
}

func TestSchemaCompiles(t *testing.T) {
	if _, err := compiledSchema(); err != nil {
		t.Fatal(err)
	}
}

// The schema and the Go types must name the same fields, or Decode would
// drop published data and Marshal would write fields the schema refuses.
func TestSchemaFieldsMatchGoTypes(t *testing.T) {
	var sch struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(SchemaJSON, &sch); err != nil {
		t.Fatal(err)
	}
	names := func(m map[string]json.RawMessage) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	file := fileShape()
	run := runShape()
	cases := []struct {
		name   string
		schema map[string]json.RawMessage
		shape  *shape
	}{
		{"file", sch.Properties, file},
		{"manifest", nil, file.fields["manifest"]},
		{"run", sch.Defs["run"].Properties, run},
		{"metrics", sch.Defs["metrics"].Properties, run.fields["metrics"]},
		{"distribution", sch.Defs["distribution"].Properties, run.fields["metrics"].fields["ttft_ms"]},
		{"environment", sch.Defs["environment"].Properties, run.fields["environment"]},
		{"local", sch.Defs["local"].Properties, file.fields["local"]},
	}
	var manifest struct {
		Properties map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(SchemaJSON, &manifest); err != nil {
		t.Fatal(err)
	}
	cases[1].schema = manifest.Properties["manifest"].Properties
	for _, c := range cases {
		if got, want := names(c.schema), c.shape.keys(); !slices.Equal(got, want) {
			t.Errorf("%s: schema properties %v, Go fields %v", c.name, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	good := readFixture(t, "hardware.json")
	tests := []struct {
		name   string
		change func(map[string]any)
		want   []string // violation strings, in order; nil means valid
	}{
		{name: "good file", change: func(map[string]any) {}},
		{
			name:   "missing top-level field",
			change: deleting("/created_at"),
			want:   []string{`at the top level: missing field "created_at"`},
		},
		{
			name:   "missing run field",
			change: deleting("/runs/1/metrics/requests_ok"),
			want:   []string{`at /runs/1/metrics: missing field "requests_ok"`},
		},
		{
			name:   "extra top-level field",
			change: setting("/labels", []any{"fast"}),
			want:   []string{`at the top level: unknown field "labels"`},
		},
		{
			name:   "extra run field",
			change: setting("/runs/0/hostname", "gpubox"),
			want:   []string{`at /runs/0: unknown field "hostname"`},
		},
		{
			name:   "extra environment field",
			change: setting("/runs/0/environment/hostname", "gpubox"),
			want:   []string{`at /runs/0/environment: unknown field "hostname"`},
		},
		{
			name:   "extra distribution field",
			change: setting("/runs/0/metrics/ttft_ms/p90", 1.5),
			want:   []string{`at /runs/0/metrics/ttft_ms: unknown field "p90"`},
		},
		{
			name:   "p99 with the wrong type",
			change: setting("/runs/0/metrics/itl_ms/p99", "10.2"),
			want:   []string{`at /runs/0/metrics/itl_ms/p99: is a string, should be a number`},
		},
		{
			name:   "p99 with too small a sample",
			change: setting("/runs/1/metrics/ttft_ms/p99", 190.5),
			want:   []string{`at /runs/1/metrics/ttft_ms/n: p99 needs at least 100 samples, but n is 97; leave p99 out`},
		},
		{
			name:   "p95 with too small a sample",
			change: setting("/runs/1/metrics/ttft_ms/n", 19),
			want:   []string{`at /runs/1/metrics/ttft_ms/n: p95 needs at least 20 samples, but n is 19; leave p95 out`},
		},
		{
			name:   "null distribution (no successes)",
			change: setting("/runs/1/metrics/tpot_ms", nil),
		},
		{
			name:   "distribution of the wrong type",
			change: setting("/runs/1/metrics/tpot_ms", []any{}),
			want:   []string{`at /runs/1/metrics/tpot_ms: is an array, should be an object or null`},
		},
		{
			name:   "wrong format",
			change: setting("/format", "kovara-results"),
			want:   []string{`at /format: should be "kovara-benchmark-results"`},
		},
		{
			name:   "wrong format_version",
			change: setting("/format_version", 2),
			want:   []string{`at /format_version: should be 1`},
		},
		{
			name:   "created_at not RFC 3339",
			change: setting("/created_at", "29/10/2026 12:00"),
			want:   []string{`at /created_at: "29/10/2026 12:00" is not an RFC 3339 date and time such as 2026-10-29T12:00:00Z`},
		},
		{
			name:   "created_at with an offset",
			change: setting("/created_at", "2026-10-29T14:00:00+02:00"),
		},
		{
			name:   "manifest with an extra field",
			change: setting("/manifest/name", "mine"),
			want:   []string{`at /manifest: unknown field "name"`},
		},
		{
			name:   "unknown run kind",
			change: setting("/runs/0/run_kind", "cloud"),
			want:   []string{`at /runs/0/run_kind: should be one of "hardware", "protocol"`},
		},
		{
			name:   "wrong percentile method",
			change: setting("/runs/0/environment/percentile_method", "nearest"),
			want:   []string{`at /runs/0/environment/percentile_method: should be "linear"`},
		},
		{
			name:   "negative count",
			change: setting("/runs/0/metrics/requests_error", -1),
			want:   []string{`at /runs/0/metrics/requests_error: is -1, should be at least 0`},
		},
		{
			name:   "empty model id",
			change: setting("/runs/0/model_id", ""),
			want:   []string{`at /runs/0/model_id: should not be empty`},
		},
		{
			name:   "local may hold other fields",
			change: setting("/local/telemetry", map[string]any{"gpus": []any{}}),
		},
		{
			name:   "local's known fields are typed",
			change: setting("/local/warnings", "none"),
			want:   []string{`at /local/warnings: is a string, should be an array or null`},
		},
		{
			name:   "partial run is a strict run record",
			change: setting("/local/partial_run", map[string]any{"run_kind": "hardware"}),
			want:   nil, // checked below by count: every missing field is named
		},
		{
			name: "several problems are all listed",
			change: func(doc map[string]any) {
				del(doc, "/complete")
				set(doc, "/runs/0/metrics/extra", 1)
				set(doc, "/runs/1/concurrency", 0)
			},
			want: []string{
				`at the top level: missing field "complete"`,
				`at /runs/0/metrics: unknown field "extra"`,
				`at /runs/1/concurrency: is 0, should be at least 1`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := edit(t, good, tt.change)
			err := Validate(data)
			if tt.name == "partial run is a strict run record" {
				vs := violationsOf(t, err)
				if len(vs) != 17 {
					t.Fatalf("want 17 missing fields named, got %d: %v", len(vs), err)
				}
				return
			}
			if tt.want == nil {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			var got []string
			for _, v := range violationsOf(t, err) {
				got = append(got, v.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestValidateSyntaxAndDuplicates(t *testing.T) {
	good := readFixture(t, "hardware.json")
	for _, tt := range []struct {
		name string
		data string
		want string
	}{
		{"empty", "", "not valid JSON"},
		{"truncated", string(good[:len(good)/2]), "not valid JSON"},
		{"trailing data", string(good) + "{}", "more data follows"},
		{"not an object", "[]", "is an array, should be an object"},
		{"too deep", strings.Repeat("[", 300) + strings.Repeat("]", 300), "nested more than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}

	// A repeated key is a violation even when each copy is valid.
	dup := bytes.Replace(good, []byte(`"complete": true,`), []byte(`"complete": false, "complete": true,`), 1)
	vs := violationsOf(t, Validate(dup))
	if len(vs) != 1 || vs[0].String() != `at the top level: field "complete" appears more than once` {
		t.Fatalf("got %v", vs)
	}

	// Deep inside arrays, and spelled with an escape.
	nested := bytes.Replace(good, []byte(`"ttft_ms": {"n": 97,`), []byte(`"ttft_ms": {"\u006e": 97, "n": 97,`), 1)
	vs = violationsOf(t, Validate(nested))
	if len(vs) != 1 || vs[0].String() != `at /runs/1/metrics/ttft_ms: field "n" appears more than once` {
		t.Fatalf("got %v", vs)
	}
}

func TestValidateErrorText(t *testing.T) {
	data := edit(t, readFixture(t, "hardware.json"), func(doc map[string]any) {
		del(doc, "/complete")
		set(doc, "/runs/0/seed", "seven")
	})
	msg := Validate(data).Error()
	for _, want := range []string{"(2 problems)", `missing field "complete"`, `at /runs/0/seed: is a string, should be an integer`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error text %q lacks %q", msg, want)
		}
	}
}

// Files written by the Python kovara CLI carry cli_version and python in
// environment (no client or go_version), a +00:00 offset in created_at and
// private keys of their own in local. They must import.
func TestPythonCLIFile(t *testing.T) {
	data := readFixture(t, "python_cli.json")
	if err := Validate(data); err != nil {
		t.Fatal(err)
	}
	f, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	env := f.Runs[0].Environment
	if env.CLIVersion != "0.9.2" || env.Python != "3.12.7" || env.GoVersion != "" || env.Client != "" {
		t.Fatalf("environment identity not read as written: %+v", env)
	}
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(`"go_version"`)) || !bytes.Contains(out, []byte(`"cli_version": "0.9.2"`)) {
		t.Fatalf("re-written file changed the client identity:\n%s", out)
	}

	// os and machine are the only identity fields required.
	noOS := edit(t, data, deleting("/runs/0/environment/os"))
	if vs := violationsOf(t, Validate(noOS)); len(vs) != 1 || vs[0].Message != `missing field "os"` {
		t.Fatalf("got %v", vs)
	}
	// And the identity set is closed.
	extra := edit(t, data, setting("/runs/0/environment/node_version", "22"))
	if vs := violationsOf(t, Validate(extra)); len(vs) != 1 || vs[0].Message != `unknown field "node_version"` {
		t.Fatalf("got %v", vs)
	}
}

func TestDecode(t *testing.T) {
	data := readFixture(t, "hardware.json")
	f, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 2 || f.Manifest == nil || f.Manifest.Revision != "r3f9c2a71b0de" {
		t.Fatalf("decoded %+v", f)
	}
	if d := f.Runs[1].Metrics.TTFTMs; d.P95 == nil || d.P99 != nil {
		t.Fatalf("tails of a 97-sample distribution: %+v", d)
	}
	if got := f.Local.Levels[1].Errors["http_503"]; got != 2 {
		t.Fatalf("local levels: %+v", f.Local.Levels)
	}
}

func TestDecodeRefuses(t *testing.T) {
	good := readFixture(t, "hardware.json")
	t.Run("too large", func(t *testing.T) {
		big := make([]byte, MaxFileSize+1)
		_, err := Decode(big)
		if err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("schema violation", func(t *testing.T) {
		_, err := Decode(edit(t, good, setting("/runs/0/metrics/gpu_power_w", 300)))
		if vs := violationsOf(t, err); vs[0].String() != `at /runs/0/metrics: unknown field "gpu_power_w"` {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("key differing only in case inside local", func(t *testing.T) {
		_, err := Decode(edit(t, good, setting("/local/Partial_Run", map[string]any{})))
		if err == nil || !strings.Contains(err.Error(), `field "Partial_Run" differs from the known field "partial_run" only in letter case`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("integer written as 1.0", func(t *testing.T) {
		_, err := Decode(bytes.Replace(good, []byte(`"warmup": 4,`), []byte(`"warmup": 4.0,`), 1))
		if err == nil || !strings.Contains(err.Error(), "warmup") {
			t.Fatalf("got %v", err)
		}
	})
}

func sampleFile() *File {
	str := func(s string) *string { return &s }
	f64 := func(v float64) *float64 { return &v }
	yes := true
	return &File{
		Format:        Format,
		FormatVersion: FormatVersion,
		Complete:      true,
		CreatedAt:     "2026-10-29T12:00:00Z",
		Runs: []Run{{
			RunKind: RunKindProtocol, Evidence: EvidenceSelfReported, ModelID: "Qwen/Qwen3-8B",
			InputTokens: 1024, OutputTokens: 256, Concurrency: 1, Requests: 100, Warmup: 4, Seed: 7,
			Metrics: Metrics{
				RequestsOK: 100, DurationS: 230.5, RequestThroughput: 0.434, OutputThroughput: 111.063,
				InputTokensMean: f64(1024), OutputTokensMean: f64(256), TokenCountMethod: TokenCountServerUsage,
				TTFTMs: &Dist{N: 100, Mean: 41.2, Min: 36.9, P50: 40.9, P95: f64(47), P99: f64(52.1), Max: 58.3},
			},
			Environment: Environment{
				Client: "kovara-desktop", ClientVersion: "0.1.0", GoVersion: "go1.26.8", OS: "linux", Machine: "amd64",
				MaxTokens: 256, IgnoreEOS: true, IgnoreEOSHonoured: &yes, Stream: true, StreamOptions: true,
				PromptGenerator: "kovara-synthetic-v1", Seed: 7, PercentileMethod: PercentileLinear,
				ServerModel: str("Qwen/Qwen3-8B"), TimeoutS: 120,
			},
		}},
		Local: Local{Endpoint: "http://127.0.0.1:8000", EndpointHost: "127.0.0.1"},
	}
}

func TestMarshal(t *testing.T) {
	f := sampleFile()
	data, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("}\n")) || !bytes.Contains(data, []byte("\n  \"runs\": [")) {
		t.Fatalf("not indented with a trailing newline:\n%s", data)
	}
	if f.Local.Warnings != nil {
		t.Fatal("Marshal modified its argument")
	}
	back, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	f.Local.ServedModels, f.Local.Levels, f.Local.Warnings = []string{}, []LevelLocal{}, []string{}
	if !reflect.DeepEqual(back, f) {
		t.Fatalf("round trip changed the file:\n got %+v\nwant %+v", back, f)
	}

	// An interrupted first level leaves no runs yet: still a valid file.
	empty := sampleFile()
	empty.Complete, empty.Runs = false, nil
	if _, err := Marshal(empty); err != nil {
		t.Fatal(err)
	}

	bad := sampleFile()
	bad.Runs[0].Metrics.TTFTMs.N = 19 // p95 and p99 without the samples
	bad.Runs[0].Environment.PercentileMethod = ""
	_, err = Marshal(bad)
	if err == nil || !strings.Contains(err.Error(), "refusing to write an invalid file") ||
		!strings.Contains(err.Error(), "/runs/0/environment/percentile_method") {
		t.Fatalf("got %v", err)
	}
	if _, err := Marshal(nil); err == nil {
		t.Fatal("Marshal(nil) succeeded")
	}
}

func TestMarshalKeepsModelIDsReadable(t *testing.T) {
	f := sampleFile()
	f.Runs[0].ModelID = "a<b>&c"
	data, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"a<b>&c"`)) {
		t.Fatalf("HTML-escaped:\n%s", data)
	}
}

// The example in docs/results-format.md must be a valid, publishable file.
func TestDocExampleValidates(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "results-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	const start, end = "<!-- example:begin -->", "<!-- example:end -->"
	_, rest, ok := bytes.Cut(md, []byte(start))
	block, _, ok2 := bytes.Cut(rest, []byte(end))
	if !ok || !ok2 {
		t.Fatalf("docs/results-format.md lacks the %s … %s markers", start, end)
	}
	block = bytes.TrimSpace(block)
	block = bytes.TrimPrefix(block, []byte("```json"))
	block = bytes.TrimSuffix(block, []byte("```"))
	if err := Validate(block); err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(block); err != nil {
		t.Fatal(err)
	}
	if _, reasons := PublishCheck(block); reasons != nil {
		t.Fatalf("the documented example is not publishable: %q", reasons)
	}
}
