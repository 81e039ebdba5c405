package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/kovara/desktop/engine/results"
)

// Settings are the app's own choices that belong to no form: the price
// of electricity the results' cost is figured at (issue #49). Kept in
// settings.json in the config folder; nothing exported reads it.
type Settings struct {
	// PricePerKWh and Currency price a kWh; 0 and "" when not given.
	PricePerKWh float64 `json:"price_per_kwh,omitempty"`
	Currency    string  `json:"currency,omitempty"`
}

// Price is the settings' price, or nil when none (or a hand-edited file
// holds one that is not a price).
func (s Settings) Price() *results.Price {
	if s.PricePerKWh == 0 && s.Currency == "" {
		return nil
	}
	p, err := results.ParsePrice(s.PricePerKWh, s.Currency)
	if err != nil {
		return nil
	}
	return p
}

// maxSettings bounds settings.json: a few fields.
const maxSettings = 64 << 10

// SettingsStore keeps Settings in settings.json in the config folder.
type SettingsStore struct {
	path string
	mu   sync.Mutex
}

// OpenSettings opens the store in configDir (the file appears on the
// first save).
func OpenSettings(configDir string) *SettingsStore {
	return &SettingsStore{path: filepath.Join(configDir, "settings.json")}
}

// Load reads the settings: the zero settings when there are none.
func (s *SettingsStore) Load() (Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st Settings
	if _, err := os.Stat(s.path); errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	data, err := ReadBounded(s.path, maxSettings, "the app's settings")
	if err != nil {
		return st, fmt.Errorf("the app's settings: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return Settings{}, fmt.Errorf("%s is not the app's settings: %w", s.path, err)
	}
	return st, nil
}

// Save replaces the settings.
func (s *SettingsStore) Save(st Settings) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("the app's settings: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return diskError("save the app's settings", err)
	}
	return WriteFileAtomic(s.path, append(data, '\n'), 0o600)
}
