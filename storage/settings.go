package storage

import (
	"path/filepath"

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
type SettingsStore struct{ file jsonFile[Settings] }

// OpenSettings opens the store in configDir (the file appears on the
// first save).
func OpenSettings(configDir string) *SettingsStore {
	return &SettingsStore{file: jsonFile[Settings]{path: filepath.Join(configDir, "settings.json"), max: maxSettings,
		what: "the app's settings", readWhat: "the app's settings"}}
}

// Load reads the settings: the zero settings when there are none.
func (s *SettingsStore) Load() (Settings, error) { return s.file.load() }

// Save replaces the settings (WriteFileAtomic makes the folder).
func (s *SettingsStore) Save(st Settings) error { return s.file.save(st) }
