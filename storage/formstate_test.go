package storage

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFormState: the form's state reads back as saved, from a store
// opened again on the same folder; none saved reads as the zero state; a
// mangled file is an error, not a silent empty form; only the user may
// read the file.
func TestFormState(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := OpenFormState(dir).Load()
	if err != nil || !reflect.DeepEqual(st, FormState{}) {
		t.Fatalf("nothing saved: %+v %v", st, err)
	}
	want := FormState{Endpoint: "gpu box", Model: "qwen3:8b", Plan: "tune", Tune: &TuneFormState{Rows: []TuneFormRow{
		{Name: "np2", How: "command", What: "llama-server -m '/m/a b.gguf' -np 2 --port 8080", Before: "sudo nvidia-smi -pl 250"},
		{Name: "np8", How: "command", What: "OLLAMA_NUM_PARALLEL=4 ollama serve"},
		{Name: "q8", How: "model", What: "qwen3:8b-q8_0"},
		{Name: "hand", How: "manual", What: "restart Ollama with OLLAMA_NUM_PARALLEL=4"},
	}}, Forms: map[string]PlanFormState{
		"kovara": {"input_tokens": "300", "concurrency": "1,4", "seed": "7"},
		"tune":   {"rounds": "4", "answers": "no"},
		"rate":   {"prompts_file": "/home/me/prompts/chat log.jsonl", "skip_bad": "yes", "shared_prefix": "2000", "prefix_groups": "2", "turns": "5"},
	}}
	if err := OpenFormState(dir).Save(want); err != nil {
		t.Fatal(err)
	}
	got, err := OpenFormState(dir).Load()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v %v, want %+v", got, err, want)
	}
	info, err := os.Stat(filepath.Join(dir, "form.json"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("form.json: %v %v, want mode 0600", info, err)
	}
	os.WriteFile(filepath.Join(dir, "form.json"), []byte("{not json"), 0o600)
	if _, err := OpenFormState(dir).Load(); err == nil || !strings.Contains(err.Error(), "is not the form's state") {
		t.Errorf("mangled file: %v", err)
	}
}

// TestFormStateFromAnOlderApp: an older app's form.json — the settings
// comparison's fields beside its rows, the rate plan's own load in a
// place of its own — reads as this app's, each field in Forms under the
// key the form gives it; a field Forms has already is kept.
func TestFormStateFromAnOlderApp(t *testing.T) {
	t.Parallel()
	rows := []TuneFormRow{{Name: "a", How: "command", What: "llama-server -np 2"}, {Name: "b", How: "command", What: "llama-server -np 8"}}
	tests := []struct {
		name, file string
		want       FormState
	}{
		{"the settings comparison's fields and the rate plan's load",
			`{"plan": "tune", "tune": {"rows": [{"name": "a", "how": "command", "what": "llama-server -np 2"}, {"name": "b", "how": "command", "what": "llama-server -np 8"}],
			  "rounds": "3", "concurrency": "1,8", "requests": "12", "input_tokens": "300", "output_tokens": "70", "timeout": "90", "start_timeout": "45", "no_answers": true},
			  "rate": {"prompts_file": "/p.jsonl", "skip_bad": true, "shared_prefix": "100", "prefix_groups": "2", "turns": "5"}}`,
			FormState{Plan: "tune", Tune: &TuneFormState{Rows: rows}, Forms: map[string]PlanFormState{
				"tune": {"rounds": "3", "concurrency": "1,8", "requests": "12", "input_tokens": "300", "output_tokens": "70", "timeout": "90", "start_timeout": "45", "answers": "no"},
				"rate": {"prompts_file": "/p.jsonl", "skip_bad": "yes", "shared_prefix": "100", "prefix_groups": "2", "turns": "5"},
			}}},
		{"the answers ticked and the load's box clear say nothing",
			`{"tune": {"rows": [], "rounds": "3"}, "rate": {"turns": "5"}}`,
			FormState{Tune: &TuneFormState{Rows: []TuneFormRow{}}, Forms: map[string]PlanFormState{"tune": {"rounds": "3"}, "rate": {"turns": "5"}}}},
		{"this app's field wins",
			`{"forms": {"tune": {"rounds": "8"}}, "tune": {"rows": null, "rounds": "3", "requests": "12"}}`,
			FormState{Tune: &TuneFormState{}, Forms: map[string]PlanFormState{"tune": {"rounds": "8", "requests": "12"}}}},
		{"this app's file as it is",
			`{"forms": {"kovara": {"seed": "7"}}, "tune": {"rows": [{"name": "a", "how": "command", "what": "llama-server -np 2"}, {"name": "b", "how": "command", "what": "llama-server -np 8"}]}}`,
			FormState{Tune: &TuneFormState{Rows: rows}, Forms: map[string]PlanFormState{"kovara": {"seed": "7"}}}},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "form.json"), []byte(tt.file), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := OpenFormState(dir).Load()
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: read %+v %v\nwant %+v", tt.name, got, err, tt.want)
		}
	}
}
