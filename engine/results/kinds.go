package results

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The plans, by the names that --plan, the library's index and a
// document's local.plan use: the Kovara method's here, each other plan's
// beside its document (Plan… in its file).
const PlanKovara = "kovara"

// DocumentFormat reads a document's top-level "format" and
// "format_version" without validating the rest, so a reader (the library,
// an importer) can tell a kovara-benchmark-results file from this app's
// other document kinds before decoding it.
func DocumentFormat(data []byte) (format string, version int, err error) {
	if len(data) > MaxFileSize {
		return "", 0, sizeError(len(data))
	}
	var head struct {
		Format        *string      `json:"format"`
		FormatVersion *json.Number `json:"format_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", 0, fmt.Errorf("not a JSON object: %w", err)
	}
	if head.Format == nil {
		return "", 0, errors.New(`the document has no "format" field`)
	}
	if head.FormatVersion != nil {
		if v, err := head.FormatVersion.Int64(); err == nil {
			version = int(v)
		}
	}
	return *head.Format, version, nil
}

// localOnly says, by format, why a document of one of this app's own
// kinds cannot be published.
var localOnly = map[string]string{}

// localOnlyKind registers k's reason in localOnly, as each plan's
// document kind is declared in its own file.
func localOnlyKind[T any](k DocKind[T]) DocKind[T] {
	if k.LocalOnly == "" {
		panic("results: document kind " + k.Format + " says no reason it is kept on this machine")
	}
	localOnly[k.Format] = k.LocalOnly
	return k
}

// localOnlyReason is why a document of one of this app's own kinds cannot
// be published, or "" for any other document.
func localOnlyReason(data []byte) string {
	f, _, err := DocumentFormat(data)
	if err != nil {
		return ""
	}
	return localOnly[f]
}
