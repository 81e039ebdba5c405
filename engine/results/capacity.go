package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The capacity plan's document, kovara-desktop-capacity (docs/plans.md):
// how many users at once the server serves within a service level, with
// every level it measured kept as a Kovara run record so a later reader
// can check the answer.

// FormatCapacity is a capacity plan result (CapacityResult).
const FormatCapacity = "kovara-desktop-capacity"

// The limits a level can miss.
const (
	LimitErrors  = "errors"   // a request failed or timed out
	LimitTTFT    = "ttft_p95" // TTFT p95 above the ceiling
	LimitUserTPS = "user_tps" // per-user output rate p5 below the floor
)

// Steps of the capacity search.
const (
	StepDouble = "double" // growing concurrency, doubling from 1
	StepBisect = "bisect" // between the last level that held and the first that missed
	StepRepeat = "repeat" // a boundary level measured again
)

// CapacityResult is a capacity plan result: the document of kind
// kovara-desktop-capacity, format_version 1.
type CapacityResult struct {
	Format        string `json:"format"`
	FormatVersion int    `json:"format_version"`
	About         string `json:"about"`
	// Publishable is always false: a capacity answer is about one
	// person's service level, not a Kovara record.
	Publishable bool   `json:"publishable"`
	Complete    bool   `json:"complete"`
	CreatedAt   string `json:"created_at"`
	Model       string `json:"model"`

	Settings CapacitySettings `json:"settings"`
	Answer   CapacityAnswer   `json:"answer"`
	// Probes are the levels in the order they were measured; Runs[i] and
	// Local.Levels[i] are probe i's Kovara run record and its detail.
	Probes []CapacityProbe `json:"probes"`
	Runs   []Run           `json:"runs"`
	Local  Local           `json:"local"`
}

// CapacitySettings are the service level and the plan around it.
type CapacitySettings struct {
	// UserTPS is the per-user output rate floor, tokens/s, that the
	// slowest 5 % of requests must still reach (the p5 of each request's
	// 1000 / TPOT).
	UserTPS float64 `json:"slo_user_tps"`
	// TTFTP95Ms is the ceiling on the level's TTFT p95, ms.
	TTFTP95Ms      float64 `json:"slo_ttft_p95_ms"`
	InputTokens    int     `json:"input_tokens"`
	OutputTokens   int     `json:"output_tokens"`
	MaxConcurrency int     `json:"max_concurrency"`
	// Tolerance ends the bisection when the first missed level is within
	// this fraction above the last one that held.
	Tolerance    float64 `json:"tolerance"`
	RequestsRule string  `json:"requests_rule"`
	Warmup       int     `json:"warmup"`
	Seed         int64   `json:"seed"`
	TimeoutS     float64 `json:"timeout_s"`
	Client       string  `json:"client"`
	// ClientVersion is the app's version.
	ClientVersion string `json:"client_version"`
}

// CapacityProbe is one measured level, judged against the service level.
type CapacityProbe struct {
	Concurrency int    `json:"concurrency"`
	Requests    int    `json:"requests"`
	Step        string `json:"step"`
	Met         bool   `json:"met"`
	// Missed lists the limits it missed (LimitErrors, LimitTTFT,
	// LimitUserTPS), in that order.
	Missed []string `json:"missed,omitempty"`
	Failed int      `json:"failed"` // errors and timeouts
	// UserTPSP50 and UserTPSP5 are per-request output rates (1000 /
	// TPOT, tokens/s), the median and the slowest 5 %.
	UserTPSP50 *float64 `json:"user_tps_p50"`
	UserTPSP5  *float64 `json:"user_tps_p5"`
	TTFTP95Ms  *float64 `json:"ttft_ms_p95"`
	OutputTPS  float64  `json:"output_tps"`
}

// CapacityAnswer is what the probes show.
type CapacityAnswer struct {
	// Capacity is the largest concurrency that met both limits on every
	// probe of it and of every level below it; 0 when one user missed.
	Capacity int `json:"capacity"`
	// Held and Missed are the bracket the search proved: the last level
	// that held and the first above it that missed (0: none missed up to
	// the maximum).
	Held   int `json:"held"`
	Missed int `json:"missed"`
	// MissedAt is the first level above Capacity that missed, and
	// MissedOn the limits it missed there.
	MissedAt int      `json:"missed_at"`
	MissedOn []string `json:"missed_on"`
	// ReachedMax: no level up to the maximum missed.
	ReachedMax bool `json:"reached_max"`
	// Uncertain: a level near the boundary met the limits on one probe
	// and missed on another; the capacity lies in [Capacity, RangeHigh].
	Uncertain bool `json:"uncertain"`
	RangeHigh int  `json:"range_high"`
	// Knee is the level after which total output tokens/s grew by 10 %
	// or less per doubling; nil when it still grew at the last doubling.
	Knee *int `json:"knee"`
}

// MarshalCapacity writes a capacity result as indented JSON.
func MarshalCapacity(r *CapacityResult) ([]byte, error) {
	return marshalDocument(r, "MarshalCapacity")
}

// DecodeCapacity reads a capacity result.
func DecodeCapacity(data []byte) (*CapacityResult, error) {
	return decodeDocument[CapacityResult](data, FormatCapacity, "capacity result")
}

// LimitName says a limit in words.
func LimitName(limit string) string {
	switch limit {
	case LimitErrors:
		return "failed requests"
	case LimitTTFT:
		return "TTFT p95"
	case LimitUserTPS:
		return "per-user tok/s"
	}
	return limit
}

// limitNames says limits in words, in their order.
func limitNames(limits []string) []string {
	out := make([]string, len(limits))
	for i, l := range limits {
		out[i] = LimitName(l)
	}
	return out
}

// Verdict is a probe's outcome in a few words: "met", or "missed: " and
// the limits it missed.
func (p CapacityProbe) Verdict() string {
	if p.Met {
		return "met"
	}
	return "missed: " + strings.Join(limitNames(p.Missed), ", ")
}

// SLO says the service level ("per-user ≥ 20 tok/s, TTFT p95 ≤ 2000 ms").
func (s CapacitySettings) SLO() string {
	return "per-user ≥ " + num(s.UserTPS) + " tok/s, TTFT p95 ≤ " + num(s.TTFTP95Ms) + " ms"
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// seconds says a duration in ms as people say it: "2 s", "850 ms".
func seconds(msv float64) string {
	if msv >= 1000 {
		return strconv.FormatFloat(math.Round(msv/10)/100, 'f', -1, 64) + " s"
	}
	return strconv.FormatFloat(msv, 'f', 0, 64) + " ms"
}

// ProbeOf is the first probe of concurrency c, or nil.
func (r *CapacityResult) ProbeOf(c int) *CapacityProbe {
	for i := range r.Probes {
		if r.Probes[i].Concurrency == c {
			return &r.Probes[i]
		}
	}
	return nil
}

// missedProbe is the first probe of level c that missed, or nil.
func (r *CapacityResult) missedProbe(c int) *CapacityProbe {
	for i := range r.Probes {
		if p := &r.Probes[i]; p.Concurrency == c && !p.Met {
			return p
		}
	}
	return nil
}

// howMissed says how probe p missed its limits, with the numbers:
// "TTFT p95 passes 2 s (3.41 s)".
func (s CapacitySettings) howMissed(p *CapacityProbe) string {
	var parts []string
	for _, l := range p.Missed {
		switch l {
		case LimitErrors:
			parts = append(parts, fmt.Sprintf("%d of %d requests failed", p.Failed, p.Requests))
		case LimitTTFT:
			got := "not measured"
			if p.TTFTP95Ms != nil {
				got = seconds(*p.TTFTP95Ms) + ", " + ratio(*p.TTFTP95Ms/s.TTFTP95Ms) + " the ceiling"
			}
			parts = append(parts, "TTFT p95 passes "+seconds(s.TTFTP95Ms)+" ("+got+")")
		case LimitUserTPS:
			got := "not measured"
			if p.UserTPSP5 != nil {
				got = "the slowest 5 % got " + strconv.FormatFloat(*p.UserTPSP5, 'f', 1, 64) + " tok/s"
			}
			parts = append(parts, "per-user speed falls below "+num(s.UserTPS)+" tok/s ("+got+")")
		}
	}
	return strings.Join(parts, " and ")
}

func ratio(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) + "×" }

// Headline is the answer in words, the first thing the app and the CLI
// say about a capacity result.
func (r *CapacityResult) Headline() string {
	a, s := r.Answer, r.Settings
	prefix := ""
	if !r.Complete {
		prefix = "Stopped before the search ended; so far: "
	}
	people := func(n int) string { return strconv.Itoa(n) + " " + Plural(n, "person", "people") }
	if a.Capacity == 0 {
		if p := r.missedProbe(1); p != nil {
			return prefix + "Even one person at a time misses the service level (" + s.SLO() + "): " + s.howMissed(p) + "."
		}
		return prefix + "No level was measured."
	}
	var b strings.Builder
	b.WriteString(prefix)
	switch {
	case a.Uncertain:
		fmt.Fprintf(&b, "Your server holds %d to %d people at ≥ %s tok/s each with TTFT p95 ≤ %s; the result is uncertain: a level in that range met the limits on one probe and missed on another, so %d is the safe answer",
			a.Capacity, a.RangeHigh, num(s.UserTPS), seconds(s.TTFTP95Ms), a.Capacity)
	case a.ReachedMax:
		fmt.Fprintf(&b, "Your server holds at least %s at ≥ %s tok/s each with TTFT p95 ≤ %s: no level up to the plan's maximum of %d missed",
			people(a.Capacity), num(s.UserTPS), seconds(s.TTFTP95Ms), s.MaxConcurrency)
	default:
		fmt.Fprintf(&b, "Your server holds %s at ≥ %s tok/s each with TTFT p95 ≤ %s", people(a.Capacity), num(s.UserTPS), seconds(s.TTFTP95Ms))
	}
	if p := r.missedProbe(a.MissedAt); a.MissedAt > 0 && p != nil {
		fmt.Fprintf(&b, "; at %d, %s", a.MissedAt, s.howMissed(p))
	}
	b.WriteString(".")
	return b.String()
}

// AnswerLine is the CLI's last line: "capacity: 8 concurrent users
// (per-user ≥ 20 tok/s, TTFT p95 ≤ 2000 ms); 9 missed on TTFT p95".
func (r *CapacityResult) AnswerLine() string {
	a := r.Answer
	line := fmt.Sprintf("capacity: %d concurrent users (%s)", a.Capacity, r.Settings.SLO())
	if a.Uncertain {
		line += fmt.Sprintf(", uncertain: between %d and %d", a.Capacity, a.RangeHigh)
	}
	if a.ReachedMax {
		line += fmt.Sprintf(", at least: the maximum, %d, held", r.Settings.MaxConcurrency)
	}
	if a.MissedAt > 0 {
		line += fmt.Sprintf("; %d missed on %s", a.MissedAt, strings.Join(limitNames(a.MissedOn), " and "))
	}
	if !r.Complete {
		line += " (stopped before the search ended)"
	}
	return line
}

// KneeLine says where total throughput stopped growing.
func (r *CapacityResult) KneeLine() string {
	if k := r.Answer.Knee; k != nil {
		return fmt.Sprintf("throughput knee: %d concurrent %s (doubling past it added 10 %% or less to total tokens/s)", *k, Plural(*k, "user", "users"))
	}
	last := 0
	for _, p := range r.Probes {
		if p.Step == StepDouble {
			last = p.Concurrency
		}
	}
	if last == 0 {
		return ""
	}
	return fmt.Sprintf("throughput knee: not reached; total tokens/s still grew by more than 10 %% at the last doubling (to %d)", last)
}

// AsFile is the capacity result seen as a Kovara results file: its probes'
// run records and local detail, for what reads one (Warnings).
func (r *CapacityResult) AsFile() *File {
	return &File{Format: Format, FormatVersion: FormatVersion, Complete: r.Complete, CreatedAt: r.CreatedAt, Runs: r.Runs, Local: r.Local}
}

// Warnings is what Warnings says of the probes' records.
func (r *CapacityResult) Warnings() []Warning { return Warnings(r.AsFile()) }
