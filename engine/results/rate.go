package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kovara/desktop/internal/decimal"
)

// PlanRate is the plan's name (--plan, the library's index, local.plan).
const PlanRate = "rate"

// The rate plan's document, kovara-desktop-rate (docs/plans.md, "The rate
// plan"): requests sent at offered rates, open loop, each request's
// latency taken from the time it was meant to leave, with goodput against
// a service level and the sweep's highest sustainable rate. Local only:
// open-loop load is not the Kovara method.

// FormatRate is a rate plan result (RateResult).
const FormatRate = "kovara-desktop-rate"

// RateDoc is the rate plan's document kind.
var RateDoc = localOnlyKind(DocKind[RateResult]{Format: FormatRate, What: "rate result",
	About: "Kovara Desktop's rate plan: requests sent at offered rates (open loop), latency from each request's " +
		"intended send time, goodput against a service level. Not a Kovara benchmark record; never publishable.",
	LocalOnly: "This is a rate plan result (" + FormatRate + "): open-loop requests at offered rates on one server, not the Kovara method's closed loop, kept on this machine; only kovara-benchmark-results files can be published."})

// RateResult is a rate plan result: the document of kind
// kovara-desktop-rate, format_version 1.
type RateResult struct {
	PlanHeader
	ServerModel string       `json:"server_model,omitempty"`
	Settings    RateSettings `json:"settings"`
	Engine      Detection    `json:"engine"`
	Compat      PlanCompat   `json:"compat"`
	// Levels are the rates measured, in the order they ran (a sweep's
	// bisection runs between rates already measured; Sorted orders them).
	Levels []RateLevel `json:"levels"`
	// Sweep is what a sweep found; nil when the rates were given.
	Sweep *RateSweep `json:"sweep,omitempty"`
	// Prefix is a shared prefix's warm and cold time to first token,
	// measured before the rates; nil without a shared prefix.
	Prefix *PrefixCheck `json:"prefix_check,omitempty"`
	// Replay is how a trace's replay matched its recording; nil when the
	// plan sent rates (docs/plans.md, "Your own traffic, replayed").
	Replay   *ReplayMatch `json:"replay,omitempty"`
	Warnings []string     `json:"warnings"`
	Local    PlanLocal    `json:"local"`
}

// Simulated: the plan ran against the built-in simulator.
func (r *RateResult) Simulated() bool { return r.Local.Simulated }

// ArrivalTrace is RateSettings.Arrival of a trace's replay: each request
// at its recorded time.
const ArrivalTrace = "trace"

// RateSettings are the choices the plan ran with.
type RateSettings struct {
	// Rates are the offered rates given, requests/s; empty for a sweep.
	Rates     []float64 `json:"rates,omitempty"`
	Sweep     bool      `json:"sweep"`
	SweepFrom float64   `json:"sweep_from,omitempty"`
	SweepMax  float64   `json:"sweep_max,omitempty"`
	// Arrival is constant, poisson or gamma; Burstiness the gamma shape
	// (1 for Poisson).
	Arrival     string  `json:"arrival"`
	Burstiness  float64 `json:"burstiness"`
	MaxInFlight int     `json:"max_in_flight"`
	// Requests is how many each rate sends.
	Requests     int      `json:"requests"`
	InputTokens  int      `json:"input_tokens"`
	OutputTokens int      `json:"output_tokens"`
	Warmup       int      `json:"warmup"`
	SLO          *RateSLO `json:"slo,omitempty"`
	// Workload is what the requests asked beyond the synthetic prompt
	// (nil: the synthetic prompt of InputTokens).
	Workload    *Workload `json:"workload,omitempty"`
	Temperature float64   `json:"temperature"`
	IgnoreEOS   bool      `json:"ignore_eos"`
	// ScheduleSeed makes the send times; Seed the prompts.
	ScheduleSeed    int64   `json:"schedule_seed"`
	PromptGenerator string  `json:"prompt_generator"`
	Seed            int64   `json:"seed"`
	TimeoutS        float64 `json:"timeout_s"`
	Client          string  `json:"client"`
	ClientVersion   string  `json:"client_version"`
}

// RateSLO is the service level each request is judged by; a zero limit
// is not judged.
type RateSLO struct {
	TTFTMs  float64 `json:"ttft_ms,omitempty"`
	TPOTMs  float64 `json:"tpot_ms,omitempty"`
	UserTPS float64 `json:"user_tps,omitempty"`
}

// Words says the service level: "TTFT ≤ 500 ms, TPOT ≤ 50 ms".
func (s *RateSLO) Words() string {
	if s == nil {
		return ""
	}
	return listed(
		when(s.TTFTMs > 0, "TTFT ≤ "+Seconds(s.TTFTMs)),
		when(s.TPOTMs > 0, "TPOT ≤ "+num(s.TPOTMs)+" ms"),
		when(s.UserTPS > 0, "≥ "+num(s.UserTPS)+" tok/s a request"))
}

// FirstWords says the service level where a text names it first: as
// Words, with TPOT said in plain words once ("TPOT (time per output token
// after the first) ≤ 50 ms").
func (s *RateSLO) FirstWords() string {
	if s == nil {
		return ""
	}
	return strings.Replace(s.Words(), "TPOT ≤", "TPOT (time per output token after the first) ≤", 1)
}

// RateSweep is what a sweep found.
type RateSweep struct {
	// Sustainable is the highest rate measured that the server sustained,
	// requests/s; 0 when even the first was not.
	Sustainable float64 `json:"sustainable"`
	// Limit is the lowest rate measured that it did not sustain, 0 when
	// it sustained every rate up to the sweep's top; Reason says why
	// (RateLevel.Verdict of that rate).
	Limit  float64 `json:"limit"`
	Reason string  `json:"reason,omitempty"`
}

// RateLevel is one offered rate.
type RateLevel struct {
	Rate float64 `json:"rate"` // offered, requests/s
	// Requests were sent, OK succeeded.
	Requests int `json:"requests"`
	OK       int `json:"ok"`
	// AchievedRate is the successes a second over the level (first
	// intended send to last end); SentRate the sends a second from the
	// first to the last.
	AchievedRate float64 `json:"achieved_rate"`
	SentRate     float64 `json:"sent_rate"`
	OutputTPS    float64 `json:"output_tps"`
	// LatencyMs and TTFTMs are taken from each request's intended send
	// time; TPOTMs is ms per output token after the first.
	LatencyMs *Dist `json:"latency_ms"`
	TTFTMs    *Dist `json:"ttft_ms"`
	TPOTMs    *Dist `json:"tpot_ms"`
	// LatenessMs is the client's own lateness: actual send − the later
	// of its intended time and the moment a slot was free for it.
	LatenessMs *Dist `json:"lateness_ms"`
	// QueueMs is how long requests waited for a free slot (all in flight
	// at the cap) past their intended time, over every request;
	// ConnectMs how long they then took to connect (the server taking a
	// new connection; nil in documents without it); WaitMs the two
	// together, what each waited to be sent that was not the client's
	// doing. Queued counts the requests whose wait was over
	// RateQueuedMs, Connecting those whose connecting was.
	QueueMs    *Dist `json:"queue_ms"`
	ConnectMs  *Dist `json:"connect_ms,omitempty"`
	WaitMs     *Dist `json:"wait_ms,omitempty"`
	Queued     int   `json:"queued"`
	Connecting int   `json:"connecting,omitempty"`
	// QueueGrew: the wait grew through the level (its last quarter waited
	// on median more than its first by RateGrowthMs and two intervals).
	QueueGrew bool `json:"queue_grew"`
	// LatencyGrew: latency grew through the level (its last quarter's
	// median at least twice its first's, and by RateGrowthMs): a queue
	// inside the server.
	LatencyGrew  bool `json:"latency_grew"`
	PeakInFlight int  `json:"peak_in_flight"`
	// Goodput is nil without a service level.
	Goodput *Goodput `json:"goodput,omitempty"`
	// PromptTokens and CompletionTokens are the successes' lengths as the
	// server counted them (nil when it did not); Cache what it took from
	// its cache; ByTurn the conversations' turns (empty without turns).
	PromptTokens     *Dist         `json:"prompt_tokens,omitempty"`
	CompletionTokens *Dist         `json:"completion_tokens,omitempty"`
	Cache            *PromptCache  `json:"cache,omitempty"`
	ByTurn           []TurnFigures `json:"by_turn,omitempty"`
	// Sustained says the server kept up with the rate; Verdict why not.
	Sustained bool         `json:"sustained"`
	Verdict   string       `json:"verdict,omitempty"`
	Samples   *RateSamples `json:"samples"`
	Failures  []string     `json:"failures,omitempty"` // up to three messages
	Partial   bool         `json:"partial,omitempty"`
}

// Goodput is the requests that met the service level: how many, their
// share of those sent, and their rate over the level.
type Goodput struct {
	Met   int     `json:"met"`
	Share float64 `json:"share"`
	Rate  float64 `json:"rate"` // requests/s
}

// RateSayWaitMs is the longest wait to be sent that the notes leave
// unsaid (a reconnect or two of a few ms); RateQueuedMs is the wait a
// request is counted queued after;
// RateGrowthMs the least growth of that wait through a level that says
// the queue grows.
const (
	RateSayWaitMs = 100
	RateQueuedMs  = 10
	RateGrowthMs  = 500
)

// RateSamples are a level's requests as the client saw them: the shared
// raw samples (StartUs the actual send) and, beside each, its intended
// send, µs from the run's start.
type RateSamples struct {
	LevelSamples
	DueUs []int64 `json:"due_us"`
	// TriedUs is, beside each, when the client handed it to its
	// connection: from then until it left (StartUs) is connecting, which
	// waits while the server takes no new connection (llama-server closes
	// its connection after each streamed answer). Empty in documents
	// without it.
	TriedUs []int64 `json:"tried_us,omitempty"`
}

// RateRequest is one request of a level in the rate plan's terms, µs
// from the run's start.
type RateRequest struct {
	IntendedUs int64 // when the schedule meant it to leave
	FreeUs     int64 // when a slot was free for it: IntendedUs or later
	TriedUs    int64 // when the client handed it to its connection: FreeUs or later
	SentUs     int64 // when it left: TriedUs or later
	FirstUs    int64 // its first text; -1 when none came
	EndUs      int64
	Tokens     int
	Error      string
}

// Each is the level's requests in the order they were sent; a
// request's slot was free when the slot's previous request ended (the
// level's start for its first).
func (s *RateSamples) Each() []RateRequest {
	if s == nil {
		return nil
	}
	usage := s.AllUsage()
	out := make([]RateRequest, 0, len(s.LevelSamples.Requests))
	lastEnd := map[int]int64{}
	for i, q := range s.LevelSamples.Requests {
		due := q.StartUs
		if i < len(s.DueUs) {
			due = s.DueUs[i]
		}
		free, ok := lastEnd[q.Slot]
		if !ok {
			free = s.StartUs
		}
		lastEnd[q.Slot] = q.EndUs
		first := int64(-1)
		if q.TTFTUs >= 0 {
			first = q.StartUs + q.TTFTUs
		}
		free = max(free, due)
		tried := max(free, q.StartUs)
		if i < len(s.TriedUs) {
			tried = min(max(s.TriedUs[i], free), q.StartUs)
		}
		out = append(out, RateRequest{IntendedUs: due, FreeUs: free, TriedUs: tried, SentUs: q.StartUs, FirstUs: first, EndUs: q.EndUs,
			Tokens: q.OutputTokens(usage), Error: q.Error})
	}
	return out
}

// LatencyMs is the time from the intended send to the answer's end.
func (q RateRequest) LatencyMs() float64 { return float64(q.EndUs-q.IntendedUs) / 1000 }

// TTFTMs is the time from the intended send to the first text; -1
// without one.
func (q RateRequest) TTFTMs() float64 {
	if q.FirstUs < 0 {
		return -1
	}
	return float64(q.FirstUs-q.IntendedUs) / 1000
}

// TPOTMs is ms per output token after the first; -1 with fewer than two.
func (q RateRequest) TPOTMs() float64 {
	if q.FirstUs < 0 || q.Tokens < 2 {
		return -1
	}
	return float64(q.EndUs-q.FirstUs) / 1000 / float64(q.Tokens-1)
}

// QueueMs is how long it waited for a slot past its intended time.
func (q RateRequest) QueueMs() float64 { return float64(q.FreeUs-q.IntendedUs) / 1000 }

// LatenessMs is the client's own delay: from the moment it could leave
// (intended, with a slot free) to when it handed it to its connection.
func (q RateRequest) LatenessMs() float64 { return float64(max(q.TriedUs-q.FreeUs, 0)) / 1000 }

// ConnectMs is the time from handing it to its connection to its
// leaving: reconnecting, when the server closed the last connection,
// which waits while the server takes no new one.
func (q RateRequest) ConnectMs() float64 { return float64(max(q.SentUs-q.TriedUs, 0)) / 1000 }

// WaitMs is what it waited past its intended time that was not the
// client's doing: for a slot, then for a connection.
func (q RateRequest) WaitMs() float64 { return q.QueueMs() + q.ConnectMs() }

// Met says whether a successful request met the service level, each
// limit on its own figures; false for a failure.
func (s *RateSLO) Met(q RateRequest) bool {
	if q.Error != "" {
		return false
	}
	if s == nil {
		return true
	}
	if s.TTFTMs > 0 && (q.TTFTMs() < 0 || q.TTFTMs() > s.TTFTMs) {
		return false
	}
	tpot := q.TPOTMs()
	if s.TPOTMs > 0 && (tpot < 0 || tpot > s.TPOTMs) {
		return false
	}
	if s.UserTPS > 0 && (tpot <= 0 || 1000/tpot < s.UserTPS) {
		return false
	}
	return true
}

// RateName says a rate: "2 req/s".
func RateName(r float64) string { return RateNumber(r) + " req/s" }

// RateNumber writes a rate as a plain decimal to four significant
// digits, never in exponent form: "20000", "2.5", "0.01", "3.333".
func RateNumber(r float64) string { return decimal.Short(r) }

// Sorted are the levels by offered rate, lowest first.
func (r *RateResult) Sorted() []*RateLevel {
	out := make([]*RateLevel, len(r.Levels))
	for i := range r.Levels {
		out[i] = &r.Levels[i]
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Rate < out[j-1].Rate; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// LevelAt is the level at rate, or nil.
func (r *RateResult) LevelAt(rate float64) *RateLevel {
	for i := range r.Levels {
		if r.Levels[i].Rate == rate {
			return &r.Levels[i]
		}
	}
	return nil
}

// RateColumns are the rate table's headings: each column one figure,
// its unit in the heading, so a spreadsheet reads every cell a number.
var RateColumns = []string{"Offered\nreq/s", "Achieved\nreq/s", "Latency p50\nms", "Latency p95\nms", "TTFT p50\nms", "TPOT p50\nms",
	"Goodput\n%", "Goodput\nreq/s", "Waited to be\nsent (requests)", "Longest wait\nto be sent ms", "Client late\np99 ms", "Client late\nmax ms",
	"OK", "Kept up"}

// Table is the rate table: a row per offered rate, lowest first, every
// latency from the intended send.
func (r *RateResult) Table() Table {
	t := Table{Columns: RateColumns}
	own := r.Settings.Workload != nil
	if own {
		t.Columns = append(slices.Clone(RateColumns), WorkloadColumns...)
	}
	for _, l := range r.Sorted() {
		name := RateNumber(l.Rate)
		if l.Partial {
			name += " (partial)"
		}
		goodShare, goodRate := Missing, Missing
		if l.Goodput != nil {
			goodShare = strconv.FormatFloat(l.Goodput.Share*100, 'f', 0, 64)
			goodRate = strconv.FormatFloat(l.Goodput.Rate, 'f', 2, 64)
		}
		longest := Missing
		if w := l.wait(); w != nil {
			longest = strconv.FormatFloat(w.Max, 'f', 0, 64)
		}
		lateMax := Missing
		if l.LatenessMs != nil {
			lateMax = strconv.FormatFloat(l.LatenessMs.Max, 'f', 1, 64)
		}
		kept := "yes"
		if !l.Sustained {
			kept = "no"
		}
		if l.Partial {
			kept = Missing
		}
		row := []string{name, strconv.FormatFloat(l.AchievedRate, 'f', 2, 64), distAt(l.LatencyMs, 50), distAt(l.LatencyMs, 95),
			distAt(l.TTFTMs, 50), distAtPrec(l.TPOTMs, 50, 1), goodShare, goodRate, strconv.Itoa(l.Queued), longest,
			distAtPrec(l.LatenessMs, 99, 1), lateMax, fmt.Sprintf("%d / %d", l.OK, l.Requests), kept}
		if own {
			row = append(row, workloadCells(l.PromptTokens, l.CompletionTokens, l.Cache)...)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func distAt(d *Dist, q int) string { return distAtPrec(d, q, 0) }

func distAtPrec(d *Dist, q, prec int) string {
	v, ok := d.At(q)
	if !ok {
		return Missing
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// wait is what requests waited to be sent: WaitMs, or QueueMs in
// documents without it.
func (l *RateLevel) wait() *Dist {
	if l.WaitMs != nil {
		return l.WaitMs
	}
	return l.QueueMs
}

// ClientLateMs is how late the client may send on its own before the
// result says its figures are in doubt.
const ClientLateMs = 10

// QueueWords says a level's queue in words, or "" when no request
// waited: "requests queued and the queue kept growing: the server could
// not keep up with 4 req/s; requests waited up to 12 s before they were
// sent".
func (l *RateLevel) QueueWords(maxInFlight int) string {
	w := l.WaitMs
	if w == nil {
		w = l.QueueMs
	}
	if l.Queued == 0 || w == nil || (w.Max < RateSayWaitMs && !l.QueueGrew) {
		return ""
	}
	var why []string
	if q := l.QueueMs; q != nil && q.Max > RateQueuedMs {
		why = append(why, fmt.Sprintf("for one of the %d slots (all %d in flight, up to %s)", maxInFlight, maxInFlight, Seconds(q.Max)))
	}
	if c := l.ConnectMs; l.Connecting > 0 && c != nil {
		why = append(why, fmt.Sprintf("for the server to take a new connection (%d of them, up to %s: a server that closes its connection after each answer, as llama-server does, takes new ones only as it frees up)",
			l.Connecting, Seconds(c.Max)))
	}
	s := fmt.Sprintf("at %s, %d of %d requests waited to be sent: %s; ", RateName(l.Rate), l.Queued, l.Requests, strings.Join(why, ", and "))
	if l.QueueGrew {
		return s + fmt.Sprintf("requests queued and the queue kept growing: the server could not keep up with %s; requests waited up to %s before they were sent, and that wait counts in their latency",
			RateName(l.Rate), Seconds(w.Max))
	}
	return s + "that wait counts in their latency, but the queue did not keep growing"
}

// ServerQueueWords says a queue that grew inside the server, or "":
// the client sent every request on time (no wait of its own grew), yet
// latency kept growing through the level, so requests waited in the
// server's own queue for the few it serves at once. It names the setting
// of the server's family that serves more (ParallelFix), sized for the
// offered rate times the time an answer took once begun — unless the
// server says it has that many slots already (det), where more would not
// help: its answers waited for one another (seen on llama-server b4748
// -np 2 replaying a trace: one 9,000-token prompt's prefill held the
// other slot, and the advice was "start it with -np 2").
func (l *RateLevel) ServerQueueWords(det Detection) string {
	family := det.Family
	if !l.LatencyGrew || l.QueueGrew {
		return ""
	}
	first, last, ok := QuarterMedians(l.Samples.Each(), RateRequest.LatencyMs)
	if !ok {
		return ""
	}
	s := fmt.Sprintf("at %s, requests queued inside the server and the queue kept growing: it finished %s req/s of the %s offered, and the median latency went from %s over the first quarter of the requests to %s over the last",
		RateName(l.Rate), strconv.FormatFloat(l.AchievedRate, 'f', 2, 64), RateNumber(l.Rate), Seconds(first), Seconds(last))
	// Answers in progress at once to keep up (Little's law): the rate
	// times how long an answer took once its first token came, the median
	// answer's (a difference of the level's fastest latency and fastest
	// first token, as it was, came from two requests: one first token
	// stamped late on a busy client halved it).
	want := int(math.Ceil(l.Rate * l.decodeMedianMs() / 1000))
	at := l.AnsweringAtOnce()
	switch {
	case at < want && det.ParallelSlots >= max(want, 2) || at <= 1 && det.ParallelSlots >= 2:
		s += fmt.Sprintf("; it answered about %d at once though it has %d %s (%s), so more would not help: its answers waited for one another — a long prompt's prefill holds the other slots on many builds — or it was short of compute",
			max(at, 1), det.ParallelSlots, Plural(det.ParallelSlots, "slot", "slots"), det.ParallelSource)
	case at <= 1:
		s += "; it answered one request at a time; " + ParallelFix(family, max(want, 2))
	case at < want:
		s += fmt.Sprintf("; it answered about %d at once; %s", at, ParallelFix(family, want))
	default:
		s += fmt.Sprintf("; it answered about %d at once and still fell behind: at this rate the server's own speed is the limit, not how many it serves at once", at)
	}
	return s
}

// GrowthWords says latency that grew through a level, from the medians
// over the first and the last quarter of its requests (QuarterMedians,
// the rule the growth is judged by): time to first token, where the wait
// in a server's queue shows, and latency beside it — "time to first token
// grew from 120 ms over the first quarter of the requests to 2.41 s over
// the last (latency 1.10 s to 3.52 s): a queue was building inside the
// server". "" without samples to say it from.
func (l *RateLevel) GrowthWords() string {
	reqs := l.Samples.Each()
	la, lb, ok := QuarterMedians(reqs, RateRequest.LatencyMs)
	if !ok {
		return ""
	}
	ta, tb, tok := QuarterMedians(reqs, RateRequest.TTFTMs)
	if !tok || ta < 0 || tb <= ta {
		return fmt.Sprintf("the median latency grew from %s over the first quarter of the requests to %s over the last: a queue was building inside the server",
			Seconds(la), Seconds(lb))
	}
	return fmt.Sprintf("time to first token grew from %s over the first quarter of the requests to %s over the last (latency %s to %s): a queue was building inside the server",
		Seconds(ta), Seconds(tb), Seconds(la), Seconds(lb))
}

// KeptPace says the server kept up with a level's offered rate in
// throughput: every request answered, no queue to be sent that kept
// growing, and the answers finished at least as fast as they were offered
// (achieved ≥ offered). A rate not kept up with (Sustained false) that
// kept pace was judged on its latency (it grew through the level, or
// doubled against the lowest rate's) or on the service level, not on
// what the server got through.
func (l *RateLevel) KeptPace() bool {
	return l.OK > 0 && l.OK == l.Requests && !l.QueueGrew && l.AchievedRate >= l.Rate
}

// MissedWords says why the server did not keep up with a level's rate,
// as its figures show it, to follow the rate ("At 8 req/s "): where it
// kept pace, that it kept up in throughput, with what it finished, but not
// in latency, and why; else that it did not keep up, and why (Verdict).
func (l *RateLevel) MissedWords() string {
	why := l.Verdict
	if why == "" {
		why = "its figures were not judged"
	}
	if !l.KeptPace() {
		return "it did not keep up: " + why
	}
	return fmt.Sprintf("it kept up in throughput (%s req/s finished, all %d requests answered), but not in latency: %s",
		strconv.FormatFloat(l.AchievedRate, 'f', 2, 64), l.Requests, why)
}

// QuarterMedians are a figure's medians over the first and the last
// quarter of a level's successful requests by intended send: what the
// engine judges growth through a level by (a queue, latency) and what
// the sentences say of it, one rule for both. ok is false under eight
// requests, or with no success in a quarter.
func QuarterMedians(reqs []RateRequest, f func(RateRequest) float64) (first, last float64, ok bool) {
	reqs = slices.Clone(reqs)
	slices.SortStableFunc(reqs, func(a, b RateRequest) int { return cmp.Compare(a.IntendedUs, b.IntendedUs) })
	q := len(reqs) / 4
	if q < 2 {
		return 0, 0, false
	}
	median := func(rs []RateRequest) (float64, bool) {
		var xs []float64
		for _, r := range rs {
			if r.Error == "" {
				xs = append(xs, f(r))
			}
		}
		if len(xs) == 0 {
			return 0, false
		}
		slices.Sort(xs)
		// Type 7 at one half, as stats.Quantile (which imports this
		// package, so cannot be called from it): the middle value, or
		// the mean of the two middle ones.
		m := len(xs) / 2
		if len(xs)%2 == 0 {
			return (xs[m-1] + xs[m]) / 2, true
		}
		return xs[m], true
	}
	a, aok := median(reqs[:q])
	b, bok := median(reqs[len(reqs)-q:])
	return a, b, aok && bok
}

// AnsweringAtOnce is how many successful requests the server answered at
// once while it answered any, each from its first token to its end: the
// answers' summed time over the time any was in progress, rounded (a
// request that waits in the server's queue has no first token yet). It is
// the average of Little's law, the same quantity ServerQueueWords sets
// against the rate, and not the peak: a busy client stamps an answer's
// end late, past the next one's first token (CI beside stress-ng saw
// 19 ms at 5 ms a token), and the peak then read 2 for a server that
// answered one at a time, where the average moves by that overlap alone.
func (l *RateLevel) AnsweringAtOnce() int {
	var spans [][2]int64
	for _, q := range l.Samples.Each() {
		if q.Error == "" && q.FirstUs >= 0 && q.EndUs > q.FirstUs {
			spans = append(spans, [2]int64{q.FirstUs, q.EndUs})
		}
	}
	if len(spans) == 0 {
		return 0
	}
	slices.SortFunc(spans, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var sum, busy, to int64
	to = math.MinInt64
	for _, s := range spans {
		sum += s[1] - s[0]
		switch {
		case s[0] >= to:
			busy += s[1] - s[0]
			to = s[1]
		case s[1] > to:
			busy += s[1] - to
			to = s[1]
		}
	}
	return max(1, int(math.Round(float64(sum)/float64(busy))))
}

// decodeMedianMs is the median time an answer took from its first token
// to its end, in ms, or 0 without one.
func (l *RateLevel) decodeMedianMs() float64 {
	var d []float64
	for _, q := range l.Samples.Each() {
		if q.Error == "" && q.FirstUs >= 0 && q.EndUs > q.FirstUs {
			d = append(d, float64(q.EndUs-q.FirstUs)/1000)
		}
	}
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// MostAtOnce is the most of spans, each [start, end), that overlap at
// one time: requests in flight, answers in progress. One that ends as
// another starts is not two at once (a slot reused at once).
func MostAtOnce(spans [][2]int64) int {
	type ev struct {
		at int64
		d  int
	}
	evs := make([]ev, 0, 2*len(spans))
	for _, s := range spans {
		evs = append(evs, ev{s[0], 1}, ev{s[1], -1})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return a.d - b.d
	})
	n, peak := 0, 0
	for _, e := range evs {
		n += e.d
		peak = max(peak, n)
	}
	return peak
}

// LateWords says when the client itself sent late, or "".
func (l *RateLevel) LateWords() string {
	d := l.LatenessMs
	if d == nil {
		return ""
	}
	p99, ok := d.At(99)
	if !ok {
		p99 = d.Max
	}
	if p99 <= ClientLateMs {
		return ""
	}
	return fmt.Sprintf("at %s this machine sent requests late by itself: %s at the 99th percentile, %s at worst (not waiting for a slot or the server); a busy or slow client adds that to every latency, so run it again on a quieter machine",
		RateName(l.Rate), Seconds(p99), Seconds(d.Max))
}

// Headline is the result in words: the sustainable rate a sweep found or
// how latency went over the given rates, and the queue at the highest.
func (r *RateResult) Headline() string {
	var parts []string
	if !r.Complete {
		parts = append(parts, "Stopped before every rate was measured; so far:")
	}
	ls := r.measured()
	if len(ls) == 0 {
		return strings.Join(append(parts, "No rate was measured."), " ")
	}
	if sw := r.Sweep; sw != nil {
		// What the limit's level shows, where it is among the levels.
		missed := "it did not keep up: " + sw.Reason
		if l := r.LevelAt(sw.Limit); l != nil && !l.Sustained && !l.Partial {
			missed = l.MissedWords()
		}
		switch {
		case sw.Sustainable == 0 && sw.Limit > 0:
			parts = append(parts, fmt.Sprintf("Even at %s, the lowest rate measured, %s.", RateName(sw.Limit), missed))
		case sw.Limit == 0:
			parts = append(parts, fmt.Sprintf("The server kept up with every rate up to %s, the top of the sweep.", RateName(sw.Sustainable)))
		default:
			parts = append(parts, fmt.Sprintf("The server kept up with up to %s; at %s %s.", RateName(sw.Sustainable), RateName(sw.Limit), missed))
		}
	}
	first, last := ls[0], ls[len(ls)-1]
	if first != last && first.LatencyMs != nil && last.LatencyMs != nil {
		parts = append(parts, fmt.Sprintf("Median latency from the intended send went from %s at %s to %s at %s.",
			Seconds(first.LatencyMs.P50), RateName(first.Rate), Seconds(last.LatencyMs.P50), RateName(last.Rate)))
	} else if m := r.Replay; m != nil && last.LatencyMs != nil {
		// A trace's one level: said as the traffic it replays, not as a
		// rate someone chose.
		s := fmt.Sprintf("The trace's %d requests replayed at their recorded times (%s on average): median latency %s from the intended send", m.Sent, RateName(last.Rate), Seconds(last.LatencyMs.P50))
		if t := m.TTFTMs; t != nil {
			s += fmt.Sprintf(", time to first token %s against %s when it was recorded", Seconds(t.ReplayedP50), Seconds(t.RecordedP50))
		}
		parts = append(parts, s+".")
	} else if last.LatencyMs != nil {
		parts = append(parts, fmt.Sprintf("At %s the median latency from the intended send was %s.", RateName(last.Rate), Seconds(last.LatencyMs.P50)))
	}
	if r.Sweep == nil {
		if hi := r.highestSustained(); hi != nil && hi != last {
			parts = append(parts, fmt.Sprintf("It kept up with up to %s.", RateName(hi.Rate)))
		}
		for _, l := range ls {
			if !l.Sustained {
				parts = append(parts, fmt.Sprintf("At %s %s.", RateName(l.Rate), l.MissedWords()))
				break
			}
		}
	}
	if last.Goodput != nil && r.Settings.SLO != nil {
		parts = append(parts, fmt.Sprintf("Goodput at %s: %.0f %% of requests met %s — goodput counts only those (%s req/s).", RateName(last.Rate), last.Goodput.Share*100,
			r.Settings.SLO.FirstWords(), strconv.FormatFloat(last.Goodput.Rate, 'f', 2, 64)))
	}
	if s := r.Prefix.Headline(); s != "" {
		parts = append(parts, s)
	}
	if n := len(r.Warnings); n > 0 {
		parts = append(parts, fmt.Sprintf("Read the %d %s below before trusting the figures.", n, Plural(n, "warning", "warnings")))
	}
	return strings.Join(parts, " ")
}

// measured are the levels with a latency, lowest rate first.
func (r *RateResult) measured() []*RateLevel {
	var out []*RateLevel
	for _, l := range r.Sorted() {
		if l.LatencyMs != nil && !l.Partial {
			out = append(out, l)
		}
	}
	return out
}

func (r *RateResult) highestSustained() *RateLevel {
	var hi *RateLevel
	for _, l := range r.measured() {
		if l.Sustained {
			hi = l
		}
	}
	return hi
}

// Notes are the queue and lateness sentences of every level, lowest
// rate first: what the table's "Waited to be sent" and "Client late"
// columns mean for each.
func (r *RateResult) Notes() []string {
	out := r.Replay.Words()
	if w := r.Settings.Workload.Words(); w != "" {
		out = append(out, "The requests: "+w+".")
	}
	if s := r.Prefix.Words(); s != "" {
		out = append(out, "The shared prefix alone, one request at a time: "+s+".")
	}
	if p := r.Settings.Workload.prompts(); p != nil && p.Skipped > 0 {
		out = append(out, p.SkippedWords())
	}
	for _, l := range r.Sorted() {
		if s := TurnsWords(RateName(l.Rate), l.ByTurn); s != "" {
			out = append(out, s)
		}
		if s := l.QueueWords(r.Settings.MaxInFlight); s != "" {
			out = append(out, s)
		}
		if s := l.ServerQueueWords(r.Engine); s != "" {
			out = append(out, s)
		}
		if s := l.LateWords(); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Problems are what went wrong, in words: failed requests per rate and
// another client's load on the server.
func (r *RateResult) Problems() []string {
	var out []string
	for _, l := range r.Sorted() {
		if n := l.Requests - l.OK; n > 0 && len(l.Failures) > 0 {
			out = append(out, fmt.Sprintf("at %s, %d of %d requests failed (first: %s)", RateName(l.Rate), n, l.Requests, l.Failures[0]))
		}
	}
	if s := r.Replay.Problem(); s != "" {
		out = append(out, s)
	}
	return append(out, ForeignLoadProblems(r.Local.ServerMetrics)...)
}

// Method says how the table's figures are made.
func (r *RateResult) Method() string {
	if r.Settings.Arrival == ArrivalTrace {
		return fmt.Sprintf("a trace's requests sent open loop at their recorded times, at most %d in flight, each prompt made to its recorded length with the recorded prefix sharing (blocks with one hash share one text) and each answer asked for its recorded length; latency and TTFT are taken from each request's intended send time, so a wait for a slot counts; TPOT = (last token − first token) / (tokens − 1)",
			r.Settings.MaxInFlight)
	}
	arr := r.Settings.Arrival
	if arr == "gamma" {
		arr += " (burstiness " + num(r.Settings.Burstiness) + ")"
	}
	s := fmt.Sprintf("%d requests at each offered rate, sent open loop (each at its scheduled time, whether or not the ones before it have answered), %s arrivals from schedule seed %d, at most %d in flight; latency and TTFT are taken from each request's intended send time, so a wait for a slot counts; TPOT = (last token − first token) / (tokens − 1); achieved = successes / the time from the first intended send to the last end",
		r.Settings.Requests, arr, r.Settings.ScheduleSeed, r.Settings.MaxInFlight)
	if r.Settings.SLO != nil {
		s += fmt.Sprintf("; goodput = requests that met %s, each on its own figures; a rate is kept up with while at least %.0f %% meet it", r.Settings.SLO.Words(), RateGoodputShare*100)
	}
	return s
}

// RateGoodputShare is the share of requests that must meet the service
// level for a rate to count as kept up with (setup.RateGoodputTarget).
const RateGoodputShare = 0.95

// RatePoint is one rate on a chart: X the offered rate, Y the figure.
type RatePoint struct {
	Rate, Y float64
}

// RateSeries names what a rate result charts against the offered rate.
type RateSeries int

// The series of the rate chart.
const (
	RateLatencyP50 RateSeries = iota
	RateLatencyP95
	RateAchieved
	RateGoodputRate
)

// String names a series as a legend does.
func (s RateSeries) String() string {
	switch s {
	case RateLatencyP50:
		return "latency p50 (from intended send)"
	case RateLatencyP95:
		return "latency p95 (from intended send)"
	case RateAchieved:
		return "achieved req/s"
	case RateGoodputRate:
		return "goodput req/s"
	}
	return ""
}

// Points are a series' points, lowest rate first; a rate without the
// figure is left out.
func (r *RateResult) Points(s RateSeries) []RatePoint {
	var out []RatePoint
	for _, l := range r.Sorted() {
		if l.Partial {
			continue
		}
		var v float64
		ok := true
		switch s {
		case RateLatencyP50:
			v, ok = l.LatencyMs.At(50)
		case RateLatencyP95:
			v, ok = l.LatencyMs.At(95)
		case RateAchieved:
			v = l.AchievedRate
		case RateGoodputRate:
			ok = l.Goodput != nil
			if ok {
				v = l.Goodput.Rate
			}
		}
		if ok && !math.IsNaN(v) {
			out = append(out, RatePoint{Rate: l.Rate, Y: v})
		}
	}
	return out
}
