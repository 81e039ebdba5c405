package storage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ReadBounded reads the file at path when it holds at most limit bytes,
// without reading more than that of a bigger one. what names the kind of
// file the caller wants ("a results file", "a kovara.yaml manifest") in
// the sentence that says why a file cannot be read.
func ReadBounded(path string, limit int64, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s does not exist", path)
		}
		return nil, fmt.Errorf("cannot open %s: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a folder; choose %s inside it", path, what)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, &TooBigError{Path: path, Limit: limit, What: what}
	}
	return data, nil
}

// TooBigError is a file larger than its kind ever is.
type TooBigError struct {
	Path  string
	Limit int64
	What  string
}

func (e *TooBigError) Error() string {
	return fmt.Sprintf("%s is larger than %d MiB, far bigger than %s: is this the right file?", filepath.Base(e.Path), e.Limit>>20, e.What)
}
