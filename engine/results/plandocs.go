package results

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
	Telemetry  *Telemetry `json:"telemetry,omitempty"`
	StartedAt  string     `json:"started_at"`
	FinishedAt string     `json:"finished_at,omitempty"`
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
