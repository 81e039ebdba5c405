package storage

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/setup"
)

func TestParseTuneFile(t *testing.T) {
	t.Parallel()
	text := `endpoint: http://127.0.0.1:8080
rounds: 3
start_timeout: 2m
plan:
  concurrency: [1, 8]
  requests: 24
  output_tokens: 64
  timeout: 300s
settings:
  - name: np2
    command: llama-server -m /models/tiny.gguf -np 2 --port 8080
  - name: np8
    command: llama-server -m /models/tiny.gguf -np 8 --port 8080
    before: sudo nvidia-smi -pl 250
  - name: q8
    model: tiny-q8
  - name: four
    by_hand: restart Ollama with OLLAMA_NUM_PARALLEL=4
  - name: ollama
    command: ollama serve
    env: [OLLAMA_NUM_PARALLEL=4]
    ssh: me@gpu-box
`
	f, err := ParseTuneFile([]byte(text), "tune.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := f.Plan
	if f.Endpoint != "http://127.0.0.1:8080" || p.Rounds != 3 || p.StartTimeout != 2*time.Minute || p.Inner.Requests != 24 ||
		!slices.Equal(p.Inner.Concurrency, []int{1, 8}) || p.Inner.OutputTokens != 64 || p.Inner.Timeout != 300*time.Second || p.Inner.InputTokens != setup.TuneDefaultPlan().InputTokens {
		t.Errorf("read %+v", f)
	}
	var hows []string
	for _, s := range p.Settings {
		hows = append(hows, s.How)
	}
	if want := []string{setup.ByCommand, setup.ByCommand, setup.ByModel, setup.ByHand, setup.ByCommand}; !slices.Equal(hows, want) {
		t.Errorf("hows %q, want %q", hows, want)
	}
	if s := p.Settings[4]; !slices.Equal(s.Env, []string{"OLLAMA_NUM_PARALLEL=4"}) || s.SSH != "me@gpu-box" || p.Settings[1].Before != "sudo nvidia-smi -pl 250" {
		t.Errorf("settings %+v", p.Settings)
	}
	got := f.Commands()
	want := []string{
		"np2: llama-server -m /models/tiny.gguf -np 2 --port 8080",
		"np8, before its turn: sudo nvidia-smi -pl 250",
		"np8: llama-server -m /models/tiny.gguf -np 8 --port 8080",
		"ollama (on me@gpu-box through ssh): OLLAMA_NUM_PARALLEL=4 ollama serve",
	}
	if !slices.Equal(got, want) {
		t.Errorf("commands shown:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseTuneFileRefused(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, text, want string }{
		{"unknown key", "rounds: 3\nsetings: []\n", `tune.yaml:2: setings: unknown key (did you mean "settings"?)`},
		{"unknown setting key", "settings:\n  - name: a\n    comand: x\n  - name: b\n    model: m\n", `tune.yaml:3: settings[0].comand: unknown key (did you mean "command"?)`},
		{"unknown plan key", "plan:\n  users: 4\nsettings:\n  - name: a\n    model: m\n  - name: b\n    model: n\n", `tune.yaml:2: plan.users: unknown key`},
		{"no how", "settings:\n  - name: a\n  - name: b\n    model: m\n", "tune.yaml:2: settings[0]: says nothing of how to reach it"},
		{"both", "settings:\n  - name: a\n    command: x\n    by_hand: y\n  - name: b\n    model: m\n", "give a command: the app runs, or by_hand:"},
		{"one setting", "settings:\n  - name: a\n    model: m\n", "tune.yaml:1: a settings comparison takes 2 to 8 settings, not 1"},
		{"no settings", "rounds: 2\n", "tune.yaml:1: settings: the file has no settings"},
		{"bad env", "settings:\n  - name: a\n    command: ollama serve\n    env: [NUM=1, oops]\n  - name: b\n    model: m\n", `tune.yaml:4: settings[0].env[1]: "oops" is not NAME=VALUE`},
		{"bad time", "start_timeout: soon\nsettings: []\n", `tune.yaml:1: start_timeout: "soon" is not a time`},
		{"rounds 0", "rounds: 0\nsettings: []\n", "tune.yaml:1: rounds: must be at least 1 round (got 0)"},
		{"syntax", "settings: [\n", "tune.yaml:2: YAML syntax error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTuneFile([]byte(tt.text), "tune.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestConfirmations(t *testing.T) {
	t.Parallel()
	c := OpenConfirmations(t.TempDir())
	if c.Has("abc") {
		t.Fatal("confirmed before anything was")
	}
	if err := c.Add("abc"); err != nil {
		t.Fatal(err)
	}
	if !c.Has("abc") || c.Has("abd") || c.Has("") {
		t.Error("the confirmation is not kept as given")
	}
}
