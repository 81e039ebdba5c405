package results

// ServerMetrics is what the server said about its own load while a plan
// ran: its queue gauges and KV-cache use, read from /metrics every second
// or two. Family names whose metric names were read.
type ServerMetrics struct {
	Family    string  `json:"family"` // "vllm", "sglang" or "llama.cpp"
	IntervalS float64 `json:"interval_s"`
	// Failures counts scrapes that failed after the first good one (the
	// samples simply have a gap there).
	Failures int `json:"failures,omitempty"`
	// Thinned is how many times the series was halved to stay bounded on
	// a long run: 0 means every sample is there.
	Thinned int                   `json:"thinned,omitempty"`
	Samples []ServerMetricsSample `json:"samples"`
}

// ServerMetricsSample is one scrape. A value the server does not expose is
// absent (nil).
type ServerMetricsSample struct {
	// T is seconds since the plan started.
	T float64 `json:"t_s"`
	// Running and Waiting are the requests in the batch and in the queue
	// (summed over the server's engines), KVCache the share of the KV
	// cache in use, 0 to 1 (averaged over them).
	Running *float64 `json:"running,omitempty"`
	Waiting *float64 `json:"waiting,omitempty"`
	KVCache *float64 `json:"kv_cache,omitempty"`
}

// Document kinds this app writes besides kovara-benchmark-results. They are
// kept on the user's machine and are never publishable as Kovara records.
const (
	// FormatStages is a three-stage plan result (results.StagesResult).
	FormatStages = "kovara-desktop-stages"
	// FormatSpecDec is a speculative-decoding measurement
	// (results.SpecDecResult).
	FormatSpecDec = "kovara-desktop-specdec"
)
