package storage

import (
	"path/filepath"

	"github.com/kovara/desktop/engine/results"
)

// FormState is what the app's Benchmark form last held, restored when the
// app starts again: the endpoint, model and plan chosen, every plan's own
// form as typed, and the settings comparison's rows. It is this machine's
// own (form.json in the config folder, beside endpoints.yaml): nothing
// exported reads it. It has no place for an API key; keys live only in
// the keyring.
type FormState struct {
	Endpoint string `json:"endpoint,omitempty"` // a saved endpoint's name, or the simulator's
	Model    string `json:"model,omitempty"`
	Plan     string `json:"plan,omitempty"` // the plan's id (results.Plan…)
	// Forms is each plan's own form, by the plan's id (results.Plan…).
	Forms map[string]PlanFormState `json:"forms,omitempty"`
	// Tune is the settings comparison's rows (and, in an older app's
	// file, its other fields: Load moves those into Forms).
	Tune *TuneFormState `json:"tune,omitempty"`
	// Rate is an older app's rate plan's own load: Load moves it into
	// Forms, and Save never writes it.
	Rate *RateFormState `json:"rate,omitempty"`
}

// PlanFormState is one plan's form: each field as typed (a choice by its
// words, a box ticked "yes" or "no"), by the key the app's form gives it.
// A field left out, or empty, is the form's default.
type PlanFormState map[string]string

// RateFormState is an older app's rate plan's "Your own load" as typed,
// read from its form.json only (FormState.Rate).
type RateFormState struct {
	PromptsFile  string `json:"prompts_file,omitempty"`
	SkipBad      bool   `json:"skip_bad,omitempty"`
	SharedPrefix string `json:"shared_prefix,omitempty"`
	PrefixGroups string `json:"prefix_groups,omitempty"`
	Turns        string `json:"turns,omitempty"`
}

// TuneFormState is the settings comparison's rows as typed (commands the
// person wrote on this machine). The fields after Rows are an older
// app's, read from its form.json only: Load moves them into
// FormState.Forms.
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

// upgrade moves what an older app kept in its own places (the settings
// comparison's fields beside its rows, the rate plan's own load) into
// Forms under the keys the app's forms give those fields; a field Forms
// already has is kept.
func (st *FormState) upgrade() {
	put := func(plan, key, v string) {
		if v == "" {
			return
		}
		if st.Forms == nil {
			st.Forms = map[string]PlanFormState{}
		}
		if st.Forms[plan] == nil {
			st.Forms[plan] = PlanFormState{}
		}
		if _, ok := st.Forms[plan][key]; !ok {
			st.Forms[plan][key] = v
		}
	}
	yes := func(b bool, v string) string {
		if b {
			return v
		}
		return ""
	}
	if t := st.Tune; t != nil {
		for _, f := range []struct{ key, v string }{
			{"rounds", t.Rounds}, {"concurrency", t.Concurrency}, {"requests", t.Requests},
			{"input_tokens", t.InputTokens}, {"output_tokens", t.OutputTokens},
			{"timeout", t.Timeout}, {"start_timeout", t.StartTimeout}, {"answers", yes(t.NoAnswers, "no")},
		} {
			put(results.PlanTune, f.key, f.v)
		}
		st.Tune = &TuneFormState{Rows: t.Rows}
	}
	if r := st.Rate; r != nil {
		for _, f := range []struct{ key, v string }{
			{"prompts_file", r.PromptsFile}, {"skip_bad", yes(r.SkipBad, "yes")},
			{"shared_prefix", r.SharedPrefix}, {"prefix_groups", r.PrefixGroups}, {"turns", r.Turns},
		} {
			put(results.PlanRate, f.key, f.v)
		}
		st.Rate = nil
	}
}

// maxFormState bounds the file read back: a form of eight rows is a few
// kilobytes.
const maxFormState = 1 << 20

// FormStore keeps the form's state in form.json in the config folder.
type FormStore struct{ file jsonFile[FormState] }

// OpenFormState opens the store in configDir (the file appears on the
// first save).
func OpenFormState(configDir string) *FormStore {
	return &FormStore{file: jsonFile[FormState]{path: filepath.Join(configDir, "form.json"), max: maxFormState,
		what: "the form's state", readWhat: "the form's last state"}}
}

// Load reads the form's last state: the zero state when there is none. An
// older app's file reads as this one's (upgrade).
func (s *FormStore) Load() (FormState, error) {
	st, err := s.file.load()
	if err == nil {
		st.upgrade()
	}
	return st, err
}

// Save replaces the form's state; only this user may read it (the rows
// hold the person's own commands).
func (s *FormStore) Save(st FormState) error { return s.file.save(st) }
