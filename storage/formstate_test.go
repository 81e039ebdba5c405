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
	want := FormState{Endpoint: "gpu box", Model: "qwen3:8b", Plan: "tune", Tune: &TuneFormState{Rounds: "4", Rows: []TuneFormRow{
		{Name: "np2", How: "command", What: "llama-server -m '/m/a b.gguf' -np 2 --port 8080", Before: "sudo nvidia-smi -pl 250"},
		{Name: "np8", How: "command", What: "OLLAMA_NUM_PARALLEL=4 ollama serve"},
		{Name: "q8", How: "model", What: "qwen3:8b-q8_0"},
		{Name: "hand", How: "manual", What: "restart Ollama with OLLAMA_NUM_PARALLEL=4"},
	}}, Rate: &RateFormState{PromptsFile: "/home/me/prompts/chat log.jsonl", SkipBad: true, SharedPrefix: "2000", PrefixGroups: "2", Turns: "5"}}
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
