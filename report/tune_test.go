package report

import (
	"bytes"
	"encoding/csv"
	"html"
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// TestTuneReportsCarryTheAnswers: a settings comparison whose answers
// were read token by token carries them in every format: the verdict
// says speed and answers together, and the table's answers' columns
// hold the first setting's floor and the other's figures (in the CSV as
// plain numbers under headings with their units, the floor as text).
func TestTuneReportsCarryTheAnswers(t *testing.T) {
	t.Parallel()
	r := planstest.Tune(false)
	r.Answers[0].Drift = &results.TuneDrift{Prompts: "kovara-answers-v1", Positions: 160, SameTop: 0.992, FloorSameTop: 1, KLMean: 0.0041,
		SameTopBeyond: true, KLBeyond: true, Ruler: "between what Q8_0 (0.0014) and Q6_K (0.0055) cost Llama 3 8B"}
	d := plans.NewTune(r)
	rep, err := Of(d)
	if err != nil {
		t.Fatal(err)
	}
	const verdict = "at 8 users output tok/s +50.0 % (±5 %); no difference beyond noise at 1 user; answers: same top token 99.2 %, KL divergence 0.0041 — beyond the floor on both; between what Q8_0 (0.0014) and Q6_K (0.0055) cost Llama 3 8B."

	var b bytes.Buffer
	if err := CSV(&b, rep); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := recs[0][len(recs[0])-2:], []string{"Same top token (%)", "KL divergence (nats)"}; !slices.Equal(got, want) {
		t.Errorf("CSV headings %q, want %q", got, want)
	}
	csvWant := map[string][]string{"-np 2": {"floor 100.0 %", "floor 0"}, "-np 8": {"99.2", "0.0041"}}
	for _, rec := range recs[1:] {
		if got, want := rec[len(rec)-2:], csvWant[rec[2]]; !slices.Equal(got, want) {
			t.Errorf("CSV row %q: answers' cells %q, want %q", rec, got, want)
		}
	}

	md := Markdown(rep)
	var page bytes.Buffer
	if err := writeHTML(&page, []plans.Doc{d}, nil, placeheld); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		format, text string
		want         []string
	}{
		{"Markdown", md, []string{verdict, "| Verdict | Same top token (%) | KL divergence (nats) |", "| baseline | floor 100.0 % | floor 0 |", "| better | 99.2 % | 0.0041 |"}},
		{"HTML", html.UnescapeString(page.String()), []string{verdict, "Same top token", "KL divergence", ">floor 100.0 %</td>", ">floor 0</td>", ">99.2 %</td>", ">0.0041</td>"}},
	}
	for _, tt := range tests {
		for _, want := range tt.want {
			if !strings.Contains(tt.text, want) {
				t.Errorf("%s lacks %q", tt.format, want)
			}
		}
	}
}
