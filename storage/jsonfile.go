package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// jsonFile is one JSON document of the app's own in a file (form.json,
// settings.json): read back with a bound, the zero value while there is
// none, replaced atomically and readable by this user only, one reader
// or writer at a time.
type jsonFile[T any] struct {
	path string
	max  int64
	// what names the document in errors ("the form's state"), readWhat
	// where a read failed ("the form's last state").
	what, readWhat string
	mu             sync.Mutex
}

func (f *jsonFile[T]) load() (T, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var v T
	if _, err := os.Stat(f.path); errors.Is(err, os.ErrNotExist) {
		return v, nil
	}
	data, err := ReadBounded(f.path, f.max, f.what)
	if err != nil {
		return v, fmt.Errorf("%s: %w", f.readWhat, err)
	}
	if err := json.Unmarshal(data, &v); err != nil {
		var zero T
		return zero, fmt.Errorf("%s is not %s: %w", f.path, f.what, err)
	}
	return v, nil
}

func (f *jsonFile[T]) save(v T) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", f.what, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return WriteFileAtomic(f.path, append(data, '\n'), 0o600)
}
