package results

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The plans, by the names that --plan, the library's index and a
// document's local.plan use.
const (
	PlanKovara   = "kovara"
	PlanStages   = "stages"
	PlanSpecDec  = "specdec"
	PlanCapacity = "capacity"
	PlanContext  = "context"
	PlanTune     = "tune"
	PlanRate     = "rate"
	PlanAnswers  = "answers"
)

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
var localOnly = map[string]string{
	FormatStages:   "This is a three-stage plan result (" + FormatStages + "), kept on this machine: only kovara-benchmark-results files can be published. Its wiki block is the way to share it.",
	FormatCapacity: "This is a capacity plan result (" + FormatCapacity + "): an answer for one service level, kept on this machine; only kovara-benchmark-results files can be published.",
	FormatContext:  "This is a context plan result (" + FormatContext + "): speed against context depth on one server, kept on this machine; only kovara-benchmark-results files can be published.",
	FormatTune:     "This is a settings comparison (" + FormatTune + "): it names the commands that started your server and is kept on this machine; its runs are ordinary results files, and those can be published one by one.",
	FormatRate:     "This is a rate plan result (" + FormatRate + "): open-loop requests at offered rates on one server, not the Kovara method's closed loop, kept on this machine; only kovara-benchmark-results files can be published.",
	FormatAnswers:  "This is an answers comparison (" + FormatAnswers + "): two of your servers' answer distributions token by token, with the reference answers' tokens kept on this machine; only kovara-benchmark-results files can be published. Its report holds the figures without a word of the answers.",
	FormatSpecDec:  "This is a speculative-decoding measurement (" + FormatSpecDec + "): it stops naturally on representative prompts, so its numbers are not Kovara records and can never be published.",
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
