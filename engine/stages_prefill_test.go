package engine

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

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
			p := DefaultStagesPlan()
			p.Quick, p.Users = true, 2
			res, err := RunStages(context.Background(), p, Endpoint{URL: ts.URL}, Observer{})
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
