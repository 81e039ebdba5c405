package setup

import (
	"strings"
	"testing"
)

func TestParseBase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, root, host, err string
	}{
		{in: "http://10.0.0.5:8000", root: "http://10.0.0.5:8000", host: "10.0.0.5"},
		{in: "http://10.0.0.5:8000/", root: "http://10.0.0.5:8000", host: "10.0.0.5"},
		{in: "http://10.0.0.5:8000/v1", root: "http://10.0.0.5:8000", host: "10.0.0.5"},
		{in: "http://10.0.0.5:8000/v1/", root: "http://10.0.0.5:8000", host: "10.0.0.5"},
		{in: "10.0.0.5:8000", root: "http://10.0.0.5:8000", host: "10.0.0.5"},
		{in: "https://llm.home.lan/proxy/v1", root: "https://llm.home.lan/proxy", host: "llm.home.lan"},
		{in: "  http://[::1]:8080  ", root: "http://[::1]:8080", host: "::1"},
		{in: "", err: "empty"},
		{in: "ftp://x", err: "only http:// and https://"},
		{in: "http://", err: "no host"},
		{in: "http://user:pw@host:8000", err: "user name or password"},
		{in: "http://host:99999", err: "not a port"},
		{in: "http://host:8000/v1?x=1", err: "query"},
		{in: "http://ex ample:80", err: "not a valid address"},
		{in: "[::1]:8080", root: "http://[::1]:8080", host: "::1"},
		{in: "localhost:8080/v1", root: "http://localhost:8080", host: "localhost"},
		// Mistyped schemes are not host names.
		{in: "htp:/x", err: `"htp:/x" is not a server address: it should start with http:// or https://`},
		{in: "http:/10.0.0.5:8000", err: "should start with http:// or https://"},
		{in: "https:10.0.0.5", err: "should start with http:// or https://"},
		{in: "htp:", err: "should start with http:// or https://"},
		{in: "htp://x", err: "uses htp://"},
		{in: "https://:8000", err: "no host"},
		{in: "http:///v1", err: "no host"},
	}
	for _, tc := range tests {
		b, err := ParseBase(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseBase(%q) err = %v, want it to mention %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || b.Root != tc.root || b.Host != tc.host {
			t.Errorf("ParseBase(%q) = %+v, %v; want root %q host %q", tc.in, b, err, tc.root, tc.host)
		}
	}
}

func TestPlanValidate(t *testing.T) {
	t.Parallel()
	mod := func(f func(*KovaraPlan)) KovaraPlan { p := DefaultPlan(); f(&p); return p }
	tests := []struct {
		name string
		p    KovaraPlan
		want string
	}{
		{"default ok", DefaultPlan(), ""},
		{"concurrency 0", mod(func(p *KovaraPlan) { p.Concurrency = []int{0} }), "concurrency 0"},
		{"requests < concurrency", mod(func(p *KovaraPlan) { p.Concurrency = []int{1, 64}; p.Requests = 10 }), "less than concurrency 64"},
		{"input 0", mod(func(p *KovaraPlan) { p.InputTokens = 0 }), "input tokens"},
		{"output -1", mod(func(p *KovaraPlan) { p.OutputTokens = -1 }), "output tokens"},
		{"no levels", mod(func(p *KovaraPlan) { p.Concurrency = nil }), "no concurrency"},
		{"timeout", mod(func(p *KovaraPlan) { p.Timeout = 0 }), "timeout"},
	}
	for _, tc := range tests {
		err := tc.p.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}
