package sim

import "testing"

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
