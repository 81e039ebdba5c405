package engine

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/results"
)

// Merge makes one ordinary results file of the shard files of a run
// measured from several client machines (RunShard, docs/distributed.md).
// names name the files in what it says (nil: "file 1", …).
//
// Every shard's samples are put on one clock, the earliest shard's start,
// by each shard's wall-clock start; each level's requests are pooled
// (users renumbered 0…c-1: shard I's user j is I-1+j·N) and the level's
// metrics computed from the pool exactly as a single run computes its own
// (levelMetrics): percentiles of the pooled requests and gaps, throughput
// over the union of the shards' windows. Shards whose conditions differ,
// missing or repeated shards, shards without samples and levels the
// shards did not run together are refused, each reason a sentence.
func Merge(files []*results.File, names []string) (*results.File, error) {
	m := merger{files: files, names: names}
	if err := m.check(); err != nil {
		return nil, err
	}
	return m.merge()
}

type merger struct {
	files []*results.File
	names []string
	// byIndex is the files in shard order, once checked.
	byIndex []*results.File
	// zero is the earliest shard's t0, µs since the epoch: the merged
	// file's clock starts there.
	zero int64
}

func (m *merger) name(i int) string {
	if i < len(m.names) && m.names[i] != "" {
		return m.names[i]
	}
	return "file " + strconv.Itoa(i+1)
}

// check refuses what cannot be merged, naming every reason.
func (m *merger) check() error {
	var why []string
	say := func(format string, args ...any) { why = append(why, fmt.Sprintf(format, args...)) }
	if len(m.files) == 0 {
		return errors.New("no shard files given")
	}
	of := 0
	seen := map[int]int{}
	for i, f := range m.files {
		sh := f.Local.Shard
		if sh == nil {
			say("%s is not a shard file: it was not made by kovara-bench run --shard", m.name(i))
			continue
		}
		if of == 0 {
			of = sh.Of
		} else if sh.Of != of {
			say("%s is shard %d of %d, but %s is of %d: they are not shards of one run", m.name(i), sh.Index, sh.Of, m.name(m.firstShard()), of)
			continue
		}
		if j, dup := seen[sh.Index]; dup {
			say("shard %d of %d is given twice: %s and %s", sh.Index, sh.Of, m.name(j), m.name(i))
			continue
		}
		seen[sh.Index] = i
		if !f.Complete {
			say("%s (shard %d of %d) was stopped before its last level: merge only shards that finished", m.name(i), sh.Index, sh.Of)
		}
		if len(sh.Runs) != len(f.Local.Levels) {
			say("%s (shard %d of %d) has %d level records for %d levels: the file was cut short or edited", m.name(i), sh.Index, sh.Of, len(sh.Runs), len(f.Local.Levels))
		}
		for _, lv := range f.Local.Levels {
			if lv.Samples == nil {
				say("%s (shard %d of %d) kept no raw samples at concurrency %d: a level cannot be merged without every request", m.name(i), sh.Index, sh.Of, lv.Concurrency)
			}
		}
	}
	for k := 1; k <= of; k++ {
		if _, ok := seen[k]; !ok {
			say("shard %d of %d is missing: give all %d shard files", k, of, of)
		}
	}
	if len(why) > 0 {
		return mergeError(why)
	}
	m.byIndex = make([]*results.File, of)
	order := make([]int, of)
	for k, i := range seen {
		m.byIndex[k-1], order[k-1] = m.files[i], i
	}
	// Conditions: every shard against the first.
	first := m.byIndex[0]
	for k := 1; k < of; k++ {
		for _, d := range conditionDiffs(first, m.byIndex[k]) {
			say("shard %d (%s) differs from shard 1 (%s) in %s", k+1, m.name(order[k]), m.name(order[0]), d)
		}
	}
	if len(why) > 0 {
		return mergeError(why)
	}
	m.zero = first.Local.Shard.T0UnixUs
	for _, f := range m.byIndex {
		m.zero = min(m.zero, f.Local.Shard.T0UnixUs)
	}
	// Each level: released on time by every shard, and over before any
	// shard began the next.
	start, _ := time.Parse(time.RFC3339Nano, first.Local.Shard.StartAt)
	every := time.Duration(first.Local.Shard.LevelEveryS * float64(time.Second))
	for j, lv := range first.Local.Levels {
		for k, f := range m.byIndex {
			s := f.Local.Levels[j].Samples
			if s.Slots == 0 {
				continue
			}
			if late := releaseLate(f.Local.Shard, start.Add(time.Duration(j)*every), s); late > ShardLateness || late < -ShardLateness {
				say("shard %d (%s) released its users at concurrency %d %s the agreed time (more than %d ms): the shards did not begin that level together",
					k+1, m.name(order[k]), lv.Concurrency, fmtLate(late), ShardLateness.Milliseconds())
			}
		}
		n := 0
		for _, f := range m.byIndex {
			n += len(f.Local.Levels[j].Samples.Requests)
		}
		if n != first.Local.Shard.Requests {
			say("at concurrency %d the shards hold %d requests, and the level has %d: a shard's file was cut short or edited", lv.Concurrency, n, first.Local.Shard.Requests)
		}
		if j+1 < len(first.Local.Levels) {
			end, endBy := m.levelEnd(j)
			next, nextBy := m.levelStart(j + 1)
			if endBy >= 0 && nextBy >= 0 && end > next {
				say("at concurrency %d, shard %d was still running %s after shard %d began the next level: the levels overlapped; run again with a longer --level-every",
					lv.Concurrency, endBy+1, roundDur(time.Duration(end-next)*time.Microsecond), nextBy+1)
			}
		}
	}
	if len(why) > 0 {
		return mergeError(why)
	}
	return nil
}

func (m *merger) firstShard() int {
	for i, f := range m.files {
		if f.Local.Shard != nil {
			return i
		}
	}
	return 0
}

// mergeError is every reason shards cannot be merged, one a line.
func mergeError(why []string) error {
	return errors.New(strings.Join(why, "\n"))
}

// on is a shard's offset from its own clock to the merged one, µs.
func (m *merger) on(f *results.File) int64 { return f.Local.Shard.T0UnixUs - m.zero }

// levelStart is when the first shard released level j's users on the
// merged clock, and which shard (-1: no shard ran users at that level).
func (m *merger) levelStart(j int) (int64, int) {
	at, by := int64(0), -1
	for k, f := range m.byIndex {
		if s := f.Local.Levels[j].Samples; s.Slots > 0 && (by < 0 || s.StartUs+m.on(f) < at) {
			at, by = s.StartUs+m.on(f), k
		}
	}
	return at, by
}

// levelEnd is when the last shard's level j ended on the merged clock,
// and which shard.
func (m *merger) levelEnd(j int) (int64, int) {
	at, by := int64(0), -1
	for k, f := range m.byIndex {
		if s := f.Local.Levels[j].Samples; s.Slots > 0 && (by < 0 || s.EndUs+m.on(f) > at) {
			at, by = s.EndUs+m.on(f), k
		}
	}
	return at, by
}

// conditionDiffs says each condition in which shard b differs from a.
func conditionDiffs(a, b *results.File) []string {
	var out []string
	diff := func(what string, x, y any) {
		if x != y {
			out = append(out, fmt.Sprintf("%s: %v against %v", what, y, x))
		}
	}
	sa, sb := a.Local.Shard, b.Local.Shard
	diff("the agreed start (--start-at)", sa.StartAt, sb.StartAt)
	diff("the time each level is given (--level-every, s)", sa.LevelEveryS, sb.LevelEveryS)
	diff("requests per level", sa.Requests, sb.Requests)
	diff("levels", levelList(a), levelList(b))
	diff("manifest", manifestName(a.Manifest), manifestName(b.Manifest))
	if len(sa.Runs) == 0 || len(sb.Runs) == 0 {
		return out
	}
	ra, rb := sa.Runs[0], sb.Runs[0]
	diff("model", ra.ModelID, rb.ModelID)
	diff("kind of run", ra.RunKind, rb.RunKind)
	for _, c := range []struct {
		what string
		x, y *string
	}{
		{"model revision", ra.ModelRevision, rb.ModelRevision}, {"engine", ra.Engine, rb.Engine},
		{"engine version", ra.EngineVersion, rb.EngineVersion}, {"accelerator", ra.Accelerator, rb.Accelerator},
		{"precision", ra.Precision, rb.Precision}, {"profile", ra.Profile, rb.Profile},
	} {
		diff(c.what, orNone(c.x), orNone(c.y))
	}
	diff("GPU count", intOrNone(ra.GPUCount), intOrNone(rb.GPUCount))
	diff("input tokens", ra.InputTokens, rb.InputTokens)
	diff("output tokens", ra.OutputTokens, rb.OutputTokens)
	diff("warmup requests", ra.Warmup, rb.Warmup)
	diff("prompt seed", ra.Seed, rb.Seed)
	ea, eb := ra.Environment, rb.Environment
	diff("client version", ea.Client+" "+ea.ClientVersion, eb.Client+" "+eb.ClientVersion)
	diff("ignore_eos", ea.IgnoreEOS, eb.IgnoreEOS)
	diff("stream_options", ea.StreamOptions, eb.StreamOptions)
	diff("prompt generator", ea.PromptGenerator, eb.PromptGenerator)
	diff("timeout (s)", ea.TimeoutS, eb.TimeoutS)
	return out
}

func levelList(f *results.File) string {
	cs := make([]int, len(f.Local.Levels))
	for i, l := range f.Local.Levels {
		cs[i] = l.Concurrency
	}
	return FormatLevels(cs)
}

func manifestName(r *results.ManifestRef) string {
	if r == nil {
		return "none"
	}
	return r.Revision + " " + r.ContentHash
}

func orNone(s *string) string {
	if s == nil {
		return "none"
	}
	return *s
}

func intOrNone(n *int) string {
	if n == nil {
		return "none"
	}
	return strconv.Itoa(*n)
}

// merge builds the merged file from checked shards.
func (m *merger) merge() (*results.File, error) {
	first := m.byIndex[0]
	sh := first.Local.Shard
	of := len(m.byIndex)
	out := &results.File{
		Format: results.Format, FormatVersion: results.FormatVersion, Complete: true,
		CreatedAt: time.UnixMicro(m.zero).UTC().Format(time.RFC3339),
		Manifest:  first.Manifest,
		Runs:      []results.Run{},
	}
	out.Local = first.Local
	out.Local.Shard, out.Local.PartialRun, out.Local.Group, out.Local.Like = nil, nil, nil, nil
	out.Local.Telemetry = nil
	out.Local.Levels = []results.LevelLocal{}
	merged := &results.MergedLocal{Of: of, StartAt: sh.StartAt, LevelEveryS: sh.LevelEveryS, LevelStartSpreadUs: []int64{}}
	var notes []string
	usage := first.Local.Compat != nil && first.Local.Compat.Usage
	for j, lv := range first.Local.Levels {
		pooled, loc := m.pool(j)
		metrics, honoured, _, err := levelMetrics(pooled, sh.Runs[0].OutputTokens, usage)
		if err != nil {
			return nil, fmt.Errorf("at concurrency %d: %w", lv.Concurrency, err)
		}
		run := sh.Runs[j]
		run.Concurrency, run.Requests, run.Metrics = lv.Concurrency, sh.Requests, metrics
		run.Environment.IgnoreEOSHonoured = nil
		if metrics.RequestsOK > 0 && metrics.TokenCountMethod == results.TokenCountServerUsage && run.Environment.IgnoreEOS {
			run.Environment.IgnoreEOSHonoured = &honoured
		}
		// Goodput is judged on the pooled requests, as one process
		// judges its level's (levelGoodput), by the shards' one service
		// level (the first's: shards of one run share the plan).
		loc.Goodput = levelGoodput(pooled, out.Local.SLO, metrics.TokenCountMethod == results.TokenCountServerUsage)
		out.Runs = append(out.Runs, run)
		out.Local.Levels = append(out.Local.Levels, loc)
		at, _ := m.levelStart(j)
		last := at
		for _, f := range m.byIndex {
			if s := f.Local.Levels[j].Samples; s.Slots > 0 {
				last = max(last, s.StartUs+m.on(f))
			}
		}
		merged.LevelStartSpreadUs = append(merged.LevelStartSpreadUs, last-at)
	}
	// Whole-file detail: each shard's clock, the union of what they said.
	var warnings []string
	clocks, words, systems, telemetry, ttfa := true, map[int]bool{}, map[string]bool{}, false, false
	receive := first.Local.ReceiveClock
	for k, f := range m.byIndex {
		s, env := f.Local.Shard, s0env(f)
		merged.Shards = append(merged.Shards, results.MergedShard{
			Index: s.Index, OffsetUs: m.on(f), T0UnixUs: s.T0UnixUs, ClockSynced: s.ClockSynced, ClockMaxErrorUs: s.ClockMaxErrorUs,
			EndpointHost: f.Local.EndpointHost, OS: env.OS, Machine: env.Machine,
		})
		clocks = clocks && s.ClockSynced
		if c := f.Local.Calibration; c != nil {
			words[c.Words] = true
		}
		systems[env.OS+"/"+env.Machine] = true
		telemetry = telemetry || f.Local.Telemetry != nil
		for _, l := range f.Local.Levels {
			ttfa = ttfa || l.TTFAMs != nil
		}
		if f.Local.ReceiveClock != receive {
			receive = results.ReceiveClockMixed
		}
		note := ShardNote(s.Index, s.Of)
		for _, w := range f.Local.Warnings {
			if w != note && !slices.Contains(warnings, w) {
				warnings = append(warnings, w)
			}
		}
		if k == 0 || f.Local.StartedAt < out.Local.StartedAt {
			out.Local.StartedAt = f.Local.StartedAt
		}
		if f.Local.FinishedAt > out.Local.FinishedAt {
			out.Local.FinishedAt = f.Local.FinishedAt
		}
	}
	out.Local.ReceiveClock = receive
	if clocks && of > 1 {
		errs := make([]int64, 0, of)
		for _, s := range merged.Shards {
			errs = append(errs, s.ClockMaxErrorUs)
		}
		slices.Sort(errs)
		merged.MaxSkewUs = errs[of-1] + errs[of-2]
	}
	notes = append(notes, clockNote(merged, clocks, out.Runs))
	if len(words) > 1 {
		notes = append(notes, "the shards calibrated their prompts to different lengths: input_tokens_mean is the mean over every shard's prompts")
	}
	if len(systems) > 1 {
		notes = append(notes, fmt.Sprintf("the shards ran on different systems (%s): the records name shard 1's", strings.Join(slices.Sorted(maps.Keys(systems)), ", ")))
	}
	if telemetry {
		notes = append(notes, "GPU telemetry is not merged: each shard counted only its own tokens against the power it saw; the shard files keep theirs")
	}
	if ttfa {
		notes = append(notes, "the time to the first answer token of reasoning models is not merged: the samples do not keep it; the shard files keep theirs")
	}
	out.Local.Warnings = append(warnings, notes...)
	out.Local.ServerMetrics = shiftMetrics(first.Local.ServerMetrics, m.on(first))
	out.Local.Merged = merged
	return out, nil
}

func s0env(f *results.File) results.Environment {
	if rs := f.Local.Shard.Runs; len(rs) > 0 {
		return rs[0].Environment
	}
	return results.Environment{}
}

// pool is level j of every shard on the merged clock: the samples and
// the local detail.
func (m *merger) pool(j int) (*results.LevelSamples, results.LevelLocal) {
	of := len(m.byIndex)
	first := m.byIndex[0].Local.Levels[j]
	s := &results.LevelSamples{Slots: 0}
	loc := results.LevelLocal{Concurrency: first.Concurrency, Errors: map[string]int{}, Messages: map[string][]string{}}
	var caches []*results.PromptCache
	var conns results.Connections
	windowed := false
	for k, f := range m.byIndex {
		lv := f.Local.Levels[j]
		ls, off := lv.Samples, m.on(f)
		s.Slots += ls.Slots
		if ls.Slots > 0 {
			if !windowed || ls.StartUs+off < s.StartUs {
				s.StartUs = ls.StartUs + off
			}
			if !windowed || ls.EndUs+off > s.EndUs {
				s.EndUs = ls.EndUs + off
			}
			windowed = true
		}
		for _, q := range ls.Requests {
			q.Slot = k + q.Slot*of
			q.StartUs += off
			q.EndUs += off
			s.Requests = append(s.Requests, q)
		}
		for class, n := range lv.Errors {
			loc.Errors[class] += n
		}
		for class, msgs := range lv.Messages {
			for _, msg := range msgs {
				addMessage(loc.Messages, class, msg)
			}
		}
		loc.ReasoningFirst += lv.ReasoningFirst
		loc.Gaps += lv.Gaps
		loc.MergedGaps += lv.MergedGaps
		if c := lv.Connections; c != nil {
			conns.Reconnects += c.Reconnects
			conns.Resent += c.Resent
			conns.ServerClosed += c.ServerClosed
		}
		caches = append(caches, lv.PromptCache)
	}
	slices.SortStableFunc(s.Requests, func(a, b results.RequestSample) int { return cmp.Compare(a.StartUs, b.StartUs) })
	if len(loc.Messages) == 0 {
		loc.Messages = nil
	}
	if conns.Reconnects+conns.Resent+conns.ServerClosed > 0 {
		conns.Requests = len(s.Requests)
		loc.Connections = &conns
	}
	loc.PromptCache = mergeCache(caches)
	loc.StartedAt = time.UnixMicro(m.zero + s.StartUs).UTC().Format(time.RFC3339)
	loc.Samples = s
	return s, loc
}

// mergeCache is a level's prompt-cache figures from its shards': the
// servers' own counts per request add up; its /metrics counters, which
// each shard read around the same level of the same server, already
// count every shard's requests, so the widest reading stands.
func mergeCache(cs []*results.PromptCache) *results.PromptCache {
	for _, src := range []string{results.CacheFromUsage, results.CacheFromTimings, results.CacheFromPromptN} {
		var sum results.PromptCache
		for _, c := range cs {
			if c != nil && c.Source == src {
				sum.Source = src
				sum.Requests += c.Requests
				sum.CachedTokens += c.CachedTokens
				sum.PromptTokens += c.PromptTokens
				sum.SharedTokens = maxShared(sum.SharedTokens, c.SharedTokens)
			}
		}
		if sum.Source != "" {
			return &sum
		}
	}
	var best *results.PromptCache
	for _, c := range cs {
		if c != nil && (best == nil || c.PromptTokens > best.PromptTokens) {
			best = c
		}
	}
	return best
}

// maxShared is the larger of two shards' shared prefixes: each measured
// its own, and the one that saw more shared stands for every request.
func maxShared(a, b *int) *int {
	if a == nil || b != nil && *b > *a {
		return b
	}
	return a
}

// shiftMetrics puts a shard's /metrics series on the merged clock.
func shiftMetrics(sm *results.ServerMetrics, offUs int64) *results.ServerMetrics {
	if sm == nil {
		return nil
	}
	c := *sm
	c.Samples = slices.Clone(sm.Samples)
	for i := range c.Samples {
		c.Samples[i].T += float64(offUs) / 1e6
	}
	return &c
}

// clockNote says what the shards' clocks could have done to the merged
// figures: nothing to any request's own times, each measured on one
// machine's monotonic clock; a level's window, and so its throughput, by
// as much as the clocks disagree.
func clockNote(m *results.MergedLocal, synced bool, runs []results.Run) string {
	if m.Of == 1 {
		return "merged from a single shard: one clock, nothing to put together"
	}
	shortest := 0.0
	for _, r := range runs {
		if d := r.Metrics.DurationS; d > 0 && (shortest == 0 || d < shortest) {
			shortest = d
		}
	}
	if !synced {
		return "the shards were put on one clock by their system clocks, and at least one of them was not synchronised (or could not say how far off it was): nothing bounds how far they disagree; each request's own times stand, but the levels' windows, and so throughput, rest on those clocks agreeing (docs/distributed.md)"
	}
	skew := float64(m.MaxSkewUs) / 1000
	s := fmt.Sprintf("the shards were put on one clock by their system clocks, which could disagree by up to %.1f ms (their kernels' error bounds added): each request's own times stand as measured", skew)
	if shortest > 0 {
		s += fmt.Sprintf("; a level's window, and so its throughput, could be off by up to %.2g %% (the shortest level, %.3g s)", 100*skew/1000/shortest, shortest)
	}
	return s
}
