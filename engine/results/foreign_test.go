package results

import (
	"slices"
	"testing"
)

func TestForeignLoadProblems(t *testing.T) {
	tests := []struct {
		name string
		m    *ServerMetrics
		want []string
	}{
		{"no readings", nil, nil},
		{"alone", &ServerMetrics{Family: FamilyVLLM}, []string{}},
		{"running only", &ServerMetrics{ForeignLoad: []ForeignLoad{{Stage: "level 2", Readings: 40, Foreign: 12, MaxRequests: 3, MaxRunning: 3, MaxOurs: 1}}},
			[]string{"another client was using the server during level 2: up to 3 requests running, at most 1 of them this run's (in 12 of 40 server readings); its figures include that load — run it again when nothing else uses the server"}},
		{"some waiting", &ServerMetrics{ForeignLoad: []ForeignLoad{
			{Stage: "depth 8k", Readings: 9, Foreign: 3, MaxRequests: 2, MaxRunning: 1, MaxOurs: 1},
			{Stage: "depth 16k", Readings: 5, Foreign: 5, MaxRequests: 1, MaxRunning: 1, MaxOurs: 0}}},
			[]string{
				"another client was using the server during depth 8k: up to 2 requests running or waiting, at most 1 of them this run's (in 3 of 9 server readings); its figures include that load — run it again when nothing else uses the server",
				"another client was using the server during depth 16k: up to 1 request running, none of them this run's (in 5 of 5 server readings); its figures include that load — run it again when nothing else uses the server",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ForeignLoadProblems(tc.m); !slices.Equal(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A file whose server readings met another client has that problem, and
// its headline is not "Complete.".
func TestForeignLoadIsAProblem(t *testing.T) {
	f := &File{Complete: true, Local: Local{ServerMetrics: &ServerMetrics{Family: FamilyLlamaCpp,
		ForeignLoad: []ForeignLoad{{Stage: "level 1", Readings: 10, Foreign: 4, MaxRequests: 2, MaxRunning: 2, MaxOurs: 1}}}}}
	ws := Warnings(f)
	i := slices.IndexFunc(ws, func(w Warning) bool { return w.Kind == WarnForeignLoad })
	if i < 0 || ws[i].Severity != SeverityProblem {
		t.Fatalf("warnings %+v", ws)
	}
	if h := Headline(f, ws); h == "Complete." {
		t.Errorf("headline %q", h)
	}
}
