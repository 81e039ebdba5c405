package results

import "testing"

// TestTuneDriftKindsWords: the prompt kinds' KL divergences, the
// furthest first, with the top token's share where it moved.
func TestTuneDriftKindsWords(t *testing.T) {
	t.Parallel()
	d := &TuneDrift{Kinds: []TuneDriftKind{
		{Kind: "code", SameTop: 1, KLMean: 1.2e-4},
		{Kind: "json", SameTop: 0.97, KLMean: 0.0031},
		{Kind: "prose", SameTop: 1, KLMean: 0},
	}}
	if got, want := d.KindsWords(), "KL divergence by prompt: json 0.0031 (same top token 97.0 %), code 1.2e-04, prose 0"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := (&TuneDrift{}).KindsWords(); got != "" {
		t.Errorf("no kinds: %q", got)
	}
}
