package sim

import (
	"strings"
	"testing"
)

func TestServingLineRoundTrip(t *testing.T) {
	t.Parallel()
	line := ServingLine(LlamaCpp, "tiny-1b", "http://127.0.0.1:41571")
	if got, ok := URLFromServingLine(line); !ok || got != "http://127.0.0.1:41571" {
		t.Errorf("URLFromServingLine(%q) = %q, %v", line, got, ok)
	}
	if got, ok := URLFromServingLine("listen tcp: address already in use\n"); ok {
		t.Errorf("a line without an address gave %q", got)
	}
}

func TestReadServingURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, out, want string
		fails           bool
	}{
		{"serving line", ServingLine(LlamaCpp, "tiny-1b", "http://127.0.0.1:41571") + "more output\n", "http://127.0.0.1:41571", false},
		{"an error instead", "listen tcp: address already in use\n", "", true},
		{"nothing", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadServingURL(strings.NewReader(tc.out))
			if got != tc.want || (err != nil) != tc.fails {
				t.Errorf("ReadServingURL(%q) = %q, %v; want %q, fails %v", tc.out, got, err, tc.want, tc.fails)
			}
		})
	}
}
