package engine

import (
	"errors"
	"testing"
)

// TestResolveModel: the model asked for, Ollama's untagged name as its
// ":latest" (as `ollama run soft` takes it), the only one served; else
// the models served, said.
func TestResolveModel(t *testing.T) {
	ollama := []Model{{ID: "soft:latest"}, {ID: "soft-q4_0:latest"}, {ID: "qwen3:8b"}}
	tests := []struct {
		name   string
		models []Model
		want   string
		got    string
		fails  bool
	}{
		{"asked exactly", ollama, "qwen3:8b", "qwen3:8b", false},
		{"untagged is latest", ollama, "soft", "soft:latest", false},
		{"another tag is not latest", ollama, "qwen3", "", true},
		{"tagged not served", ollama, "soft:q8", "", true},
		{"the only one", []Model{{ID: "m"}}, "", "m", false},
		{"several, none asked", ollama, "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveModel(tc.models, tc.want, "")
			var ee *EndpointError
			if tc.fails != (err != nil) || got != tc.got || (err != nil && (!errors.As(err, &ee) || ee.Kind != ErrModelNotServed)) {
				t.Errorf("ResolveModel(%q) = %q, %v; want %q (fails %v)", tc.want, got, err, tc.got, tc.fails)
			}
		})
	}
}
