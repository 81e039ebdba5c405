package engine

import (
	"fmt"
	"math"

	"github.com/kovara/desktop/engine/results"
)

// ContextError is a plan whose prompts and answers cannot fit the context
// the server reported at its endpoint check. A prompt longer than the
// context is refused ("exceeds the available context size"); a prompt
// that fits with an answer that does not is cut short when the context
// fills (llama-server b9749 answered 182 of 500 tokens, finish_reason
// "length", after an 8,010-token prompt in 8,192). Either way the run
// would not measure the plan, so it is refused before the first request.
type ContextError struct {
	Input, Output int // the plan's prompt and answer lengths, in tokens
	// Margin is how far over Input a calibrated prompt may come out (the
	// calibration's tolerance). The chat template needs none of its own:
	// calibration counts it in the prompt, as the server does.
	Margin  int
	Context int    // the server's context, in tokens
	Source  string // where the server reported it (results.Detection.ContextSource)
	Family  string // the engine family, when known
	// Lower names what to lower, in the caller's words; "" names the
	// CLI's flags.
	Lower string
	// Truncated: the server did not say its context, but cut longer
	// prompts to Context tokens without an error (seen in calibration:
	// more words, no more prompt tokens).
	Truncated bool
	// Calibrated: calibration met the context (Met says how) after the
	// check let the plan through: a prompt refused for it, or none near
	// the target with room for the answers. Largest is then the longest
	// input that fits (0 when the server said no context), and
	// TokensPerWord and Overhead what calibration measured of this
	// model's tokenizer (0 when it could not tell).
	Calibrated    bool
	Met           string
	Largest       int
	TokensPerWord float64
	Overhead      int
	// Accepted is the longest calibration prompt the server took, in
	// tokens (0 for none): a bound when it said no context.
	Accepted int
}

func (e *ContextError) Error() string {
	if e.Calibrated {
		return e.calibratedError()
	}
	need := e.Input + e.Output
	msg := fmt.Sprintf("the plan asks for %d-token prompts and %d-token answers, %d tokens", e.Input, e.Output, need)
	if need <= e.Context {
		msg += fmt.Sprintf(", and a calibrated prompt may come out up to %d tokens longer", e.Margin)
	}
	if e.Truncated {
		msg += fmt.Sprintf(", but the server cut longer prompts to %d tokens without an error (%s)", e.Context, e.Source)
	} else {
		msg += fmt.Sprintf(", but the server's context holds %d", e.Context)
		if e.Source != "" {
			msg += " (from " + e.Source + ")"
		}
	}
	switch {
	case e.Truncated:
		msg += ", so every prompt would be that long, not what the plan asks for"
	case e.Input >= e.Context && e.Family == results.FamilyOllama:
		msg += fmt.Sprintf(", so every prompt would be cut to %d tokens without an error (Ollama truncates)", e.Context)
	case e.Input >= e.Context:
		msg += ", so every request would be refused"
	case need > e.Context:
		msg += fmt.Sprintf(", so answers would stop short of %d tokens", e.Output)
	default:
		msg += fmt.Sprintf(", so answers could stop short of %d tokens", e.Output)
	}
	lower := e.Lower
	if lower == "" {
		lower = "--input-tokens or --output-tokens"
	}
	msg += ": lower " + lower + ", or start the server with a larger context"
	if fix := results.ContextFix(e.Family); fix != "" {
		msg += " (" + fix + ")"
	}
	return msg
}

// calibratedError is the sentence for a plan whose calibration met the
// context: what happened, the largest input that fits, this tokenizer,
// and the family's fix.
func (e *ContextError) calibratedError() string {
	msg := "calibration met the server's context before warmup: " + e.Met
	if e.Context > 0 {
		msg += fmt.Sprintf("; the server holds %d tokens per request", e.Context)
		if e.Source != "" {
			msg += " (from " + e.Source + ")"
		}
	}
	msg += fmt.Sprintf(", and the plan asks for %d-token prompts and %d-token answers", e.Input, e.Output)
	if e.TokensPerWord > 0 {
		msg += fmt.Sprintf(" (this model's tokenizer makes about %.2f tokens of each prompt word, plus %d for the chat template and instruction)", e.TokensPerWord, max(e.Overhead, 0))
	}
	lower := e.Lower
	if lower == "" {
		lower = "--input-tokens"
	}
	if e.Largest > 0 {
		msg += fmt.Sprintf(": the largest input that fits is %d tokens with %d-token answers; lower %s to %d or less, or start the server with a larger context",
			e.Largest, e.Output, lower, e.Largest)
	} else if safe := e.Accepted - e.Output; safe > 0 {
		// No context said: a prompt it took, less the answers, fits.
		msg += fmt.Sprintf(": the server does not say its context size, but it took a %d-token prompt, so an input of %d tokens fits with %d-token answers; lower %s to %d or less, or start the server with a larger context",
			e.Accepted, safe, e.Output, lower, safe)
	} else {
		msg += fmt.Sprintf(": lower %s, or start the server with a larger context", lower)
	}
	if fix := results.ContextFix(e.Family); fix != "" {
		msg += " (" + fix + ")"
	}
	return msg
}

// FitContext says whether a plan's prompts of input tokens and answers of
// output tokens fit the context d reports: nil when they do, or when the
// server reported none.
func FitContext(input, output int, d *results.Detection) *ContextError {
	if d == nil || d.ContextLength <= 0 {
		return nil
	}
	margin := int(math.Ceil(calibrationTolerance(input)))
	if input+output+margin <= d.ContextLength {
		return nil
	}
	return &ContextError{Input: input, Output: output, Margin: margin,
		Context: d.ContextLength, Source: d.ContextSource, Family: d.Family}
}
