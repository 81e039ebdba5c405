package results

import (
	"encoding/json"
	"fmt"
	"time"
)

// What the documents of the plans beyond the Kovara method share.

// SimulatedNote says a result was made against the built-in simulator,
// in every plan's view alike.
const SimulatedNote = "Simulated: made against the built-in simulator."

// Token sources, from best to worst. Every count in a plan result names
// its source.
const (
	TokensUsage   = "usage"   // the server's usage.completion_tokens / prompt_tokens
	TokensTimings = "timings" // llama.cpp's timings.predicted_n / prompt_n
	TokensChunks  = "chunks"  // text-bearing stream chunks (a chunk may hold several tokens)
)

// PlanHeader begins the documents of the capacity, context,
// speculative-decoding and settings-comparison plans: what the document
// is, whether the plan ran to its end, when, and with which model.
// Embedded first, its fields stay the document's first keys, in this
// order. (The three-stage document, the oldest, orders its own and names
// its plan beside them; StagesResult.Header reads them alike.)
type PlanHeader struct {
	Format        string `json:"format"`
	FormatVersion int    `json:"format_version"`
	About         string `json:"about"`
	// Publishable is always false: a plan answers one person's question
	// about one server, and its numbers are not Kovara records.
	Publishable bool   `json:"publishable"`
	Complete    bool   `json:"complete"`
	CreatedAt   string `json:"created_at"`
	Model       string `json:"model"`
}

// Header is the header itself, so that code over every plan's documents
// reads the three-stage document's (StagesResult.Header) the same way.
func (h PlanHeader) Header() PlanHeader { return h }

// A PlanDocument is one of the plans' documents (a *CapacityResult, a
// *StagesResult, …) as code over all of them reads it.
type PlanDocument interface {
	Header() PlanHeader
	// Simulated: the plan ran against the built-in simulator.
	Simulated() bool
	// Headline is what the plan found, in one line.
	Headline() string
	Table() Table
}

// MarshalDocument writes one of the plans' documents as indented JSON
// with a trailing newline.
func MarshalDocument[T any, D interface {
	*T
	PlanDocument
}](doc D) ([]byte, error) {
	if doc == nil {
		return nil, fmt.Errorf("marshal of a nil %T", doc)
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// A DocKind is one of the plans' document kinds: its format, the sentence
// its documents begin with, what errors call it and why it is kept on this
// machine; each is declared in its plan's file through localOnlyKind. Every kind is read
// the same way (Decode), and written by MarshalDocument.
type DocKind[T any] struct {
	Format string
	About  string
	What   string // "capacity result"
	// LocalOnly is why its documents cannot be published (PublishCheck
	// says it), every plan's reason beside its document.
	LocalOnly string
}

// Header starts a document of this kind, format_version 1, made at t
// for model.
func (k DocKind[T]) Header(t time.Time, model string) PlanHeader {
	return PlanHeader{Format: k.Format, FormatVersion: 1, About: k.About, CreatedAt: t.UTC().Format(time.RFC3339), Model: model}
}

// Decode reads a document of this kind, format_version 1.
func (k DocKind[T]) Decode(data []byte) (*T, error) {
	f, v, err := DocumentFormat(data)
	if err != nil {
		return nil, err
	}
	if f != k.Format {
		return nil, fmt.Errorf("this is a %q document, not a %s (%s)", f, k.What, k.Format)
	}
	if v != 1 {
		return nil, fmt.Errorf("%s format_version %d is not supported (this app reads 1)", k.What, v)
	}
	var doc T
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", k.What, err)
	}
	if u, ok := any(&doc).(interface{ reworded() }); ok {
		u.reworded()
	}
	return &doc, nil
}

// PlanCompat records which optional request fields the server accepted.
type PlanCompat struct {
	// ThinkingOff: chat_template_kwargs {"enable_thinking": false} was
	// accepted and went with every request. False when it was refused
	// (see Refused) or not asked for.
	ThinkingOff   bool     `json:"thinking_off"`
	StreamOptions bool     `json:"stream_options"`
	Usage         bool     `json:"usage"`   // the server reported usage
	Timings       bool     `json:"timings"` // the server sent llama.cpp timings
	Attempts      int      `json:"attempts"`
	Refused       []string `json:"refused,omitempty"`
}

// PlanLocal is the part of a plan result that names the endpoint; like the
// local section of a results file, it never leaves the machine.
type PlanLocal struct {
	Endpoint      string         `json:"endpoint"`
	EndpointHost  string         `json:"endpoint_host"`
	EndpointName  string         `json:"endpoint_name,omitempty"`
	Simulated     bool           `json:"simulated,omitempty"`
	ServedModels  []string       `json:"served_models"`
	ServerMetrics *ServerMetrics `json:"server_metrics,omitempty"`
	// Telemetry is the GPUs' power and energy per stage or level, when
	// the endpoint has a GPU source, as in a results file's
	// local.telemetry.
	Telemetry *Telemetry `json:"telemetry,omitempty"`
	// Wall is what the wall plug saw, as in a results file's local.wall.
	Wall       *WallTelemetry `json:"wall,omitempty"`
	StartedAt  string         `json:"started_at"`
	FinishedAt string         `json:"finished_at,omitempty"`
	// PromptsFile is the prompts file's path as given (--prompts): it
	// may name the person, so it stays here.
	PromptsFile string `json:"prompts_file,omitempty"`
	// TraceFile is a replayed trace's path as given (--trace): a path on
	// the person's disk, so it stays here.
	TraceFile string `json:"trace_file,omitempty"`
	// Tune says which settings comparison the run was one turn of (a
	// trace's replay in Compare settings); nil for a run of its own.
	Tune *TuneRef `json:"tune,omitempty"`
}

// Engine families the detection can name.
const (
	FamilyVLLM     = "vllm"
	FamilySGLang   = "sglang"
	FamilyLlamaCpp = "llama.cpp"
	FamilyOllama   = "ollama"
)

// FamilyName is a family as people write it: "vLLM", "SGLang",
// "llama.cpp", "Ollama"; anything else is returned unchanged.
func FamilyName(family string) string {
	switch family {
	case FamilyVLLM:
		return "vLLM"
	case FamilySGLang:
		return "SGLang"
	case FamilyLlamaCpp:
		return "llama.cpp"
	case FamilyOllama:
		return "Ollama"
	}
	return family
}

// Where names the endpoint for people: its saved name, or its host when
// the run had none (the CLI's runs).
func (l PlanLocal) Where() string { return whereOf(l.EndpointName, l.EndpointHost) }

// Where names the endpoint for people, like PlanLocal.Where.
func (l Local) Where() string { return whereOf(l.EndpointName, l.EndpointHost) }

func whereOf(name, host string) string {
	if name != "" {
		return name
	}
	return host
}
