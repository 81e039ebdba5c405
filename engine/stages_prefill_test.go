package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// TestStagesPrefillFails: when the cold prefill's calibration probe or
// its long prompt is refused, the stage says which request failed (in
// the document and as a warning), the other stages still run, and the
// result fails on it.
func TestStagesPrefillFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		over     int // refuse the prefill's prompts longer than this, bytes
		want     string
		measured bool // the probe's answer was read
	}{
		{"the calibration probe refused", 0, "the calibration request failed: ", false},
		{"the long prompt refused", 5000, "the prefill request failed: ", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := sim.New(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, NaturalStop: longAnswers})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if bytes.Contains(body, []byte("high mountain weather station")) && len(body) > tc.over {
					w.WriteHeader(http.StatusInternalServerError)
					io.WriteString(w, `{"error":{"message":"prompt refused"}}`)
					return
				}
				s.ServeHTTP(w, r)
			}))
			t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); s.Close() })
			p := setup.DefaultStagesPlan()
			p.Quick, p.Users = true, 2
			res, err := RunStages(context.Background(), p, setup.Endpoint{URL: ts.URL}, Observer{})
			if err != nil {
				t.Fatal(err)
			}
			ps := res.Prefill
			if ps == nil || !strings.HasPrefix(ps.Error, tc.want) || ps.TTFTMs != nil {
				t.Fatalf("prefill %+v, want an error starting %q", ps, tc.want)
			}
			if got := ps.ProbePromptTokens != nil; got != tc.measured {
				t.Errorf("probe measured %v, want %v", got, tc.measured)
			}
			if !slices.Contains(res.Warnings, "cold prefill: "+ps.Error) {
				t.Errorf("warnings %q do not say it", res.Warnings)
			}
			if len(res.Decode) != 3 || res.Users == nil || res.Users.AggregateTPS == nil || !slices.Equal(res.Failed(), []string{"prefill"}) {
				t.Errorf("decode %d, users %+v, failed %q: the other stages should run and the result fail", len(res.Decode), res.Users, res.Failed())
			}
		})
	}
}

// TestStagesPrefillCutSaysTheServersCount (#47): where the server's
// context cuts the cold prefill, the warning says the prefill's length as
// the server counted it — the table's figure — not the length aimed at
// ("about 1843 tokens" above a table of 1877), and the headline says the
// same.
func TestStagesPrefillCutSaysTheServersCount(t *testing.T) {
	tests := []struct {
		name   string
		counts bool // the server reports prompt tokens
	}{
		{"the server counts the prompt", true},
		{"the server counts nothing", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, NaturalStop: longAnswers, ContextLength: 2048}
			if !tc.counts {
				cfg.NoUsage = true
			}
			_, url := startSim(t, cfg)
			p := setup.DefaultStagesPlan()
			p.Quick, p.Users = true, 2
			res, err := RunStages(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
			if err != nil {
				t.Fatal(err)
			}
			ps := res.Prefill
			if ps == nil || ps.TargetTokens != 1843 {
				t.Fatalf("prefill %+v, want one cut to about 1843 tokens", ps)
			}
			want := "the server's context holds 2048 tokens, so the cold prefill was about 1843 tokens (the length aimed at: the server did not count them) instead of 2000"
			if tc.counts {
				if ps.PromptTokens == nil || *ps.PromptTokens == 1843 {
					t.Fatalf("prompt tokens %v: want the server's own count, unlike the aim", ps.PromptTokens)
				}
				want = fmt.Sprintf("the server's context holds 2048 tokens, so the cold prefill was %d prompt tokens (the server's count) instead of 2000", *ps.PromptTokens)
				if h := res.Headline(); !strings.Contains(h, fmt.Sprintf("a cold prefill of %d prompt tokens (the server's count) ran at", *ps.PromptTokens)) {
					t.Errorf("headline %q does not say the server's count", h)
				}
			}
			if !slices.Contains(res.Warnings, want) {
				t.Errorf("warnings %q lack %q", res.Warnings, want)
			}
		})
	}
}
