package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/internal/keytest"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenCase is one document a golden file is kept of.
type goldenCase struct {
	name string
	doc  plans.Doc
}

// goldenCases are the documents a real llama-server gave, for every plan
// (b9749: capacity, context, and the capacity search's probes read as a
// Kovara run; b4748: the others), then planstest's clean and failed
// document of every plan, so each plan kind is held.
func goldenCases(t *testing.T) []goldenCase {
	capacity := planstest.LlamaCapacity(t)
	probes := capacity.AsFile()
	probes.Local.Plan = ""
	out := []goldenCase{
		{"llama-capacity", plans.NewCapacity(capacity)},
		{"llama-context", plans.NewContext(planstest.LlamaContext(t))},
		{"llama-kovara-probes", plans.Kovara{File: probes}},
		{"llama-kovara", plans.Kovara{File: planstest.LlamaKovara(t)}},
		{"llama-stages", plans.NewStages(planstest.LlamaStages(t))},
		{"llama-specdec", plans.NewSpecDec(planstest.LlamaSpecDec(t))},
		{"llama-rate", plans.NewRate(planstest.LlamaRate(t))},
		{"llama-tune", plans.NewTune(planstest.LlamaTune(t))},
	}
	for _, c := range planstest.Cases() {
		out = append(out, goldenCase{strings.ReplaceAll(c.Name, " ", "-"), c.Doc})
	}
	return out
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what was written now; run go test ./report -update and read the diff\ngot:\n%s", path, got)
	}
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			r, err := Of(c.doc)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+".md", []byte(Markdown(r)))
			var b bytes.Buffer
			if err := CSV(&b, r); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+".csv", b.Bytes())
		})
	}
}

// TestReportUsesTheSharedTable: every row of the document's own table is
// a row of the report's, cell for cell (no table of its own).
func TestReportUsesTheSharedTable(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases(t) {
		r, err := Of(c.doc)
		if err != nil {
			t.Fatal(err)
		}
		want := c.doc.Table()
		got := r.Tables[0].Table
		if strings.Join(got.Columns, "|") != strings.Join(want.Columns, "|") || len(got.Rows) != len(want.Rows) {
			t.Fatalf("%s: the report's table is not the document's: got %v, %d rows, want %v, %d rows", c.name, got.Columns, len(got.Rows), want.Columns, len(want.Rows))
		}
		for i := range want.Rows {
			if g, w := strings.Join(got.Rows[i], "|"), strings.Join(want.Rows[i], "|"); g != w {
				t.Errorf("%s row %d: got %s, want %s", c.name, i, g, w)
			}
		}
	}
}

// Private things planted in local, each of which must stay out.
const (
	plantHost    = "gpubox-attic.lan"
	plantURL     = "http://" + plantHost + ":8123/v1"
	plantName    = "Attic Rig of Jonas"
	plantServed  = "secret-finetune-v7"
	plantMessage = "CUDA error 719 on node rack4-slot9"
	plantKey     = "sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
)

var plants = []string{plantHost, plantURL, plantName, plantServed, plantMessage}

// planted is d with the endpoint's address, host and name, a served
// model, a server's error message (among a level's messages, the
// engine's warnings and why the server went) and the key written into
// its local section, as a careless or hostile writer could.
func planted(t *testing.T, d plans.Doc) plans.Doc {
	t.Helper()
	data, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	local, _ := top["local"].(map[string]any)
	if local == nil {
		local = map[string]any{}
		top["local"] = local
	}
	local["endpoint"] = plantURL + "?api_key=" + plantKey
	local["endpoint_host"] = plantHost
	local["endpoint_name"] = plantName
	local["served_models"] = []any{d.Model(), plantServed}
	if top["format"] != results.Format {
		local["prompts_file"] = "/home/" + plantName + "/my-prompts.jsonl" // a plan document's --prompts path
		local["trace_file"] = "/home/" + plantName + "/my-day.jsonl"       // a rate plan's --trace path
	}
	if _, ok := local["warnings"]; ok {
		local["warnings"] = []any{"the server said: " + plantMessage + " (key " + plantKey + ")"}
	}
	if _, ok := local["server_gone"]; ok || top["format"] == results.Format {
		// A run the server left says why in its headline.
		local["server_gone"] = "the server stopped answering (" + plantMessage + ")"
		top["complete"] = false
	}
	if levels, ok := local["levels"].([]any); ok {
		for _, l := range levels {
			m := l.(map[string]any)
			m["messages"] = map[string]any{"http_500": []any{plantMessage + " " + plantKey}}
			m["errors"] = map[string]any{"http_500": 1}
		}
	}
	out, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	pd, err := plans.Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	return pd
}

func leaks(t *testing.T, what, text string) {
	t.Helper()
	for _, p := range plants {
		if strings.Contains(text, p) {
			t.Errorf("%s holds %q:\n%s", what, p, text)
		}
	}
	if at := keytest.Find(text, plantKey); at != "" {
		t.Errorf("%s holds the API key at %s", what, at)
	}
}

// TestNothingPrivate plants the endpoint, a served model, a server's
// message and a key in every plan's local and finds none of them in the
// Markdown or the CSV, of a result or a comparison; nor the key in the
// JSONL (private by nature, it holds only times, counts and classes).
func TestNothingPrivate(t *testing.T) {
	t.Parallel()
	byKind := map[*plans.Kind][]plans.Doc{}
	cases := goldenCases(t)
	synth := plans.Kovara{File: comparetest.SynthFile(7, []int{1, 4}, comparetest.Typical(1, 30, 64))}
	cases = append(cases, goldenCase{"synth", synth})
	for _, c := range cases {
		d := planted(t, c.doc)
		if !strings.Contains(string(must(d.Marshal())), plantName) {
			t.Fatalf("%s: nothing was planted", c.name)
		}
		byKind[d.Kind()] = append(byKind[d.Kind()], d)
		r, err := Of(d)
		if err != nil {
			t.Fatal(err)
		}
		leaks(t, c.name+" Markdown", Markdown(r))
		sd, err := Shareable(d)
		if err != nil {
			t.Fatal(err)
		}
		leaks(t, c.name+" shareable document", string(must(sd.Marshal())))
		var b bytes.Buffer
		if err := CSV(&b, r); err != nil {
			t.Fatal(err)
		}
		leaks(t, c.name+" CSV", b.String())
		b.Reset()
		if err := JSONL(&b, d); err == nil {
			if at := keytest.Find(b.String(), plantKey); at != "" {
				t.Errorf("%s JSONL holds the key at %s", c.name, at)
			}
		}
	}
	for k, docs := range byKind {
		if len(docs) < 2 || k != plans.KovaraMethod && !k.HasComparison() {
			continue
		}
		r, err := Compared(docs[:2], nil)
		if err != nil {
			t.Fatalf("%s: %v", k.ID, err)
		}
		leaks(t, k.ID+" comparison Markdown", Markdown(r))
		var b bytes.Buffer
		if err := CSV(&b, r); err != nil {
			t.Fatal(err)
		}
		leaks(t, k.ID+" comparison CSV", b.String())
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestMarkdownRendersAsTable pastes the Markdown into a real
// GitHub-flavoured Markdown renderer (cmark-gfm, scripts/deps.sh test)
// and finds a table with a row per level and the right columns.
func TestMarkdownRendersAsTable(t *testing.T) {
	t.Parallel()
	path, err := exec.LookPath("cmark-gfm")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("cmark-gfm is not installed, so the Markdown cannot be rendered here (scripts/deps.sh test installs it)")
		}
		t.Fatal("cmark-gfm is not installed (scripts/deps.sh test installs it; apt-get install -y cmark-gfm)")
	}
	for _, c := range goldenCases(t) {
		r, err := Of(c.doc)
		if err != nil {
			t.Fatal(err)
		}
		// A "|" in a cell must not split it.
		r.Tables[0].Rows[0][len(r.Tables[0].Columns)-1] += " a | b"
		cmd := exec.Command(path, "-e", "table")
		cmd.Stdin = strings.NewReader(Markdown(r))
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		html := string(out)
		if got := strings.Count(html, "<table>"); got != 1 {
			t.Fatalf("%s: %d tables in the rendered HTML, want 1:\n%s", c.name, got, html)
		}
		if got, want := strings.Count(html, "<tr>"), len(r.Tables[0].Rows)+1; got != want {
			t.Errorf("%s: %d table rows rendered, want %d (a header and one a row)", c.name, got, want)
		}
		cols := len(r.Tables[0].Columns)
		if got, want := strings.Count(html, "<td"), cols*len(r.Tables[0].Rows); got != want {
			t.Errorf("%s: %d cells rendered, want %d", c.name, got, want)
		}
		if !strings.Contains(html, "a | b") {
			t.Errorf("%s: the escaped | is not in a cell as text", c.name)
		}
	}
	// A comparison of a repeated plan's runs: its two tables.
	var docs []plans.Doc
	for i := range 3 {
		f := comparetest.SynthFile(uint64(20+i), []int{1, 2}, comparetest.Typical(1, 30, 32))
		f.Local.Group = &results.RunGroup{ID: "g", Index: i + 1, Of: 3}
		docs = append(docs, plans.Kovara{File: f})
	}
	r, err := Compared(docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "-e", "table")
	cmd.Stdin = strings.NewReader(Markdown(r))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, tb := range r.Tables {
		rows += len(tb.Rows) + 1
	}
	if got, want := strings.Count(string(out), "<table>"), len(r.Tables); got != want {
		t.Errorf("the comparison rendered %d tables, want %d", got, want)
	}
	if got := strings.Count(string(out), "<tr>"); got != rows {
		t.Errorf("the comparison rendered %d rows, want %d", got, rows)
	}
}

// TestCSVIsPlainNumbers: one header row, units in the headers, every
// figure a number a spreadsheet reads, missing ones empty.
func TestCSVIsPlainNumbers(t *testing.T) {
	t.Parallel()
	r, err := Of(plans.NewContext(planstest.LlamaContext(t)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := CSV(&b, r); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := recs[0]
	if got, want := len(recs), len(r.Tables[0].Rows)+1; got != want {
		t.Fatalf("got %d records, want %d (one header row)", got, want)
	}
	for _, want := range []string{"Cold TTFT (ms)", "Cold TTFT ± (%)", "Decode (tok/s)"} {
		if !contains(head, want) {
			t.Errorf("no %q among the headers %q", want, head)
		}
	}
	for _, rec := range recs[1:] {
		for i, v := range rec {
			if strings.ContainsAny(v, "—±") {
				t.Errorf("column %q holds %q: a mark in a cell", head[i], v)
			}
			// A column with a unit holds numbers alone ("1029 (+0.5 %)",
			// a count and how far it missed, stays text).
			if strings.HasSuffix(head[i], ")") && v != "" {
				if _, err := strconv.ParseFloat(v, 64); err != nil {
					t.Errorf("column %q holds %q, not a number", head[i], v)
				}
			}
		}
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// TestComparedKovara: two Kovara runs, the second slowed, compared as
// the Compare screen does; the CSV is one row per metric × level × run
// with the slower run's TTFT change positive and worse.
func TestComparedKovara(t *testing.T) {
	t.Parallel()
	a := comparetest.SynthFile(1, []int{1, 4}, comparetest.Typical(1, 60, 64))
	b, err := comparetest.Slowed(comparetest.SynthFile(2, []int{1, 4}, comparetest.Typical(1, 60, 64)), 1.5)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Compared([]plans.Doc{plans.Kovara{File: a}, plans.Kovara{File: b}}, []string{"before", "after"})
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(r)
	for _, want := range []string{"[1] before", "[2] after", "| Concurrency | Metric |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown has no %q:\n%s", want, md)
		}
	}
	var buf bytes.Buffer
	if err := CSV(&buf, r); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recs)-1, 2*len(r.Compared.Rows); got != want {
		t.Fatalf("got %d rows, want %d (metric × level × run)", got, want)
	}
	found := false
	for _, rec := range recs[1:] {
		// Concurrency, Metric, Unit, Run, Label, Value, Change, Better, …
		if rec[1] == "TTFT p50" && rec[3] == "2" {
			found = true
			change, err := strconv.ParseFloat(rec[6], 64)
			if err != nil || change < 20 || rec[7] != "-1" {
				t.Errorf("the slowed run's TTFT p50 reads change %q better %q, want about +50 and -1: %q", rec[6], rec[7], rec)
			}
		}
	}
	if !found {
		t.Errorf("no TTFT p50 row of run 2 in %q", recs)
	}
}

// TestJSONL: one line per measured request, each agreeing with its raw
// sample.
func TestJSONL(t *testing.T) {
	t.Parallel()
	f := comparetest.SynthFile(3, []int{1, 4}, comparetest.Typical(1, 20, 32))
	f.Local.Levels[1].Samples.Requests[5].Error = "http_503"
	var b bytes.Buffer
	if err := JSONL(&b, plans.Kovara{File: f}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if got, want := len(lines), 40; got != want {
		t.Fatalf("got %d lines, want %d", got, want)
	}
	var q Request
	if err := json.Unmarshal([]byte(lines[25]), &q); err != nil {
		t.Fatal(err)
	}
	s := f.Local.Levels[1].Samples.Requests[5]
	if q.Level != 4 || q.Set != 1 || q.User != s.Slot || q.Error == nil || *q.Error != "HTTP 503" {
		t.Errorf("got level %d set %d user %d error %v, want 4, 1, %d, HTTP 503", q.Level, q.Set, q.User, q.Error, s.Slot)
	}
	if got, want := q.SentMs, float64(s.StartUs)/1000; got != want {
		t.Errorf("sent_ms %v, want %v", got, want)
	}
	if got, want := len(q.ITLMs), s.ChunkCount-1; got != want {
		t.Errorf("%d gaps, want %d (chunks − 1)", got, want)
	}
	if q.TTFTMs == nil || *q.TTFTMs != float64(s.TTFTUs)/1000 {
		t.Errorf("ttft_ms %v, want %v", q.TTFTMs, float64(s.TTFTUs)/1000)
	}
	if err := JSONL(&b, planstest.Cases()[0].Doc); err != ErrNoSamples {
		t.Errorf("a document without samples: got %v, want ErrNoSamples", err)
	}
}

// TestHeading puts a heading's unit in brackets on one line.
func TestHeading(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"TTFT p50\nms", "TTFT p50 (ms)"},
		{"Latency\np50 ms", "Latency p50 (ms)"},
		{"Output\ntok/s", "Output (tok/s)"},
		{"Mean acceptance\nlength tok/step", "Mean acceptance length (tok/step)"},
		{"Tokens\nper J", "Tokens per J"},
		{"Concurrency", "Concurrency"},
		{"Power cap W", "Power cap (W)"},
	} {
		if got := Heading(c.in); got != c.want {
			t.Errorf("Heading(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestAddressesInTheServersWords: a stage's error is kept in the
// document itself, not in local, and quotes what the server said; an
// address in it (as the publish check finds them) or the endpoint's host
// is never reported.
func TestAddressesInTheServersWords(t *testing.T) {
	t.Parallel()
	for _, c := range planstest.Cases() {
		if c.Doc.Kind().ID != results.PlanStages || !c.Failed {
			continue
		}
		r := plans.ResultOf[*results.StagesResult](c.Doc)
		r.Local.EndpointHost = "gpubox"
		r.Users.Error = "4 of 4 requests failed (first: HTTP 502: upstream 10.1.2.3:8000 refused; proxy on gpubox down; see http://gpubox.lan/status)"
		rep, err := Of(c.Doc)
		if err != nil {
			t.Fatal(err)
		}
		md := Markdown(rep)
		for _, p := range []string{"10.1.2.3", "gpubox", "http://"} {
			if strings.Contains(md, p) {
				t.Errorf("the Markdown holds %q:\n%s", p, md)
			}
		}
		if !strings.Contains(md, "HTTP 502: upstream [private]") {
			t.Errorf("the error's words around the address are gone:\n%s", md)
		}
		return
	}
	t.Fatal("no failed three-stage document in planstest")
}

// TestRepeats: three runs of one repeated plan compared show each
// level's figures with "±" how far the runs spread, and the sentence of
// what that spread means.
func TestRepeats(t *testing.T) {
	t.Parallel()
	var docs []plans.Doc
	for i := range 3 {
		f := comparetest.SynthFile(uint64(10+i), []int{1, 4}, comparetest.Typical(1, 40, 64))
		f.Local.Group = &results.RunGroup{ID: "g1", Index: i + 1, Of: 3}
		docs = append(docs, plans.Kovara{File: f})
	}
	r, err := Compared(docs, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(r.Tables), 2; got != want {
		t.Fatalf("%d tables, want %d (the comparison and the repeats)", got, want)
	}
	rep := r.Tables[1]
	spread := 0
	for _, row := range rep.Rows {
		if strings.Contains(row[3], " ±") {
			spread++
		}
	}
	if spread == 0 {
		t.Errorf("no figure of the repeats says its spread: %q", rep.Rows)
	}
	if md := Markdown(r); !strings.Contains(md, "runs of the same plan came out up to") {
		t.Errorf("the Markdown does not say what the spread means:\n%s", md)
	}
	// Runs of no one group have no such table.
	docs[2].(plans.Kovara).File.Local.Group = &results.RunGroup{ID: "g2", Index: 1, Of: 1}
	if r, _ := Compared(docs, nil); len(r.Tables) != 1 {
		t.Errorf("runs of two groups: %d tables, want 1", len(r.Tables))
	}
}

// TestNamesThatSayNothingPrivate: an endpoint named like its engine does
// not blank the engine's name out of the conditions.
func TestNamesThatSayNothingPrivate(t *testing.T) {
	t.Parallel()
	f := comparetest.Session([]int{1})
	f.Local.EndpointName, f.Local.EndpointHost = "vllm", "vllm"
	r, err := Of(plans.Kovara{File: f})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Conditions[0]; !strings.Contains(got, "vLLM 0.10.1") {
		t.Errorf("the conditions lost the engine: %q", got)
	}
}

// TestModelFolderStaysHome: llama-server names its model by its -m path;
// the folder says whose machine it was, so every format keeps only the
// file's name. A hub id is not a path and stays whole.
func TestModelFolderStaysHome(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ model, want string }{
		{"/home/alice/models/tiny.gguf", "/home/alice/models/"},
		{`C:\Users\bob\m.gguf`, `C:\Users\bob\`},
		{"~/m/q4.gguf", "~/m/"},
		{"acme/llama-8b", ""},
		{"tiny.gguf", ""},
	} {
		if got := results.ModelFolder(tc.model); got != tc.want {
			t.Errorf("ModelFolder(%q) = %q, want %q", tc.model, got, tc.want)
		}
	}
	if got, want := results.ModelName("/home/alice/models/tiny.gguf"), "tiny.gguf"; got != want {
		t.Errorf("ModelName = %q, want %q", got, want)
	}
	d := plans.NewStages(planstest.LlamaStages(t))
	if !strings.HasPrefix(d.Model(), "/work/servers/models/") {
		t.Fatalf("the capture's model is %q, want its -m path", d.Model())
	}
	r, err := Of(d)
	if err != nil {
		t.Fatal(err)
	}
	var html strings.Builder
	if err := HTML(&html, []plans.Doc{d}, nil); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"md": Markdown(r), "html": html.String()} {
		if strings.Contains(out, "/work/servers") || strings.Contains(out, redactedAs+"tiny.gguf") {
			t.Errorf("the %s names the model's folder", name)
		}
		if !strings.Contains(out, "tiny.gguf") {
			t.Errorf("the %s lost the model's file name", name)
		}
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "so the cold prefill was 1878 prompt tokens") }) {
		t.Errorf("notes %q: the stages' warning beside the table is not in the report", r.Notes)
	}
}

// TestServerWordsEscaped: a model's name comes from the server, a label
// from the person; in the Markdown each is shown as written, never as a
// tag, a link, emphasis or code, and a table cell is not split; in the
// CSV none is read as a formula by a spreadsheet. (The HTML page's
// escaping: TestHTMLEscapesEveryText.)
func TestServerWordsEscaped(t *testing.T) {
	t.Parallel()
	const model = "<img src=x onerror=alert(1)> [click](evil) *bold* `code` a|b"
	const label = "=SUM(A1:A9)"
	runs := synthRuns(t)
	for _, d := range runs[:2] {
		f := d.(plans.Kovara).File
		for i := range f.Runs {
			f.Runs[i].ModelID = model
		}
	}
	rep, err := Compared(runs[:2], []string{label, "-2+cmd|' /C calc'!A0"})
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(rep)
	for _, bad := range []string{" <img", "](", " *bold*", " `code`"} {
		if strings.Contains(md, bad) {
			t.Errorf("the Markdown holds %q as markup:\n%s", bad, md)
		}
	}
	if !strings.Contains(md, `\<img src=x onerror=alert(1)\> [click]\(`) {
		t.Errorf("the Markdown does not show the model's name escaped:\n%s", md)
	}
	var b bytes.Buffer
	if err := CSV(&b, rep); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	sawLabel := 0
	for _, rec := range recs {
		for _, f := range rec {
			if f != "" && strings.ContainsRune("=@+-", rune(f[0])) && strings.ContainsAny(f, "(|!") {
				t.Errorf("the CSV holds a cell a spreadsheet would run: %q", f)
			}
			if f == "'"+label {
				sawLabel++
			}
		}
	}
	if sawLabel == 0 {
		t.Errorf("the CSV lost the label (want it as text, '%s)", label)
	}
}
