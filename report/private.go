package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// What a report may say follows Export's rule (results.PublishCheck: the
// published document is the file without local), loosened only as far as
// a report needs: it keeps the local figures a result's table and
// problems are computed from (partial level, error counts by class,
// prompt-cache counts, power), and blanks every text of local that names
// the endpoint or carries what the server or the person wrote.

// privateLocal are the keys of a document's local section whose text
// never leaves this machine: the endpoint's address, host and name, the
// models it served, the engine's own sentences (they may quote the
// server), the manifest's path and name, why the server went (its error),
// a settings comparison's commands, logs and answers, and the path of
// a prompts file or a replayed trace (its hash and counts, outside
// local, stay).
var privateLocal = []string{"endpoint", "endpoint_host", "endpoint_name", "served_models", "warnings", "manifest",
	"server_gone", "commands", "logs", "answers", "shard", "merged", "prompts_file", "trace_file",
	"other_endpoint", "other_endpoint_host", "other_endpoint_name"}

// droppedLocal are the keys of local left out of a report altogether:
// an answers comparison's reference answers are token ids, which the
// model's tokenizer turns back into the answers' words.
var droppedLocal = []string{"reference"}

// privateLevel are the same in each of local.levels: the server's error
// messages by class (the counts by class stay).
var privateLevel = []string{"messages"}

// privateTelemetry: the GPU source's (and the wall plug's) host and what
// it said went wrong.
var privateTelemetry = []string{"host", "warnings"}

// goneSaid stands for local.server_gone, whose reason may quote a
// connection error with the address in it.
const goneSaid = "the server stopped answering"

// Shareable is d with the private text of its local section blanked
// (privateLocal): what every report is built from.
func Shareable(d plans.Doc) (plans.Doc, error) {
	sd, _, err := shareable(d)
	return sd, err
}

// shareable is Shareable and the private texts it took out, which
// redact then keeps out of anything computed from the rest.
func shareable(d plans.Doc) (plans.Doc, []string, error) {
	data, err := d.Marshal()
	if err != nil {
		return nil, nil, fmt.Errorf("read the result: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, nil, fmt.Errorf("read the result: %w", err)
	}
	var private []string
	if local, ok := top["local"].(map[string]any); ok {
		gone, _ := local["server_gone"].(string)
		private = blankKeys(local, privateLocal, private)
		for _, k := range droppedLocal {
			delete(local, k)
		}
		if gone != "" {
			local["server_gone"] = goneSaid
		}
		if levels, ok := local["levels"].([]any); ok {
			for _, l := range levels {
				if m, ok := l.(map[string]any); ok {
					private = blankKeys(m, privateLevel, private)
				}
			}
		}
		if tel, ok := local["telemetry"].(map[string]any); ok {
			private = blankKeys(tel, privateTelemetry, private)
			// The other programs on the cards are the person's own:
			// their names never leave (a finding then counts them).
			if procs, ok := tel["gpu_processes"].(map[string]any); ok {
				for _, when := range []string{"start", "end"} {
					if list, ok := procs[when].([]any); ok {
						for _, p := range list {
							if m, ok := p.(map[string]any); ok {
								private = blankKeys(m, []string{"name"}, private)
							}
						}
					}
				}
			}
		}
		if wall, ok := local["wall"].(map[string]any); ok {
			// The plug's address and what it said, as the GPU source's.
			private = blankKeys(wall, privateTelemetry, private)
		}
	}
	out, err := json.Marshal(top)
	if err != nil {
		return nil, nil, fmt.Errorf("write the shareable result: %w", err)
	}
	sd, err := plans.Decode(out)
	if err != nil {
		return nil, nil, fmt.Errorf("read the shareable result: %w", err)
	}
	// A served model that is the model measured is said anyway, and a
	// name that is a word of the model or the engine ("llama", "vllm")
	// says nothing private, as the publish check lets such hosts be.
	said := strings.ToLower(sd.Model() + " " + sd.Summary().Engine)
	if m, ok := sd.(interface{ Models() []string }); ok {
		// A comparison of two models measured both.
		said += " " + strings.ToLower(strings.Join(m.Models(), " "))
	}
	private = slices.DeleteFunc(private, func(s string) bool { return len(s) < 4 || strings.Contains(said, strings.ToLower(s)) })
	if dir := results.ModelFolder(sd.Model()); dir != "" {
		private = append(private, dir)
	}
	return sd, private, nil
}

// blankKeys blanks every text under m's keys, keeping the shape the
// document's reader expects, and adds the texts to private.
func blankKeys(m map[string]any, keys []string, private []string) []string {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			m[k] = blank(v, &private)
		}
	}
	return private
}

func blank(v any, private *[]string) any {
	switch x := v.(type) {
	case string:
		if x != "" {
			*private = append(*private, x)
			if u, rest, ok := strings.Cut(x, "://"); ok && u != "" {
				// The address's host alone, as a message may quote it.
				host, _, _ := strings.Cut(rest, "/")
				*private = append(*private, host)
			}
		}
		return ""
	case []any:
		for i := range x {
			x[i] = blank(x[i], private)
		}
		return x
	case map[string]any:
		for k := range x {
			x[k] = blank(x[k], private)
		}
		return x
	}
	return v
}

// cleaner is what redact does to each line: every private text, then
// every address the publish check finds, replaced by redactedAs. The
// HTML page cleans its charts' words with it too.
func cleaner(private []string) func(string) string {
	private = slices.Clone(private)
	slices.SortFunc(private, func(a, b string) int { return len(b) - len(a) }) // longest first
	var hosts []string
	for _, t := range private {
		if !strings.ContainsAny(t, " \t\n") {
			hosts = append(hosts, t)
		}
	}
	return func(s string) string {
		for _, t := range private {
			if strings.HasSuffix(t, "/") || strings.HasSuffix(t, `\`) {
				s = strings.ReplaceAll(s, t, "") // a model's folder: its file name stays
				continue
			}
			s = strings.ReplaceAll(s, t, redactedAs)
		}
		for range 100 { // a line holds a few addresses at most
			_, m, found := results.AddressIn(s, hosts...)
			if !found || m == "" {
				break
			}
			s = strings.Replace(s, m, redactedAs, 1)
		}
		return s
	}
}

// redactedAs replaces a private text found in a report anyway.
const redactedAs = "[private]"

// redact keeps the private texts out of every line of r, should any
// figure or sentence computed from the rest still carry one, and any
// address the publish check would refuse (results.AddressIn: a URL, an
// IP address, a host and port, and any private text of one word — the
// endpoint's host among them — as a word), as a stage's error quoting
// the server may.
func redact(r Report, private []string) Report {
	clean := cleaner(private)
	each := func(xs []string) []string {
		for i := range xs {
			xs[i] = clean(xs[i])
		}
		return xs
	}
	r.Title, r.Headline = clean(r.Title), clean(r.Headline)
	each(r.Problems)
	each(r.Conditions)
	each(r.Verdict)
	each(r.Legend)
	each(r.Notes)
	if c := r.Compared; c != nil {
		r.Compared = &Rows{Rows: c.Rows, Labels: each(slices.Clone(c.Labels)), PerLevel: c.PerLevel}
	}
	for i := range r.Tables {
		t := &r.Tables[i]
		t.Title = clean(t.Title)
		t.Columns = each(slices.Clone(t.Columns))
		for j := range t.Rows {
			t.Rows[j] = each(slices.Clone(t.Rows[j]))
		}
	}
	return r
}
