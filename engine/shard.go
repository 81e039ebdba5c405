package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// A run measured from several client machines at once is run as shards,
// one process each, with no coordinator between them
// (docs/distributed.md). Each shard is told three things, the same on
// every machine: its number I of N, the wall-clock time the first level
// begins (--start-at) and how long each level is given (--level-every).
//
//   - Users: at a level of concurrency c, shard I runs the users I-1,
//     I-1+N, I-1+2N, … of 0…c-1.
//   - Requests: the level's request k (0…R-1) belongs to user k mod c, so
//     shard I sends the requests whose user is one of its own, over its
//     own closed loop. The N shards together send exactly the level's R
//     requests, with the same request numbers, hence the same prompts, as
//     one process would.
//   - Time: level i begins on every shard at start-at + i × level-every,
//     by each machine's own clock. Probe, calibration and warmup happen
//     before start-at; a shard that is not ready by a level's time stops
//     with the reason rather than start late, and merge refuses a level
//     any shard released late.
//
// A fixed schedule needs no messages between the shards, so a shard
// that dies cannot hold the others up, and whether the levels met is
// read afterwards from the files themselves.

// Shard is this process's part in a run measured from several client
// machines.
type Shard struct {
	Index, Of int       // 1 … Of
	StartAt   time.Time // the first level's agreed start
	// LevelEvery is how long each level is given: level i begins at
	// StartAt + i × LevelEvery.
	LevelEvery time.Duration
}

const (
	// maxStartAhead bounds --start-at: a time further off is more likely
	// a mistyped date than a plan.
	maxStartAhead = 24 * time.Hour
	// openAhead is how long before its level a shard opens its
	// connections: enough for hundreds of connects on a LAN, short
	// enough that no server's keep-alive timeout closes them first.
	openAhead = 2 * time.Second
	// ShardLateness is how far from its agreed time, before or after, a
	// shard may release a level's users before merge refuses the level:
	// past it, the shards' users did not start together.
	ShardLateness = 100 * time.Millisecond
)

// ParseShard reads --shard I/N.
func ParseShard(s string) (index, of int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	if ok {
		index, err = strconv.Atoi(a)
		if err == nil {
			of, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil {
		return 0, 0, fmt.Errorf("shard %q is not I/N, e.g. 2/4 for the second of four", s)
	}
	if of < 1 || index < 1 || index > of {
		return 0, 0, fmt.Errorf("shard %q: the number must be 1 to %d", s, max(of, 1))
	}
	return index, of, nil
}

// NewShard checks a shard's settings as they were given on the command
// line (shard "I/N", start-at in RFC 3339, level-every) against now.
func NewShard(shard, startAt string, levelEvery time.Duration, now time.Time) (Shard, error) {
	var errs []error
	i, n, err := ParseShard(shard)
	if err != nil {
		errs = append(errs, err)
	}
	sh := Shard{Index: i, Of: n, LevelEvery: levelEvery}
	switch {
	case startAt == "":
		errs = append(errs, errors.New("a shard needs the agreed start time, the same on every shard: --start-at, e.g. "+now.Add(5*time.Minute).UTC().Truncate(time.Minute).Format(time.RFC3339)))
	default:
		t, err := time.Parse(time.RFC3339, startAt)
		if err != nil {
			errs = append(errs, fmt.Errorf("start-at %q is not an RFC 3339 time such as %s", startAt, now.Add(5*time.Minute).UTC().Truncate(time.Minute).Format(time.RFC3339)))
			break
		}
		sh.StartAt = t
		if err := sh.checkStart(now); err != nil {
			errs = append(errs, err)
		}
	}
	if levelEvery <= 0 {
		errs = append(errs, errors.New("a shard needs the time each level is given, the same on every shard: --level-every, e.g. 2m (a trial run's longest level, duration_s, and a margin)"))
	}
	return sh, errors.Join(errs...)
}

// checkStart refuses a start time in the past or more than a day ahead.
func (sh Shard) checkStart(now time.Time) error {
	switch {
	case !sh.StartAt.After(now):
		return fmt.Errorf("start-at %s is already past (it is %s now): give a time a few minutes ahead, the same on every shard", sh.StartAt.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case sh.StartAt.Sub(now) > maxStartAhead:
		return fmt.Errorf("start-at %s is more than a day ahead: is the date right?", sh.StartAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// users is how many of a level's c users the shard runs.
func (sh Shard) users(c int) int {
	if c < sh.Index {
		return 0
	}
	return (c - sh.Index + sh.Of) / sh.Of
}

// requests is the shard's share of a level of c users and r requests:
// the level's request offsets k whose user k mod c is the shard's.
func (sh Shard) requests(c, r int) []int64 {
	var out []int64
	for k := range r {
		if (k%c)%sh.Of == sh.Index-1 {
			out = append(out, int64(k))
		}
	}
	return out
}

// at is when level i begins, by the wall clock.
func (sh Shard) at(i int) time.Time { return sh.StartAt.Add(time.Duration(i) * sh.LevelEvery) }

// freshSeed is the prompt seed of a run without --seed: a new one for a
// single process; for shards one drawn from the agreed start time, so
// every shard sends the prompts one process would, and the next run's
// are new to the server's prompt cache.
func (sh *Shard) freshSeed() int64 {
	if sh == nil {
		return FreshSeed()
	}
	x := uint64(sh.StartAt.UnixNano()) + 0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	x ^= x >> 31
	return int64(uint32(x)>>1) + 1
}

// RunShard runs the plan as shard sh of a run measured from several
// client machines (docs/distributed.md): the check, probe, calibration
// and warmup at once, then each level's share at its agreed time. The
// file it returns holds no published record: each level's samples and
// the shard's own record of its share in local.shard, for Merge. A shard
// that cannot begin a level on time returns a *PlanError saying why;
// stopped while it waits, an error wrapping ErrInterrupted and no file.
func RunShard(ctx context.Context, plan setup.KovaraPlan, ep setup.Endpoint, obs Observer, sh Shard) (*results.File, error) {
	if err := sh.checkStart(time.Now()); err != nil {
		return nil, &PlanError{Err: err}
	}
	if sh.LevelEvery <= 0 {
		return nil, &PlanError{Err: errors.New("a shard needs the time each level is given (--level-every)")}
	}
	if len(plan.Concurrency) > 0 && sh.users(maxConcurrency(plan)) == 0 {
		return nil, &PlanError{Err: fmt.Errorf("shard %d of %d would run no user at any level: the highest level has %d, fewer than there are shards; use at most %d shards",
			sh.Index, sh.Of, maxConcurrency(plan), maxConcurrency(plan))}
	}
	return run(ctx, plan, ep, obs, &sh)
}

// startShard marks the file as a shard's.
func (r *kovaraRun) startShard() {
	sh := r.shard
	if sh == nil {
		return
	}
	loc := &results.ShardLocal{
		Index: sh.Index, Of: sh.Of, StartAt: sh.StartAt.UTC().Format(time.RFC3339Nano),
		LevelEveryS: sh.LevelEvery.Seconds(), Requests: r.plan.Requests,
		T0UnixUs: r.t0.UnixMicro(), Runs: []results.Run{},
	}
	loc.ClockMaxErrorUs, loc.ClockSynced = clockError()
	if !loc.ClockSynced {
		loc.ClockMaxErrorUs = 0
	}
	r.file.Local.Shard = loc
}

// ShardNote is the sentence a shard file carries among its warnings, so
// that whatever shows the file says what it is.
func ShardNote(index, of int) string {
	return fmt.Sprintf("this file is shard %d of %d of one run: each level holds only this machine's share of the users, so it is no result by itself; merge the %d shard files with kovara-bench merge", index, of, of)
}

// finishShard keeps a shard's level records as its own (local.shard.runs,
// each with the shard's users and requests) instead of publishing them:
// no single shard measured a whole level.
func (r *kovaraRun) finishShard() {
	loc := r.file.Local.Shard
	if loc == nil {
		return
	}
	for _, run := range r.file.Runs {
		i := len(loc.Runs)
		if i < len(r.file.Local.Levels) && r.file.Local.Levels[i].Samples != nil {
			run.Concurrency = r.file.Local.Levels[i].Samples.Slots
		}
		loc.Runs = append(loc.Runs, run)
	}
	r.file.Runs = []results.Run{}
	r.file.Local.Warnings = append(r.file.Local.Warnings, ShardNote(loc.Index, loc.Of))
}

// share is the part of a level of conc users and requests requests this
// process runs: its users, and the offsets (from the level's first
// request number) of its requests in the order it sends them. Without a
// shard, the whole level.
func (r *kovaraRun) share(conc, requests int) (users int, offsets []int64) {
	if r.shard == nil {
		offsets = make([]int64, requests)
		for k := range offsets {
			offsets[k] = int64(k)
		}
		return conc, offsets
	}
	return r.shard.users(conc), r.shard.requests(conc, requests)
}

// measuredTotal is how many measured requests this process sends.
func (r *kovaraRun) measuredTotal() int {
	total := 0
	for _, c := range r.plan.Concurrency {
		_, offs := r.share(c, r.plan.Requests)
		total += len(offs)
	}
	return total
}

// mostUsers is the most users this process runs at once at any level:
// a shard warms the server up with its own share, so the shards together
// never send more at once than the plan's highest level.
func (r *kovaraRun) mostUsers() int {
	most := 1
	for _, c := range r.plan.Concurrency {
		u, _ := r.share(c, r.plan.Requests)
		most = max(most, u)
	}
	return most
}

// offsetOf is when level i begins, as an offset from the run's start: the
// agreed wall-clock time against the wall clock read at the start, then
// kept by the monotonic clock.
func (r *kovaraRun) offsetOf(i int) time.Duration { return r.shard.at(i).Sub(r.t0) }

// awaitLevel holds a shard until shortly before level i's agreed time
// (its connections open then; releaseAt lets its users go), or says why
// it cannot begin the level on time. Without a shard it returns at once.
func (r *kovaraRun) awaitLevel(ctx context.Context, i int) error {
	if r.shard == nil {
		return nil
	}
	due := r.offsetOf(i)
	if now := r.clock(); now > due {
		return &PlanError{Err: r.lateError(i, now-due)}
	}
	c := r.plan.Concurrency[i]
	users, offs := r.share(c, r.plan.Requests)
	r.obs.logf("level %d of %d begins at %s: shard %d of %d runs %d of the level's %d users and %d of its %d requests",
		i+1, len(r.plan.Concurrency), r.shard.at(i).UTC().Format("15:04:05.000"), r.shard.Index, r.shard.Of, users, c, len(offs), r.plan.Requests)
	if !sleepUntil(ctx, r.clock, due-openAhead) {
		return fmt.Errorf("while waiting for level %d of %d: %w", i+1, len(r.plan.Concurrency), ErrInterrupted)
	}
	return nil
}

// releaseAt waits, with the level's connections open, for level i's
// agreed time. Without a shard it returns at once.
func (r *kovaraRun) releaseAt(ctx context.Context, i int) {
	if r.shard != nil {
		sleepUntil(ctx, r.clock, r.offsetOf(i))
	}
}

// lateError says why a shard cannot begin level i on time, late by late.
func (r *kovaraRun) lateError(i int, late time.Duration) error {
	sh := r.shard
	if i == 0 {
		return fmt.Errorf("this machine was ready %s after --start-at %s (the check, probe, calibration and warmup took %s): the shards would not start together; give every shard a later --start-at",
			roundDur(late), sh.StartAt.UTC().Format(time.RFC3339), roundDur(r.clock()))
	}
	took := "?"
	if n := len(r.file.Local.Levels); n > 0 {
		if s := r.file.Local.Levels[n-1].Samples; s != nil {
			took = roundDur(time.Duration(s.EndUs-s.StartUs) * time.Microsecond)
		}
	}
	return fmt.Errorf("level %d of %d (concurrency %d) took %s and ended %s after level %d's agreed start: the shards' levels would overlap; run every shard again with a --level-every longer than %s",
		i, len(r.plan.Concurrency), r.plan.Concurrency[i-1], took, roundDur(late), i+1, sh.LevelEvery)
}

func roundDur(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// ShardLines says level by level what a shard file holds, for whoever ran
// the shard: its share, how it went and how close to the agreed time it
// began.
func ShardLines(f *results.File) []string {
	sh := f.Local.Shard
	if sh == nil {
		return nil
	}
	start, err := time.Parse(time.RFC3339Nano, sh.StartAt)
	if err != nil {
		return nil
	}
	every := time.Duration(sh.LevelEveryS * float64(time.Second))
	var out []string
	for i, lv := range f.Local.Levels {
		s := lv.Samples
		if s == nil {
			continue
		}
		ok, failed := 0, 0
		for _, q := range s.Requests {
			if q.OK() {
				ok++
			} else {
				failed++
			}
		}
		line := fmt.Sprintf("concurrency %d: this shard ran %d of the %d users and %d of the %d requests (%d succeeded, %d failed)",
			lv.Concurrency, s.Slots, lv.Concurrency, len(s.Requests), sh.Requests, ok, failed)
		if s.Slots > 0 {
			late := releaseLate(sh, start.Add(time.Duration(i)*every), s)
			line += fmt.Sprintf(", released %s the agreed time", fmtLate(late))
			if late > ShardLateness || late < -ShardLateness {
				line += fmt.Sprintf(" (more than %d ms: merge will refuse this level)", ShardLateness.Milliseconds())
			}
		}
		out = append(out, line)
	}
	return out
}

// releaseLate is how long after its agreed time (due) a shard released a
// level's users, by that shard's own clock.
func releaseLate(sh *results.ShardLocal, due time.Time, s *results.LevelSamples) time.Duration {
	return time.Duration(sh.T0UnixUs+s.StartUs-due.UnixMicro()) * time.Microsecond
}

// fmtLate says how far from its agreed time a level began: "0.4 ms
// after", "2000.0 ms before".
func fmtLate(d time.Duration) string {
	word := "after"
	if d < 0 {
		d, word = -d, "before"
	}
	return fmt.Sprintf("%.1f ms %s", math.Round(float64(d)/float64(time.Millisecond)*10)/10, word)
}
