// Package results holds the kovara-benchmark-results file (format_version 1):
// the published run records, the private local section, and the checks that
// decide whether a file may be published.
package results

// Format and FormatVersion identify the file kind every writer stamps.
const (
	Format        = "kovara-benchmark-results"
	FormatVersion = 1

	RunKindHardware = "hardware"
	RunKindProtocol = "protocol"

	EvidenceSelfReported = "self_reported"

	TokenCountServerUsage  = "server_usage"
	TokenCountStreamChunks = "stream_chunks"

	PercentileLinear = "linear"
)

// File is a whole results file. Runs hold exactly what is published; Local
// never leaves the machine.
type File struct {
	Format        string       `json:"format"`
	FormatVersion int          `json:"format_version"`
	Complete      bool         `json:"complete"`
	CreatedAt     string       `json:"created_at"`
	Manifest      *ManifestRef `json:"manifest"`
	Runs          []Run        `json:"runs"`
	Local         Local        `json:"local"`
}

// ManifestRef names the manifest version a hardware run was made under.
type ManifestRef struct {
	Revision    string `json:"revision"`
	ContentHash string `json:"content_hash"`
}

// Run is one concurrency level's published record: its conditions, its
// metrics and the client environment. Manifest-derived conditions are null
// for protocol tests.
type Run struct {
	RunKind       string  `json:"run_kind"`
	Evidence      string  `json:"evidence"`
	ModelID       string  `json:"model_id"`
	ModelRevision *string `json:"model_revision"`
	Engine        *string `json:"engine"`
	EngineVersion *string `json:"engine_version"`
	Accelerator   *string `json:"accelerator"`
	GPUCount      *int    `json:"gpu_count"`
	Precision     *string `json:"precision"`
	Profile       *string `json:"profile"`
	InputTokens   int     `json:"input_tokens"`
	OutputTokens  int     `json:"output_tokens"`
	Concurrency   int     `json:"concurrency"`
	Requests      int     `json:"requests"`
	Warmup        int     `json:"warmup"`
	Seed          int64   `json:"seed"`

	Metrics     Metrics     `json:"metrics"`
	Environment Environment `json:"environment"`
}

// Metrics are a level's measured numbers. Only successful requests enter the
// distributions and throughputs.
type Metrics struct {
	RequestsOK        int      `json:"requests_ok"`
	RequestsError     int      `json:"requests_error"`
	RequestsTimeout   int      `json:"requests_timeout"`
	DurationS         float64  `json:"duration_s"`
	RequestThroughput float64  `json:"request_throughput"`
	OutputThroughput  float64  `json:"output_throughput"`
	InputTokensMean   *float64 `json:"input_tokens_mean"`
	OutputTokensMean  *float64 `json:"output_tokens_mean"`
	TokenCountMethod  string   `json:"token_count_method"`
	TTFTMs            *Dist    `json:"ttft_ms"`
	ITLMs             *Dist    `json:"itl_ms"`
	LatencyMs         *Dist    `json:"latency_ms"`
	TPOTMs            *Dist    `json:"tpot_ms"`
}

// Dist summarises one sample. P95 and P99 are present only when the sample
// is large enough to support them (n >= 20 and n >= 100).
type Dist struct {
	N    int      `json:"n"`
	Mean float64  `json:"mean"`
	Min  float64  `json:"min"`
	P50  float64  `json:"p50"`
	P95  *float64 `json:"p95,omitempty"`
	P99  *float64 `json:"p99,omitempty"`
	Max  float64  `json:"max"`
}

// MinP95 and MinP99 are the successes a level needs before its p95 and
// p99 are reported (engine/stats computes them; the notes say them).
const (
	MinP95 = 20
	MinP99 = 100
)

// At is the q-th percentile (50, 95 or 99); ok is false for a nil
// distribution, an empty one, another q, or a tail the sample was too small
// to report.
func (d *Dist) At(q int) (v float64, ok bool) {
	if d == nil || d.N < 1 {
		return 0, false
	}
	switch q {
	case 50:
		return d.P50, true
	case 95:
		if d.P95 != nil {
			return *d.P95, true
		}
	case 99:
		if d.P99 != nil {
			return *d.P99, true
		}
	}
	return 0, false
}

// MergedITLMs is the most an ITL percentile can be and still be no gap
// the model took: it shows as 0.0 ms, and it is two chunks read from the
// socket together (0 ms: both carry the read's one receive stamp) or sent
// by the server in one burst. No server decodes a token in 50 µs.
const MergedITLMs = 0.05

// ITLAt is an inter-token latency percentile that was measured: ok is
// false where d.At has none, and where the percentile falls among the
// chunks read together (MergedITLMs) — a 0.0 ms ITL p50 is not the
// model's pace, and a table or a comparison that shows it as a number
// misleads ("0.00, −100.0 %"). ITLMergedText says why.
func ITLAt(d *Dist, q int) (float64, bool) {
	v, ok := d.At(q)
	return v, ok && v >= MergedITLMs
}

// Environment describes the client and the request settings. It never holds
// a host name, a URL or a key. This app fills Client, ClientVersion and
// GoVersion; files imported from the Python kovara CLI carry CLIVersion and
// Python instead, which is why all five are optional.
type Environment struct {
	Client            string  `json:"client,omitempty"`
	ClientVersion     string  `json:"client_version,omitempty"`
	GoVersion         string  `json:"go_version,omitempty"`
	CLIVersion        string  `json:"cli_version,omitempty"` // written by the Python kovara CLI
	Python            string  `json:"python,omitempty"`      // written by the Python kovara CLI
	OS                string  `json:"os"`
	Machine           string  `json:"machine"`
	Temperature       float64 `json:"temperature"`
	MaxTokens         int     `json:"max_tokens"`
	IgnoreEOS         bool    `json:"ignore_eos"`
	IgnoreEOSHonoured *bool   `json:"ignore_eos_honoured"`
	Stream            bool    `json:"stream"`
	StreamOptions     bool    `json:"stream_options"`
	PromptGenerator   string  `json:"prompt_generator"`
	Seed              int64   `json:"seed"`
	PercentileMethod  string  `json:"percentile_method"`
	ServerModel       *string `json:"server_model"`
	TimeoutS          float64 `json:"timeout_s"`
}

// Local is everything kept on the user's machine only.
type Local struct {
	Simulated      bool     `json:"simulated,omitempty"`
	Plan           string   `json:"plan,omitempty"`
	Endpoint       string   `json:"endpoint"`
	EndpointHost   string   `json:"endpoint_host"`
	EndpointName   string   `json:"endpoint_name,omitempty"`
	ServedModels   []string `json:"served_models"`
	RequestedModel string   `json:"requested_model,omitempty"`
	// FreshSeed: the seed was drawn for this run (no --seed), so its
	// prompts were new to any prompt cache the server keeps.
	FreshSeed bool `json:"fresh_seed,omitempty"`
	// ReceiveClock says what stamped the chunks: the kernel's receive
	// time, or the moment each read returned (ReceiveClockOf).
	ReceiveClock string         `json:"receive_clock,omitempty"`
	Detection    *Detection     `json:"engine_detection,omitempty"`
	Compat       *Compat        `json:"compat,omitempty"`
	Calibration  *Calibration   `json:"calibration,omitempty"`
	Manifest     *ManifestLocal `json:"manifest,omitempty"`
	Levels       []LevelLocal   `json:"levels"`
	Warnings     []string       `json:"warnings"`
	PartialRun   *Run           `json:"partial_run"`
	// ServerGone says why the run ended early when the server stopped
	// answering in the middle of it (the engine's watchdog); "" otherwise.
	ServerGone string `json:"server_gone,omitempty"`
	StartedAt  string `json:"started_at,omitempty"`
	FinishedAt string `json:"finished_at,omitempty"`
	// ServerMetrics is the server's own queue and KV-cache series, read
	// from its /metrics during the run; absent when /metrics did not
	// answer with any gauge we know.
	ServerMetrics *ServerMetrics `json:"server_metrics,omitempty"`
	// Telemetry is the GPUs' inventory, power and energy per level, when
	// the endpoint has a GPU source. Never published.
	Telemetry *Telemetry `json:"telemetry,omitempty"`
	// Wall is what the smart plug on the server's lead saw, when the
	// endpoint has one: its idle power and each level's. Never published.
	Wall *WallTelemetry `json:"wall,omitempty"`
	// Group ties together the runs of one repeated plan (--repeat, the
	// app's Repeat): the same plan run several times in a row.
	Group *RunGroup `json:"group,omitempty"`
	// Tune names the settings comparison this run is one of, with its
	// setting and round.
	Tune *TuneRef `json:"tune,omitempty"`
	// Like names the run this one was made to reproduce (--like, "Run
	// again like this").
	Like *LikeRef `json:"like,omitempty"`
	// Shard marks a file that is one client machine's share of a run
	// measured from several (kovara-bench run --shard): it holds no
	// published record until the shards are merged
	// (docs/distributed.md).
	Shard *ShardLocal `json:"shard,omitempty"`
	// Merged says how a file made by kovara-bench merge put its shards on
	// one clock.
	Merged *MergedLocal `json:"merged,omitempty"`
	// SLO is the service level each request was judged by for goodput
	// (--slo-ttft-p95, --slo-tpot, --slo-user-tps); nil when none was
	// given. Each level's Goodput says how many met it.
	SLO *RateSLO `json:"slo,omitempty"`
	// Workload is what the levels' requests asked beyond the method's
	// synthetic prompt (a shared prefix, conversations); nil for the
	// method's own prompts. A file with one is never published.
	Workload *Workload `json:"workload,omitempty"`
	// PrefixCheck is a shared prefix's warm and cold time to first token,
	// measured alone before the first level; nil without one.
	PrefixCheck *PrefixCheck `json:"prefix_check,omitempty"`
}

// ShardLocal is one shard's place in a run measured from several client
// machines at once. Shard Index of Of runs, at a level of concurrency c,
// the users Index-1, Index-1+Of, … of 0…c-1 (its samples number them
// 0, 1, … in that order) and the level's requests k whose user k mod c is
// one of them.
type ShardLocal struct {
	Index int `json:"index"` // 1 … Of
	Of    int `json:"of"`
	// StartAt is the agreed wall-clock time every shard released its
	// first level's users (RFC 3339); level i began LevelEveryS × i
	// seconds later.
	StartAt     string  `json:"start_at"`
	LevelEveryS float64 `json:"level_every_s"`
	// Requests is the plan's requests per level, of which the shard sent
	// its share.
	Requests int `json:"requests"`
	// T0UnixUs is the wall-clock time of the run's start (the zero of
	// every offset in the file), µs since the Unix epoch: what puts the
	// shards' offsets on one clock.
	T0UnixUs int64 `json:"t0_unix_us"`
	// ClockSynced says the system clock was synchronised (NTP, chrony)
	// when the run started, and ClockMaxErrorUs is the kernel's own bound
	// on its error then; both absent where the system does not say.
	ClockSynced     bool  `json:"clock_synced,omitempty"`
	ClockMaxErrorUs int64 `json:"clock_max_error_us,omitempty"`
	// Runs is this shard's own record of each level, in the order of
	// levels: the whole plan's conditions, with concurrency and requests
	// the shard's share and metrics of its share alone. Never a level's
	// result: merge computes that from every shard's samples.
	Runs []Run `json:"runs"`
}

// MergedLocal is how a merged file's shards were put on one clock. Each
// request's times were measured on one machine's monotonic clock and
// stand as they are; the shards' offsets to each other come from their
// wall clocks (ShardLocal.T0UnixUs), so a difference between those
// clocks moves a shard's requests as a whole and changes only the
// levels' windows, hence throughput.
type MergedLocal struct {
	Of          int     `json:"of"`
	StartAt     string  `json:"start_at"`
	LevelEveryS float64 `json:"level_every_s"`
	// Shards in index order.
	Shards []MergedShard `json:"shards"`
	// MaxSkewUs bounds how far two shards' clocks could disagree: the
	// two largest of their kernels' error bounds added. Absent when some
	// shard's clock was not synchronised or did not say.
	MaxSkewUs int64 `json:"max_skew_us,omitempty"`
	// LevelStartSpreadUs is, per level, how far apart the shards released
	// their users on the merged clock (what the clocks say; a skew adds
	// to it unseen).
	LevelStartSpreadUs []int64 `json:"level_start_spread_us"`
}

// MergedShard is one shard of a merged file.
type MergedShard struct {
	Index int `json:"index"`
	// OffsetUs is the shard's t0 after the merged file's zero (the
	// earliest shard's t0), µs: what was added to its offsets.
	OffsetUs        int64  `json:"offset_us"`
	T0UnixUs        int64  `json:"t0_unix_us"`
	ClockSynced     bool   `json:"clock_synced,omitempty"`
	ClockMaxErrorUs int64  `json:"clock_max_error_us,omitempty"`
	EndpointHost    string `json:"endpoint_host,omitempty"`
	OS              string `json:"os,omitempty"`
	Machine         string `json:"machine,omitempty"`
}

// RunGroup is one run's place in a repeated plan.
type RunGroup struct {
	ID    string `json:"id"`    // the same for every run of the group
	Index int    `json:"index"` // 1 … Of
	Of    int    `json:"of"`
}

// TuneRef is a run's place in a settings comparison.
type TuneRef struct {
	// ID ties the comparison's runs together (the library's id of the
	// comparison is its own).
	ID      string `json:"id"`
	Setting string `json:"setting"`
	Round   int    `json:"round"`
	Rounds  int    `json:"rounds"`
}

// LikeRef is the run a reproduction followed.
type LikeRef struct {
	// ID is its library id when it was in the library, else empty.
	ID string `json:"id,omitempty"`
	// CreatedAt is its created_at, which names it where no id does (an
	// imported file someone published).
	CreatedAt string `json:"created_at"`
}

// Detection is what the endpoint said about the engine behind it.
type Detection struct {
	Family        string `json:"family,omitempty"`
	Version       string `json:"version,omitempty"`
	OwnedBy       string `json:"owned_by,omitempty"`
	ContextLength int    `json:"context_length,omitempty"`
	ServerHeader  string `json:"server_header,omitempty"`
	Source        string `json:"source,omitempty"`
	// ContextSource names where ContextLength was read, e.g.
	// "/v1/models max_model_len" or "/props n_ctx".
	ContextSource string `json:"context_source,omitempty"`
	// ParallelSlots is how many requests the server says it serves at
	// once (llama.cpp /props total_slots), 0 when it does not say;
	// ParallelSource names where it was read.
	ParallelSlots  int    `json:"parallel_slots,omitempty"`
	ParallelSource string `json:"parallel_source,omitempty"`
	// Placement is where the server put the model (its GPU, the CPU or
	// both), where it says; nil where it does not (placement.go).
	Placement *Placement `json:"placement,omitempty"`
}

// PlacementWords is where the model ran, in words, and whether that is a
// problem (Placement.Words); "" where the server did not say.
func (d *Detection) PlacementWords() (string, bool) {
	if d == nil {
		return "", false
	}
	return d.Placement.Words(d.Family)
}

// Compat records what the compat probe found the server accepts.
type Compat struct {
	IgnoreEOS     bool `json:"ignore_eos"`
	StreamOptions bool `json:"stream_options"`
	Usage         bool `json:"usage"`
	Attempts      int  `json:"attempts"`
}

// Calibration records how the prompt length was fitted to input_tokens.
type Calibration struct {
	TargetTokens int                  `json:"target_tokens"`
	Words        int                  `json:"words"`
	PromptTokens *int                 `json:"prompt_tokens"`
	Converged    bool                 `json:"converged"`
	Attempts     []CalibrationAttempt `json:"attempts"`
	// Tokenized: attempts after the first were aimed at the target by
	// the server's own token count (POST /tokenize) before being sent.
	Tokenized bool `json:"tokenized,omitempty"`
}

// CalibrationAttempt is one max_tokens=1 request of the calibration.
type CalibrationAttempt struct {
	Words        int `json:"words"`
	PromptTokens int `json:"prompt_tokens"`
	// Refused: the server refused the prompt for its context and said
	// how many tokens it was (PromptTokens).
	Refused bool `json:"refused,omitempty"`
}

// ManifestLocal keeps the manifest's path and name for the user's eyes.
type ManifestLocal struct {
	Path string `json:"path,omitempty"`
	Name string `json:"name,omitempty"`
}

// LevelLocal holds a level's private detail: error counts and a few messages
// per class.
type LevelLocal struct {
	Concurrency int                 `json:"concurrency"`
	Errors      map[string]int      `json:"errors"`
	Messages    map[string][]string `json:"messages,omitempty"`
	StartedAt   string              `json:"started_at,omitempty"`
	Partial     bool                `json:"partial,omitempty"`
	// Reasoning models: how many successes began with reasoning, and the
	// time to their first answer (non-reasoning) token.
	ReasoningFirst int   `json:"reasoning_first,omitempty"`
	TTFAMs         *Dist `json:"ttfa_ms,omitempty"`
	// Connections: what the slots did about connections the server
	// closed (nil when it closed none).
	Connections *Connections `json:"connections,omitempty"`
	// PromptCache: how many prompt tokens the server says it took from
	// its prompt cache during the level, and how it said so (nil when it
	// did not say).
	PromptCache *PromptCache `json:"prompt_cache,omitempty"`
	// Gaps is how many inter-token gaps the level's successful requests
	// had: the samples of its published itl_ms. MergedGaps is how many of
	// them were two chunks read together, exactly 0 ms because both came
	// off the socket in one read and carry its one receive stamp (the
	// client read late, or the server sent them at once). They stay in
	// itl_ms as the method defines it; the counts say how much of its
	// low end is not a real inter-token gap.
	Gaps       int `json:"gaps,omitempty"`
	MergedGaps int `json:"merged_gaps,omitempty"`
	// Samples is every measured request of the level (nil in files
	// saved before samples were kept).
	Samples *LevelSamples `json:"samples,omitempty"`
	// Goodput is the level's requests that met the service level
	// (Local.SLO), each on its own TTFT and TPOT; nil without one.
	Goodput *Goodput `json:"goodput,omitempty"`
	// ByTurn is the level's conversations turn by turn (Local.Workload's
	// turns); empty without them.
	ByTurn []TurnFigures `json:"by_turn,omitempty"`
}

// Connections counts a level's reconnects. Each happened between
// requests, outside the measured time; a resent request is recorded once.
type Connections struct {
	Reconnects   int `json:"reconnects"`    // fresh connections opened between requests
	Resent       int `json:"resent"`        // requests sent again after dying unanswered on a reused connection
	ServerClosed int `json:"server_closed"` // connections the server closed after an answer
	Requests     int `json:"requests"`      // requests of the level, for scale
	// Connected counts requests that opened their own connection as they
	// were sent, inside their measured time: the server could not keep a
	// connection open ahead for every slot (docs/servers.md, "HTTP
	// threads").
	Connected int `json:"connected,omitempty"`
}

// Prompt-cache sources, best first: the server's own count per request,
// then its server-wide counters over the level.
const (
	CacheFromUsage   = "usage.prompt_tokens_details.cached_tokens"
	CacheFromTimings = "timings.cache_n"
	// CacheFromPromptN: older llama.cpp builds (b4748) report neither
	// cached_tokens nor cache_n, but their timings.prompt_n counts only
	// the prompt tokens evaluated, so the rest of usage.prompt_tokens
	// came from the slot's cache.
	CacheFromPromptN = "usage.prompt_tokens-timings.prompt_n"
	CacheFromMetrics = "/metrics"
)

// PromptCache is a level's prompt tokens served from the server's cache.
type PromptCache struct {
	CachedTokens int64  `json:"cached_tokens"`
	PromptTokens int64  `json:"prompt_tokens"` // all prompt tokens of the same requests (or counter window)
	Requests     int    `json:"requests"`      // requests the figures cover (for counters: the level's requests)
	Source       string `json:"source"`        // one of the CacheFrom constants
	// Metrics names the counters when Source is /metrics.
	Metrics string `json:"metrics,omitempty"`
	// SharedTokens is what every request of the method shares by design
	// (the chat template and the instruction), per request, as the run
	// measured it before warmup (a pair of prompts with no words: the
	// second's cached tokens); nil when the server did not say. Only
	// cached tokens beyond it are a problem.
	SharedTokens *int `json:"shared_tokens,omitempty"`
}

// Beyond is the cached part of the prompt tokens beyond what every
// request shares by design (SharedTokens per request), 0 to 1.
func (p *PromptCache) Beyond() float64 {
	if p == nil || p.PromptTokens <= 0 {
		return 0
	}
	c := p.CachedTokens
	if p.SharedTokens != nil {
		c -= int64(*p.SharedTokens) * int64(p.Requests)
	}
	return max(float64(c), 0) / float64(p.PromptTokens)
}

// Share is the cached part of the prompt tokens, 0 to 1.
func (p *PromptCache) Share() float64 {
	if p == nil || p.PromptTokens <= 0 {
		return 0
	}
	return float64(p.CachedTokens) / float64(p.PromptTokens)
}
