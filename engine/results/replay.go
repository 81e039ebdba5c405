package results

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ReplayMatch is how a trace's replay (the rate plan's one level, issue
// #51) matched the recording: what it sent against what the trace said,
// request by request where both are known.
type ReplayMatch struct {
	// Format is the trace's: "kovara-bench" (recorded by this app),
	// "mooncake" or "burstgpt".
	Format string `json:"format"`
	// InTrace is the trace's requests; Sent those replayed: the ones in
	// the part of the day asked for (From, To), less the ones the
	// recording had no answer to (Skipped).
	InTrace int `json:"in_trace"`
	Sent    int `json:"sent"`
	Skipped int `json:"skipped,omitempty"`
	// Speed divided the recorded times; From and To are the part of the
	// day kept ("" for none).
	Speed float64 `json:"speed"`
	From  string  `json:"from,omitempty"`
	To    string  `json:"to,omitempty"`
	// SpanS is the recorded time from the first request sent to the last,
	// before Speed.
	SpanS float64 `json:"span_s"`
	// APIs counts the sent requests by the API they were recorded on;
	// AsChat how many of them the replay sent as chat completions, an API
	// other than their own.
	APIs   map[string]int `json:"apis,omitempty"`
	AsChat int            `json:"as_chat,omitempty"`
	// Anthropic counts the requests sent on the Anthropic Messages API as
	// recorded; NoAnthropic is why none could be, where the server does
	// not serve it (its answer to the probe, in words).
	Anthropic   int    `json:"anthropic,omitempty"`
	NoAnthropic string `json:"no_anthropic,omitempty"`
	// Prompt and Answer are the tokens per request, replayed against
	// recorded.
	Prompt *TokenMatch `json:"prompt_tokens,omitempty"`
	Answer *TokenMatch `json:"answer_tokens,omitempty"`
	// CachedShare is the share of the prompt tokens the server took from
	// its cache, over the requests both counts are known for.
	CachedShare *ShareMatch `json:"cached_share,omitempty"`
	// ReplayCachedShare is the share the server took from its cache in
	// the replay where the trace does not say what it took when
	// recorded (a public trace); nil where CachedShare says both.
	ReplayCachedShare *float64 `json:"replay_cached_share,omitempty"`
	// TTFTMs is time to first token: what the clients saw when it was
	// recorded (the proxy's) and what the replay saw, at p50 and p90.
	TTFTMs *TTFTMatch `json:"ttft_ms,omitempty"`
	// Requests are the sent requests, in the order they were due, as the
	// replay's charts draw them.
	Requests []ReplayPoint `json:"requests,omitempty"`
}

// ReplayPoint is one replayed request against its recording.
type ReplayPoint struct {
	// AtS is when it was due, seconds from the replay's start.
	AtS float64 `json:"at_s"`
	// Prompt tokens recorded and replayed (0: not known).
	RecordedIn int `json:"recorded_in,omitempty"`
	ReplayedIn int `json:"replayed_in,omitempty"`
	// Time to first token when it was recorded (the proxy's) and in the
	// replay (from when it was due), ms; nil where not known.
	RecordedTTFTMs *float64 `json:"recorded_ttft_ms,omitempty"`
	ReplayedTTFTMs *float64 `json:"replayed_ttft_ms,omitempty"`
}

// TokenMatch is one count per request, replayed against recorded.
type TokenMatch struct {
	// Requests are those both counts are known for.
	Requests int   `json:"requests"`
	Recorded int64 `json:"recorded"`
	Replayed int64 `json:"replayed"`
	// MedianErrPct and P90ErrPct are the requests' |replayed − recorded|
	// / recorded, in %.
	MedianErrPct float64 `json:"median_err_pct"`
	P90ErrPct    float64 `json:"p90_err_pct"`
}

// ShareMatch is one share (0 to 1), recorded and replayed.
type ShareMatch struct {
	Requests int     `json:"requests"`
	Recorded float64 `json:"recorded"`
	Replayed float64 `json:"replayed"`
}

// TTFTMatch is time to first token, recorded and replayed, ms.
type TTFTMatch struct {
	Requests    int     `json:"requests"`
	RecordedP50 float64 `json:"recorded_p50"`
	RecordedP90 float64 `json:"recorded_p90"`
	ReplayedP50 float64 `json:"replayed_p50"`
	ReplayedP90 float64 `json:"replayed_p90"`
}

// ReplayPromptOffPct is how far, at the median request, a replay's prompt
// tokens may be from the recorded before its figures stop describing the
// recorded load: a problem past it (the synthetic words tokenise unlike
// the person's, or the trace's lengths could not be met).
const ReplayPromptOffPct = 10

// Words say how the replay matched the recording, one sentence each:
// what was sent, the prompts, the answers, the cache, the time to first
// token.
func (m *ReplayMatch) Words() []string {
	if m == nil {
		return nil
	}
	var out []string
	s := fmt.Sprintf("The replay sent %d of the trace's %d requests (%s) at their recorded times", m.Sent, m.InTrace, m.Format)
	if m.Speed != 1 {
		s += fmt.Sprintf(" divided by %s", strconv.FormatFloat(m.Speed, 'f', -1, 64))
	}
	if m.From != "" || m.To != "" {
		s += fmt.Sprintf(", those recorded from %s to %s", or(m.From, "the start"), or(m.To, "the end"))
	}
	s += fmt.Sprintf(": %s of traffic", Seconds(m.SpanS*1000/m.Speed))
	if m.Skipped > 0 {
		s += fmt.Sprintf("; %d the recording had no answer to were not sent", m.Skipped)
	}
	out = append(out, s+".")
	if m.Anthropic > 0 {
		out = append(out, fmt.Sprintf("%d of them were sent on the Anthropic Messages API, as they were recorded; the rest as chat completions.", m.Anthropic))
	}
	if m.AsChat > 0 {
		s := fmt.Sprintf("%d of them were recorded on another API (%s) and were sent as chat completions: the server's own work is the same, its API layer is not", m.AsChat, apiWords(m.APIs, m.Anthropic > 0))
		if m.NoAnthropic != "" {
			s += " (the server did not take an Anthropic Messages request: " + m.NoAnthropic + ")"
		}
		out = append(out, s+".")
	}
	if p := m.Prompt; p != nil {
		out = append(out, fmt.Sprintf("Prompt tokens: %s replayed against %s recorded; each request within %s %% of its recorded length at the median, %s %% at the 90th percentile.",
			count(p.Replayed), count(p.Recorded), pctWords(p.MedianErrPct), pctWords(p.P90ErrPct)))
	}
	if a := m.Answer; a != nil {
		out = append(out, fmt.Sprintf("Answer tokens: %s replayed against %s recorded (within %s %% at the median).", count(a.Replayed), count(a.Recorded), pctWords(a.MedianErrPct)))
	}
	if c := m.CachedShare; c != nil {
		out = append(out, fmt.Sprintf("The server took %.0f %% of the prompt tokens from its cache in the replay, %.0f %% when it was recorded (%d requests with both counts).", c.Replayed*100, c.Recorded*100, c.Requests))
	}
	if c := m.ReplayCachedShare; c != nil {
		out = append(out, fmt.Sprintf("The server took %.0f %% of the prompt tokens from its cache in the replay (the trace does not say what it took when recorded).", *c*100))
	}
	if t := m.TTFTMs; t != nil {
		out = append(out, fmt.Sprintf("Time to first token: %s at the median and %s at the 90th percentile in the replay; the clients saw %s and %s when it was recorded.",
			Seconds(t.ReplayedP50), Seconds(t.ReplayedP90), Seconds(t.RecordedP50), Seconds(t.RecordedP90)))
	}
	return out
}

// Problem is the replay's problem, or "": prompts that missed the
// recorded lengths by more than ReplayPromptOffPct at the median.
func (m *ReplayMatch) Problem() string {
	if m == nil || m.Prompt == nil || m.Prompt.MedianErrPct <= ReplayPromptOffPct {
		return ""
	}
	return fmt.Sprintf("the replay's prompts were %s %% off their recorded lengths at the median (more than %d %%): its figures are not the recorded load's", pctWords(m.Prompt.MedianErrPct), ReplayPromptOffPct)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func count(n int64) string { return strconv.FormatInt(n, 10) }

func pctWords(p float64) string {
	if p < 10 {
		return strconv.FormatFloat(p, 'f', 1, 64)
	}
	return strconv.FormatFloat(p, 'f', 0, 64)
}

// apiWords is "12 Anthropic Messages, 3 Ollama chat" of the APIs other
// than chat completions (and Anthropic Messages where those were sent on
// it).
func apiWords(apis map[string]int, anthropicSent bool) string {
	names := map[string]string{"anthropic-messages": "Anthropic Messages", "ollama-chat": "Ollama chat", "ollama-generate": "Ollama generate", "openai-completions": "completions"}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(apis)) {
		if k == "anthropic-messages" && anthropicSent {
			continue
		}
		if n, ok := names[k]; ok && apis[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", apis[k], n))
		}
	}
	return strings.Join(parts, ", ")
}
