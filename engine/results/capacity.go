package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// PlanCapacity is the plan's name (--plan, the library's index, local.plan).
const PlanCapacity = "capacity"

// CapacityDoc is the plan's document kind.
var CapacityDoc = localOnlyKind(DocKind[CapacityResult]{Format: FormatCapacity, What: "capacity result",
	About: "Kovara Desktop's capacity plan: how many users at once the server serves within a service level, " +
		"measured with the Kovara method's closed-loop levels. Not a Kovara benchmark record; never publishable.",
	LocalOnly: "This is a capacity plan result (" + FormatCapacity + "): an answer for one service level, kept on this machine; only kovara-benchmark-results files can be published."})

// Simulated: the plan ran against the built-in simulator.
func (r *CapacityResult) Simulated() bool { return r.Local.Simulated }

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
	PlanHeader

	Settings CapacitySettings `json:"settings"`
	Answer   CapacityAnswer   `json:"answer"`
	// Probes are the levels in the order they were measured; Runs[i] and
	// Local.Levels[i] are probe i's Kovara run record and its detail.
	Probes []CapacityProbe `json:"probes"`
	// Partial is the probe a stopped search was measuring, from the
	// requests that ended before the stop (its record is
	// Local.PartialRun); nil when the search ended or stopped between
	// probes. Shown, never judged: the answer comes from Probes alone.
	Partial *CapacityProbe `json:"partial_probe,omitempty"`
	Runs    []Run          `json:"runs"`
	Local   Local          `json:"local"`
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
	// Partial marks CapacityResult.Partial: Requests are those that
	// ended before the stop, and Met and Missed are not set.
	Partial bool `json:"partial,omitempty"`
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
	// or less per doubling, or fell (KneeLine says which); nil when it
	// still grew at the last doubling.
	Knee *int `json:"knee"`
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
// the limits it missed; a partial probe is not judged.
func (p CapacityProbe) Verdict() string {
	switch {
	case p.Partial:
		return "not judged: stopped"
	case p.Met:
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
// Seconds says a time in ms: in ms under a second, else in seconds to
// the hundredth.
func Seconds(msv float64) string {
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

// CapacityLevel is one concurrency the search measured, with every probe
// of it in the order measured: the first, then any repeat.
type CapacityLevel struct {
	Concurrency int
	Probes      []CapacityProbe
}

// Levels are the measured concurrencies, ascending, each with all its
// probes: what the charts draw and what the headline and the disagreement
// warning read, so that none of them shows only a level's first probe.
func (r *CapacityResult) Levels() []CapacityLevel {
	var out []CapacityLevel
	for _, p := range r.Probes {
		i := slices.IndexFunc(out, func(l CapacityLevel) bool { return l.Concurrency == p.Concurrency })
		if i < 0 {
			out = append(out, CapacityLevel{Concurrency: p.Concurrency})
			i = len(out) - 1
		}
		out[i].Probes = append(out[i].Probes, p)
	}
	slices.SortFunc(out, func(a, b CapacityLevel) int { return a.Concurrency - b.Concurrency })
	return out
}

// level is the measured level c, or false.
func (r *CapacityResult) level(c int) (CapacityLevel, bool) {
	for _, l := range r.Levels() {
		if l.Concurrency == c {
			return l, true
		}
	}
	return CapacityLevel{}, false
}

// howMissed says how probe p missed its limits, with the numbers:
// "TTFT p95 passes 2 s (3.41 s, 1.7× the ceiling)".
func (s CapacitySettings) howMissed(p *CapacityProbe) string {
	var parts []string
	for _, l := range p.Missed {
		switch l {
		case LimitErrors:
			parts = append(parts, fmt.Sprintf("%d of %d requests failed", p.Failed, p.Requests))
		case LimitTTFT:
			got := "not measured"
			if p.TTFTP95Ms != nil {
				got = Seconds(*p.TTFTP95Ms) + ", " + ratio(*p.TTFTP95Ms/s.TTFTP95Ms) + " the ceiling"
			}
			parts = append(parts, "TTFT p95 passes "+Seconds(s.TTFTP95Ms)+" ("+got+")")
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

// figures are a probe's numbers against the two limits: "TTFT p95
// 491 ms, the slowest 5 % at 118.0 tok/s".
func figures(p *CapacityProbe) string {
	ttft, user := "not measured", "not measured"
	if p.TTFTP95Ms != nil {
		ttft = Seconds(*p.TTFTP95Ms)
	}
	if p.UserTPSP5 != nil {
		user = strconv.FormatFloat(*p.UserTPSP5, 'f', 1, 64) + " tok/s"
	}
	return "TTFT p95 " + ttft + ", the slowest 5 % at " + user
}

// probeName names probe i of a level's n probes as the headline says it.
func probeName(i, n int) string {
	switch {
	case n == 1:
		return "the probe"
	case n == 2 && i == 0:
		return "the first probe"
	case n == 2:
		return "the repeat"
	}
	return "probe " + strconv.Itoa(i+1)
}

// evidence says what every probe of level l measured against the service
// level, the passing ones with their figures and the failing ones with
// how they missed: "on the first probe TTFT p95 passes 2 s (3.2 s, 1.6×
// the ceiling), while the repeat met both limits (TTFT p95 491 ms, the
// slowest 5 % at 118.0 tok/s)".
func (s CapacitySettings) evidence(l CapacityLevel) string {
	n := len(l.Probes)
	if n == 1 {
		if p := &l.Probes[0]; !p.Met {
			return s.howMissed(p)
		}
		return "both limits were met (" + figures(&l.Probes[0]) + ")"
	}
	parts := make([]string, n)
	mixed := false
	for i := range l.Probes {
		p := &l.Probes[i]
		if p.Met != l.Probes[0].Met {
			mixed = true
		}
		if p.Met {
			parts[i] = probeName(i, n) + " met both limits (" + figures(p) + ")"
		} else {
			parts[i] = "on " + probeName(i, n) + " " + s.howMissed(p)
		}
	}
	if n == 2 && mixed {
		return parts[0] + ", while " + parts[1]
	}
	return strings.Join(parts[:n-1], ", ") + ", and " + parts[n-1]
}

// decidingLevels are the levels whose probes decided the answer: the
// capacity itself, the first level above it that missed and, when the
// answer is uncertain, the top of its range.
func (r *CapacityResult) decidingLevels() []CapacityLevel {
	a := r.Answer
	want := []int{a.Capacity, a.MissedAt}
	if a.Uncertain {
		want = append(want, a.RangeHigh)
	}
	var out []CapacityLevel
	for _, c := range want {
		if c == 0 || slices.ContainsFunc(out, func(l CapacityLevel) bool { return l.Concurrency == c }) {
			continue
		}
		if l, ok := r.level(c); ok {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(x, y CapacityLevel) int { return x.Concurrency - y.Concurrency })
	return out
}

// Headline is the answer in words, the first thing the app and the CLI
// say about a capacity result, quoting the probes that decided it: every
// probe of the capacity level and of the first level above it that
// missed (docs/plans.md).
func (r *CapacityResult) Headline() string {
	a, s := r.Answer, r.Settings
	prefix := ""
	if !r.Complete {
		prefix = "Stopped before the search ended; so far: "
	}
	people := func(n int) string { return strconv.Itoa(n) + " " + Plural(n, "person", "people") }
	if a.Capacity == 0 {
		if l, ok := r.level(1); ok && a.MissedAt == 1 {
			return prefix + "Even one person at a time misses the service level (" + s.SLO() + "): " + s.evidence(l) + "."
		}
		if p := r.Partial; p != nil && len(r.Probes) == 0 {
			return fmt.Sprintf("Stopped before the first probe finished: the probe at %d %s is kept as partial, its figures shown but not judged.", p.Concurrency, Plural(p.Concurrency, "user", "users"))
		}
		return prefix + "No level was measured."
	}
	var b strings.Builder
	b.WriteString(prefix)
	switch {
	case a.Uncertain:
		fmt.Fprintf(&b, "Your server holds %d to %d people at ≥ %s tok/s each with TTFT p95 ≤ %s; the result is uncertain: a level in that range met the limits on one probe and missed on another, so %d is the safe answer",
			a.Capacity, a.RangeHigh, num(s.UserTPS), Seconds(s.TTFTP95Ms), a.Capacity)
	case a.ReachedMax:
		fmt.Fprintf(&b, "Your server holds at least %s at ≥ %s tok/s each with TTFT p95 ≤ %s: no level up to the plan's maximum of %d missed",
			people(a.Capacity), num(s.UserTPS), Seconds(s.TTFTP95Ms), s.MaxConcurrency)
	default:
		fmt.Fprintf(&b, "Your server holds %s at ≥ %s tok/s each with TTFT p95 ≤ %s", people(a.Capacity), num(s.UserTPS), Seconds(s.TTFTP95Ms))
	}
	for _, l := range r.decidingLevels() {
		fmt.Fprintf(&b, "; at %d, %s", l.Concurrency, s.evidence(l))
	}
	b.WriteString(".")
	return b.String()
}

// AnswerLine is the CLI's last line: "capacity: 8 concurrent users
// (per-user ≥ 20 tok/s, TTFT p95 ≤ 2000 ms); 9 missed on TTFT p95".
func (r *CapacityResult) AnswerLine() string {
	a := r.Answer
	line := fmt.Sprintf("capacity: %d concurrent %s (%s)", a.Capacity, Plural(a.Capacity, "user", "users"), r.Settings.SLO())
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

// KneeLine says where total throughput stopped growing, and what it did
// past that level: grew by 10 % or less, stayed flat, or fell, with the
// two levels' total output tok/s.
func (r *CapacityResult) KneeLine() string {
	if k := r.Answer.Knee; k != nil {
		head := fmt.Sprintf("throughput knee: %d concurrent %s", *k, Plural(*k, "user", "users"))
		// The knee is read from the doubling's probes (engine/capacity.go
		// knee), so those are the two to quote.
		from, to := r.doublingProbe(*k), r.doublingProbe(2**k)
		if from == nil || to == nil {
			return head
		}
		return head + "; " + growthText(from, to)
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

// doublingProbe is the doubling step's probe of level c, or nil.
func (r *CapacityResult) doublingProbe(c int) *CapacityProbe {
	for i := range r.Probes {
		if p := &r.Probes[i]; p.Concurrency == c && p.Step == StepDouble {
			return p
		}
	}
	return nil
}

// growthText says how total output tok/s changed from one doubling level
// to the next: "total tokens/s fell 95 % from 2 to 4 users (480.0 to
// 24.0 tok/s)". A change that rounds to 0 % is said as flat, never as a
// rise or a fall.
func growthText(from, to *CapacityProbe) string {
	span := fmt.Sprintf("(%s to %s tok/s)", strconv.FormatFloat(from.OutputTPS, 'f', 1, 64), strconv.FormatFloat(to.OutputTPS, 'f', 1, 64))
	if from.OutputTPS <= 0 {
		return fmt.Sprintf("no output at %d %s %s", from.Concurrency, Plural(from.Concurrency, "user", "users"), span)
	}
	pct := math.Round((to.OutputTPS/from.OutputTPS - 1) * 100)
	switch {
	case pct < 0:
		return fmt.Sprintf("total tokens/s fell %.0f %% from %d to %d users %s", -pct, from.Concurrency, to.Concurrency, span)
	case pct == 0:
		return fmt.Sprintf("total tokens/s stayed flat from %d to %d users %s", from.Concurrency, to.Concurrency, span)
	}
	return fmt.Sprintf("doubling to %d users added %.0f %% to total tokens/s, 10 %% or less %s", to.Concurrency, pct, span)
}

// WarnSpeeds: a probe's per-user tok/s reads above its total, which the
// note says is how the two are measured (speedsNote).
const WarnSpeeds = "user_speed"

// speedsNote says, where a probe's per-user p50 tok/s is above its total
// tok/s, why it may be: each answer's pace is taken from its own first
// token to its last (1000 / TPOT), without the wait before it or the
// prompt's prefill, while the total is every answer token over the
// level's wall time, those included. "" where no probe shows it.
func (r *CapacityResult) speedsNote() string {
	for _, p := range r.Probes {
		if p.UserTPSP50 == nil || *p.UserTPSP50 <= p.OutputTPS {
			continue
		}
		return fmt.Sprintf("per-user tok/s is each answer's own pace, from its first token to its last (1000 / TPOT, the time per output token after the first), so it leaves out the wait before the answer and the prompt's prefill; total tok/s is every answer token of the level over its wall time, waits and prefill included: so at %d %s the per-user p50 (%s tok/s) is above the total (%s tok/s)",
			p.Concurrency, Plural(p.Concurrency, "user", "users"), strconv.FormatFloat(*p.UserTPSP50, 'f', 1, 64), strconv.FormatFloat(p.OutputTPS, 'f', 1, 64))
	}
	return ""
}

// WarnProbesDisagree: two probes of one capacity level disagree.
const WarnProbesDisagree = "probes_disagree"

// disagreeFactor is how far apart two probes of one level may be, in
// per-user (p50) or total output tok/s, before they are taken to have
// measured different conditions rather than run-to-run noise. On an
// otherwise idle machine repeats of a level differ by up to about 16 %
// (the llama-server capture in docs/plans.md: 632.6 and 730.6 tok/s at 8
// users); 1.5× is three times that, and a probe slowed by a build or a
// second client sharing the server is typically several times slower.
const disagreeFactor = 1.5

// disagreements are the warnings about levels whose probes disagree
// (docs/plans.md): throughput further apart than disagreeFactor is a
// problem (something else used the server or this machine); probes on
// both sides of the service level with throughput within noise are a
// note (the level sits on the limit).
func (r *CapacityResult) disagreements() []Warning {
	var ws []Warning
	for _, l := range r.Levels() {
		n := len(l.Probes)
		if n < 2 {
			continue
		}
		met := 0
		var user, total, ttft []string
		userSpread, totalSpread := 1.0, 1.0
		for i, p := range l.Probes {
			if p.Met {
				met++
			}
			user = append(user, optTPS(p.UserTPSP50))
			total = append(total, strconv.FormatFloat(p.OutputTPS, 'f', 1, 64))
			if p.TTFTP95Ms != nil {
				ttft = append(ttft, Seconds(*p.TTFTP95Ms))
			} else {
				ttft = append(ttft, "not measured")
			}
			for _, q := range l.Probes[:i] {
				userSpread = math.Max(userSpread, spread(p.UserTPSP50, q.UserTPSP50))
				totalSpread = math.Max(totalSpread, spreadOf(p.OutputTPS, q.OutputTPS))
			}
		}
		mixed := met > 0 && met < n
		disturbed := userSpread > disagreeFactor || totalSpread > disagreeFactor
		if !mixed && !disturbed {
			continue
		}
		probes := "The " + strconv.Itoa(n) + " probes"
		if n == 2 {
			probes = "The two probes"
		}
		nums := fmt.Sprintf("per-user p50 %s tok/s, total %s tok/s, TTFT p95 %s",
			strings.Join(user, " vs "), strings.Join(total, " vs "), strings.Join(ttft, " vs "))
		var verdict string
		switch {
		case mixed && n == 2:
			verdict = "one met the service level and one missed it"
		case mixed:
			verdict = fmt.Sprintf("%d met the service level and %d missed it", met, n-met)
		case met == n:
			verdict = "all met the service level"
		default:
			verdict = "all missed the service level"
		}
		if disturbed {
			ws = append(ws, Warning{Severity: SeverityProblem, Kind: WarnProbesDisagree, Text: fmt.Sprintf(
				"%s at %d %s disagree (%s; %s): throughput that far apart is beyond run-to-run noise, so something else used the server or this machine during the search; run it again on a quiet machine",
				probes, l.Concurrency, Plural(l.Concurrency, "user", "users"), nums, verdict)})
			continue
		}
		ws = append(ws, Warning{Severity: SeverityNote, Kind: WarnProbesDisagree, Text: fmt.Sprintf(
			"%s at %d %s disagree: %s, with throughput within run-to-run noise (%s): %d %s sits on the service level's edge, and the answer takes the safe side",
			probes, l.Concurrency, Plural(l.Concurrency, "user", "users"), verdict, nums, l.Concurrency, Plural(l.Concurrency, "user", "users"))})
	}
	return ws
}

// spread is how many times larger the larger of two rates is: 1 when
// equal, +Inf when only one is above zero, 1 when either is missing.
func spread(a, b *float64) float64 {
	if a == nil || b == nil {
		return 1
	}
	return spreadOf(*a, *b)
}

func spreadOf(a, b float64) float64 {
	lo, hi := math.Min(a, b), math.Max(a, b)
	switch {
	case hi <= 0:
		return 1
	case lo <= 0:
		return math.Inf(1)
	}
	return hi / lo
}

func optTPS(v *float64) string {
	if v == nil {
		return "none"
	}
	return strconv.FormatFloat(*v, 'f', 1, 64)
}

// AsFile is the capacity result seen as a Kovara results file: its probes'
// run records and local detail, for what reads one (Warnings).
func (r *CapacityResult) AsFile() *File {
	return &File{Format: Format, FormatVersion: FormatVersion, Complete: r.Complete, CreatedAt: r.CreatedAt, Runs: r.Runs, Local: r.Local}
}

// Warnings is what Warnings says of the probes' records, and whether
// probes of one level disagree, problems first.
func (r *CapacityResult) Warnings() []Warning {
	ws := append(Warnings(r.AsFile()), r.disagreements()...)
	if n := r.speedsNote(); n != "" {
		// First of the notes: it says how to read the table's two speeds.
		ws = append([]Warning{{Severity: SeverityNote, Kind: WarnSpeeds, Text: n}}, ws...)
	}
	slices.SortStableFunc(ws, func(a, b Warning) int {
		return cmp.Compare(severityRank(a.Severity), severityRank(b.Severity))
	})
	return ws
}

func severityRank(s Severity) int {
	if s == SeverityProblem {
		return 0
	}
	return 1
}
