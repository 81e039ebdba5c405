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

// goneSaid stands for local.server_gone, whose reason may quote a
// connection error with the address in it.
const goneSaid = "the server stopped answering"

// Shareable is d with the private text of its local section blanked
// (results.PrivateKeys: the keys of local whose text never leaves this
// machine, the same for every document kind): what every report is
// built from.
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
		for _, k := range results.PrivateKeys() {
			segs := strings.Split(k.Path, ".")
			if segs[0] != "local" {
				continue // every private key is under local
			}
			private = blankAt(local, segs[1:], k.Drop, private)
		}
		if gone != "" && local["server_gone"] == "" {
			// Its reason blanked, the headline still says the server
			// went.
			local["server_gone"] = goneSaid
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

// blankAt blanks every text under the key segs name beneath m (keys, a
// key ending in "[]" each element of its list), keeping the shape the
// document's reader expects, or deletes the key (drop), and adds the
// texts to private. A key the document does not have is left alone.
func blankAt(m map[string]any, segs []string, drop bool, private []string) []string {
	key, each := strings.CutSuffix(segs[0], "[]")
	v, ok := m[key]
	switch {
	case !ok:
	case len(segs) == 1 && drop:
		delete(m, key)
	case len(segs) == 1:
		m[key] = blank(v, &private)
	case each:
		list, _ := v.([]any)
		for _, e := range list {
			if em, ok := e.(map[string]any); ok {
				private = blankAt(em, segs[1:], drop, private)
			}
		}
	default:
		if vm, ok := v.(map[string]any); ok {
			private = blankAt(vm, segs[1:], drop, private)
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
