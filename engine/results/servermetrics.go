package results

import "fmt"

// ServerMetrics is what the server said about its own load while a plan
// ran: its queue gauges and KV-cache use, read from /metrics every second
// or two. Family names whose metric names were read.
type ServerMetrics struct {
	Family string `json:"family"` // "vllm", "sglang" or "llama.cpp"
	// Source is "/slots" when the readings are llama-server's busy slots
	// (it served no /metrics): running only, no queue or KV cache; ""
	// for /metrics.
	Source    string  `json:"source,omitempty"`
	IntervalS float64 `json:"interval_s"`
	// Failures counts scrapes that failed after the first good one (the
	// samples simply have a gap there).
	Failures int `json:"failures,omitempty"`
	// Thinned is how many times the series was halved to stay bounded on
	// a long run: 0 means every sample is there.
	Thinned int                   `json:"thinned,omitempty"`
	Samples []ServerMetricsSample `json:"samples"`
	// ForeignLoad lists the measured stages during which the server
	// counted more requests than this run had in flight: another client
	// was using it (nil when none did).
	ForeignLoad []ForeignLoad `json:"foreign_load,omitempty"`
}

// ForeignLoad is one measured stage (a level, a depth, a probe) during
// which the server's own counters showed requests that were not this
// run's, for long enough that it cannot be the race of a request
// starting or ending (engine/foreign.go says the rule).
type ForeignLoad struct {
	// Stage names it as the live view did: "level 2", "depth 8k".
	Stage string `json:"stage"`
	// Readings is how many server readings were taken during it while
	// this run had requests in flight; Foreign how many of them showed
	// another client's.
	Readings int `json:"readings"`
	Foreign  int `json:"foreign_readings"`
	// MaxRequests is the most requests the server counted in one of those
	// readings (running and waiting), MaxRunning the running ones of that
	// reading, and MaxOurs the most of them that were this run's.
	MaxRequests int `json:"max_requests"`
	MaxRunning  int `json:"max_running"`
	MaxOurs     int `json:"max_ours"`
	// FirstS and LastS are the first and last such reading, in seconds
	// since the run started.
	FirstS float64 `json:"first_t_s"`
	LastS  float64 `json:"last_t_s"`
}

// ForeignLoadProblems says, one sentence a stage, where another client
// was using the server: the figures of those stages include its load.
func ForeignLoadProblems(m *ServerMetrics) []string {
	if m == nil {
		return nil
	}
	out := make([]string, 0, len(m.ForeignLoad))
	for _, f := range m.ForeignLoad {
		what := "running"
		if f.MaxRequests > f.MaxRunning {
			what = "running or waiting"
		}
		ours := fmt.Sprintf("at most %d of them this run's", f.MaxOurs)
		if f.MaxOurs == 0 {
			ours = "none of them this run's"
		}
		out = append(out, fmt.Sprintf("another client was using the server during %s: up to %d %s %s, %s (in %d of %d server readings); its figures include that load — run it again when nothing else uses the server",
			f.Stage, f.MaxRequests, Plural(f.MaxRequests, "request", "requests"), what, ours, f.Foreign, f.Readings))
	}
	return out
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
