package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxFileSize is the largest results file Decode and PublishCheck accept.
// Real files are a few hundred kilobytes; the bound protects the app from a
// wrong or hostile file.
const MaxFileSize = 64 << 20

func sizeError(n int) error {
	return fmt.Errorf("the file is %.1f MiB; results files larger than %d MiB are refused", float64(n)/(1<<20), MaxFileSize>>20)
}

// Decode reads a results file written by this app or by the Python kovara
// CLI. It refuses files over MaxFileSize, validates against the schema
// (returning a *ValidationError that lists every violation), and only then
// fills a File. Unknown keys inside local are allowed by the schema and are
// dropped here; keys that differ from a known one only in letter case are
// refused, since encoding/json would otherwise read them as the known field.
func Decode(data []byte) (*File, error) {
	if len(data) > MaxFileSize {
		return nil, sizeError(len(data))
	}
	doc, err := validate(data)
	if err != nil {
		return nil, err
	}
	if err := checkCaseVariants(doc, fileShape(), nil); err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		// The schema accepts a few values Go cannot hold, such as 1.0 for
		// an integer or a number beyond int64.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fmt.Errorf("results file: field %s: %s does not fit %s", te.Field, te.Value, te.Type)
		}
		return nil, fmt.Errorf("results file: %w", err)
	}
	return &f, nil
}

// Marshal writes f as indented JSON with a trailing newline and validates
// the bytes before returning them, so every file this app writes is valid.
// Nil slices are written as empty arrays. f is not modified.
func Marshal(f *File) ([]byte, error) {
	if f == nil {
		return nil, errors.New("results: Marshal of a nil *File")
	}
	out := *f
	if out.Runs == nil {
		out.Runs = []Run{}
	}
	if out.Local.ServedModels == nil {
		out.Local.ServedModels = []string{}
	}
	if out.Local.Levels == nil {
		out.Local.Levels = []LevelLocal{}
	}
	if out.Local.Warnings == nil {
		out.Local.Warnings = []string{}
	}
	data, err := encodeIndented(&out)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	if err := Validate(data); err != nil {
		return nil, fmt.Errorf("results: refusing to write an invalid file: %w", err)
	}
	return data, nil
}

// encodeIndented is json.MarshalIndent with two spaces, no HTML escaping
// (model ids and messages stay readable) and a trailing newline.
func encodeIndented(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
