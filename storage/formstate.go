package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// FormState is what the app's Benchmark form last held, restored when the
// app starts again: the endpoint, model and plan chosen, the settings
// comparison's rows and rounds, and the rate plan's own load. It is this
// machine's own (form.json in the config folder, beside endpoints.yaml):
// nothing exported reads it. It has no place for an API key; keys live
// only in the keyring.
type FormState struct {
	Endpoint string         `json:"endpoint,omitempty"` // a saved endpoint's name, or the simulator's
	Model    string         `json:"model,omitempty"`
	Plan     string         `json:"plan,omitempty"` // the plan's id (results.Plan…)
	Tune     *TuneFormState `json:"tune,omitempty"`
	Rate     *RateFormState `json:"rate,omitempty"`
}

// RateFormState is the rate plan's "Your own load" as typed: a prompts
// file's path (this machine's own, as the whole file is), whether its
// malformed lines are skipped, the shared prefix's tokens, its groups
// and the turns per conversation.
type RateFormState struct {
	PromptsFile  string `json:"prompts_file,omitempty"`
	SkipBad      bool   `json:"skip_bad,omitempty"`
	SharedPrefix string `json:"shared_prefix,omitempty"`
	PrefixGroups string `json:"prefix_groups,omitempty"`
	Turns        string `json:"turns,omitempty"`
}

// TuneFormState is the settings comparison's form: its rows as typed
// (commands the person wrote on this machine), its rounds and the Kovara
// plan each run measures. Each field is as typed; an empty one is the
// form's default.
type TuneFormState struct {
	Rows         []TuneFormRow `json:"rows"`
	Rounds       string        `json:"rounds,omitempty"`
	Concurrency  string        `json:"concurrency,omitempty"`
	Requests     string        `json:"requests,omitempty"`
	InputTokens  string        `json:"input_tokens,omitempty"`
	OutputTokens string        `json:"output_tokens,omitempty"`
	Timeout      string        `json:"timeout,omitempty"`       // seconds
	StartTimeout string        `json:"start_timeout,omitempty"` // the server's start-up, seconds
	// NoAnswers: the outputs check was unticked.
	NoAnswers bool `json:"no_answers,omitempty"`
}

// TuneFormRow is one setting's row: its name, how it is reached
// (setup.ByCommand, ByModel, ByHand), the command, model or instruction,
// and the command run before each of its turns.
type TuneFormRow struct {
	Name   string `json:"name"`
	How    string `json:"how"`
	What   string `json:"what,omitempty"`
	Before string `json:"before,omitempty"`
}

// maxFormState bounds the file read back: a form of eight rows is a few
// kilobytes.
const maxFormState = 1 << 20

// FormStore keeps the form's state in form.json in the config folder.
type FormStore struct {
	path string
	mu   sync.Mutex
}

// OpenFormState opens the store in configDir (the file appears on the
// first save).
func OpenFormState(configDir string) *FormStore {
	return &FormStore{path: filepath.Join(configDir, "form.json")}
}

// Load reads the form's last state: the zero state when there is none.
func (s *FormStore) Load() (FormState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st FormState
	if _, err := os.Stat(s.path); errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	data, err := ReadBounded(s.path, maxFormState, "the form's state")
	if err != nil {
		return st, fmt.Errorf("the form's last state: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return FormState{}, fmt.Errorf("%s is not the form's state: %w", s.path, err)
	}
	return st, nil
}

// Save replaces the form's state; only this user may read it (the rows
// hold the person's own commands).
func (s *FormStore) Save(st FormState) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("the form's state: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return WriteFileAtomic(s.path, append(data, '\n'), 0o600)
}
