package storage

import (
	"sort"
	"strings"
)

// Query narrows and orders the history. Empty fields match everything.
type Query struct {
	Text   string // in model, endpoint, engine, label, notes or id
	Model  string // substring of the model id, any case
	Engine string // substring of the engine, any case
	Kind   string // run kind: hardware or protocol
	SortBy string // "date" (default, newest first) or "tps" (best first)
}

// Filter returns the summaries that match q, in q's order. Unreadable
// files always stay in the list, so their reason is never hidden.
func Filter(list []Summary, q Query) []Summary {
	has := func(field, want string) bool {
		return want == "" || strings.Contains(strings.ToLower(field), strings.ToLower(want))
	}
	out := make([]Summary, 0, len(list))
	for _, s := range list {
		if s.Unreadable != "" {
			if q.Text == "" || has(s.ID, q.Text) {
				out = append(out, s)
			}
			continue
		}
		if !has(s.Model, q.Model) || !has(s.Engine, q.Engine) || (q.Kind != "" && s.RunKind != q.Kind) {
			continue
		}
		if q.Text != "" && !has(s.Model+"\n"+s.EndpointName+"\n"+s.Engine+"\n"+s.Label+"\n"+s.Notes+"\n"+s.ID, q.Text) {
			continue
		}
		out = append(out, s)
	}
	if q.SortBy == "tps" {
		sort.SliceStable(out, func(i, j int) bool { return out[i].BestOutputTPS > out[j].BestOutputTPS })
	}
	return out
}
