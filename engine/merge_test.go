package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/stats"
)

// The N shards of a level run every user once and send every request
// once, each on one of its own users, in shares that follow the users.
func TestShardSplit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ c, r, n int }{
		{1, 10, 4}, {4, 16, 4}, {8, 100, 4}, {5, 17, 4}, {32, 100, 3}, {3, 3, 3}, {7, 7, 1},
	} {
		users := map[int]int{}
		sent := map[int64]int{}
		total := 0
		for i := 1; i <= tc.n; i++ {
			sh := Shard{Index: i, Of: tc.n}
			u := sh.users(tc.c)
			total += u
			for g := i - 1; g < tc.c; g += tc.n {
				users[g]++
			}
			perUser := map[int]int{}
			for _, k := range sh.requests(tc.c, tc.r) {
				sent[k]++
				g := int(k) % tc.c
				if g%tc.n != i-1 {
					t.Errorf("c%d r%d shard %d/%d: request %d is user %d's, not this shard's", tc.c, tc.r, i, tc.n, k, g)
				}
				perUser[g]++
			}
			if len(perUser) != u {
				t.Errorf("c%d r%d shard %d/%d: requests for %d users, runs %d", tc.c, tc.r, i, tc.n, len(perUser), u)
			}
		}
		if total != tc.c || len(users) != tc.c {
			t.Errorf("c%d n%d: %d users in all over %d distinct, want %d", tc.c, tc.n, total, len(users), tc.c)
		}
		for g, n := range users {
			if n != 1 {
				t.Errorf("c%d n%d: user %d run by %d shards", tc.c, tc.n, g, n)
			}
		}
		if len(sent) != tc.r {
			t.Errorf("c%d r%d n%d: %d distinct requests sent, want %d", tc.c, tc.r, tc.n, len(sent), tc.r)
		}
		for k, n := range sent {
			if n != 1 || k < 0 || k >= int64(tc.r) {
				t.Errorf("c%d r%d n%d: request %d sent %d times", tc.c, tc.r, tc.n, k, n)
			}
		}
	}
}

// A shard's settings are refused in words: the number, a start in the
// past or beyond a day, a time that is not RFC 3339, no level time.
func TestNewShardRefuses(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	soon := now.Add(time.Minute).Format(time.RFC3339)
	for _, tc := range []struct {
		shard, start string
		every        time.Duration
		want         string
	}{
		{"0/4", soon, time.Minute, "must be 1 to 4"},
		{"5/4", soon, time.Minute, "must be 1 to 4"},
		{"two", soon, time.Minute, "is not I/N"},
		{"2/4", "", time.Minute, "--start-at"},
		{"2/4", "10:00", time.Minute, "is not an RFC 3339 time"},
		{"2/4", now.Add(-time.Second).Format(time.RFC3339), time.Minute, "is already past"},
		{"2/4", now.Add(25 * time.Hour).Format(time.RFC3339), time.Minute, "more than a day ahead"},
		{"2/4", soon, 0, "--level-every"},
	} {
		_, err := NewShard(tc.shard, tc.start, tc.every, now)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewShard(%q, %q, %v): %v, want %q", tc.shard, tc.start, tc.every, err, tc.want)
		}
	}
	sh, err := NewShard("2/4", soon, time.Minute, now)
	if err != nil || sh.Index != 2 || sh.Of != 4 || !sh.StartAt.Equal(now.Add(time.Minute)) {
		t.Errorf("NewShard(2/4): %+v, %v", sh, err)
	}
}

// Shards' seeds come from the agreed start: one seed for every shard of a
// run, another for the next run.
func TestShardSeed(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	a, b := &Shard{Index: 1, Of: 4, StartAt: at}, &Shard{Index: 3, Of: 4, StartAt: at}
	if a.freshSeed() != b.freshSeed() || a.freshSeed() < 1 {
		t.Errorf("seeds %d and %d, want one positive seed for the run", a.freshSeed(), b.freshSeed())
	}
	c := &Shard{Index: 1, Of: 4, StartAt: at.Add(time.Minute)}
	if c.freshSeed() == a.freshSeed() {
		t.Errorf("two runs drew the same seed %d", a.freshSeed())
	}
}

// synthStart is when the synthetic shards' first level begins.
var synthStart = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

const synthEvery = 10 * time.Second

// synthShards is a run of levels cs with r requests each, made as n shard
// files would be: shard k's clock started (k-1)·337 ms after shard 1's,
// each shard released its users (k-1)·50 µs after the agreed time, and its
// requests are slower the higher its number, so that the shards' own
// percentiles differ from the pooled ones.
func synthShards(t *testing.T, n int, cs []int, r int) []*results.File {
	t.Helper()
	const tokens = 6
	var files []*results.File
	for k := 1; k <= n; k++ {
		sh := Shard{Index: k, Of: n, StartAt: synthStart, LevelEvery: synthEvery}
		t0 := synthStart.Add(-30*time.Second + time.Duration(k-1)*337*time.Millisecond)
		f := &results.File{Format: results.Format, FormatVersion: results.FormatVersion, Complete: true,
			CreatedAt: t0.Format(time.RFC3339), Runs: []results.Run{}}
		f.Local = results.Local{Plan: "kovara", Endpoint: "http://10.0.0.9:8000/v1", EndpointHost: "10.0.0.9",
			ServedModels: []string{"m"}, Levels: []results.LevelLocal{},
			Compat:    &results.Compat{IgnoreEOS: true, StreamOptions: true, Usage: true, Attempts: 1},
			Warnings:  []string{ShardNote(k, n), "the same engine note"},
			StartedAt: t0.Format(time.RFC3339), FinishedAt: synthStart.Add(time.Minute).Format(time.RFC3339),
			Shard: &results.ShardLocal{Index: k, Of: n, StartAt: synthStart.Format(time.RFC3339Nano), LevelEveryS: synthEvery.Seconds(),
				Requests: r, T0UnixUs: t0.UnixMicro(), ClockSynced: true, ClockMaxErrorUs: 2000 + int64(k)*100, Runs: []results.Run{}},
		}
		for j, c := range cs {
			users, offs := sh.users(c), sh.requests(c, r)
			release := sh.at(j).Sub(t0).Microseconds() + int64(k-1)*50
			ls := &results.LevelSamples{StartUs: release, EndUs: release, Slots: users}
			free := make([]int64, users)
			for u := range free {
				free[u] = release
			}
			for i, off := range offs {
				u := int(slices.Index(free, slices.Min(free)))
				ttft := 40_000 + int64(k)*7_000 + off*113
				gaps := make([]int64, tokens-1)
				end := free[u] + ttft
				for g := range gaps {
					gaps[g] = 9_000 + int64(k)*1_000 + int64((i+g)%5)*250
					end += gaps[g]
				}
				q := results.RequestSample{Slot: u, StartUs: free[u], EndUs: end + 300, TTFTUs: ttft, ChunkCount: tokens,
					Gaps: results.EncodeGaps(gaps), Usage: true, CompletionTokens: tokens, PromptTokens: 100 + int(off%3)}
				if off == 5 {
					q = results.RequestSample{Slot: u, StartUs: free[u], EndUs: free[u] + 2_000, TTFTUs: -1, Error: "http_500"}
				}
				ls.Requests = append(ls.Requests, q)
				free[u] = q.EndUs
				ls.EndUs = max(ls.EndUs, q.EndUs)
			}
			m, honoured, _, err := levelMetrics(ls, tokens, true)
			if err != nil {
				t.Fatal(err)
			}
			run := results.Run{RunKind: results.RunKindProtocol, Evidence: results.EvidenceSelfReported, ModelID: "m",
				InputTokens: 100, OutputTokens: tokens, Concurrency: users, Requests: len(offs), Warmup: 2, Seed: 77, Metrics: m,
				Environment: results.Environment{Client: ClientName, ClientVersion: Version, OS: "linux", Machine: "amd64", MaxTokens: tokens,
					IgnoreEOS: true, IgnoreEOSHonoured: &honoured, Stream: true, StreamOptions: true, PromptGenerator: "kovara-synthetic-v1",
					Seed: 77, PercentileMethod: results.PercentileLinear, TimeoutS: 120}}
			f.Local.Shard.Runs = append(f.Local.Shard.Runs, run)
			errs := map[string]int{}
			for _, q := range ls.Requests {
				if !q.OK() {
					errs[q.Error]++
				}
			}
			f.Local.Levels = append(f.Local.Levels, results.LevelLocal{Concurrency: c, Errors: errs, Samples: ls})
		}
		files = append(files, f)
	}
	return files
}

// A merged level is computed from every shard's requests pooled on one
// clock: percentiles of the pooled requests (never the shards'
// percentiles averaged), throughput over the union of the shards'
// windows, users renumbered 0…c-1, every request once.
func TestMergePoolsExactly(t *testing.T) {
	t.Parallel()
	const n, r = 4, 40
	cs := []int{4, 8}
	files := synthShards(t, n, cs, r)
	slo := &results.RateSLO{TTFTMs: 50}
	for _, f := range files {
		f.Local.SLO = slo
	}
	merged, err := Merge(files, nil)
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	mustValid(t, merged)
	data, err := results.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	if _, reasons := results.PublishCheck(data); len(reasons) > 0 {
		t.Errorf("the merged file cannot be published: %v", reasons)
	}
	if !merged.Complete || len(merged.Runs) != len(cs) || merged.Local.Shard != nil {
		t.Fatalf("merged: complete %v, %d runs, shard %v", merged.Complete, len(merged.Runs), merged.Local.Shard)
	}
	for j, c := range cs {
		var ttft, lat, itl []float64
		var tokens float64
		var shardP50s float64
		first, last := int64(math.MaxInt64), int64(math.MinInt64)
		okN := 0
		for _, f := range files {
			off := f.Local.Shard.T0UnixUs - files[0].Local.Shard.T0UnixUs
			s := f.Local.Levels[j].Samples
			first, last = min(first, s.StartUs+off), max(last, s.EndUs+off)
			shardP50s += f.Local.Shard.Runs[j].Metrics.TTFTMs.P50 / n
			for _, q := range s.Requests {
				if !q.OK() {
					continue
				}
				okN++
				ttft = append(ttft, float64(q.TTFTUs)/1000)
				lat = append(lat, float64(q.EndUs-q.StartUs)/1000)
				gaps, _ := results.DecodeGaps(nil, q.Gaps)
				for _, g := range gaps {
					itl = append(itl, float64(g)/1000)
				}
				tokens += float64(q.CompletionTokens)
			}
		}
		got := merged.Runs[j]
		m := got.Metrics
		if got.Concurrency != c || got.Requests != r || m.RequestsOK != okN || m.RequestsError != r-okN {
			t.Errorf("c%d: concurrency %d requests %d ok %d errors %d, want %d %d %d %d", c, got.Concurrency, got.Requests, m.RequestsOK, m.RequestsError, c, r, okN, r-okN)
		}
		for _, d := range []struct {
			what      string
			got, want *results.Dist
		}{{"TTFT", m.TTFTMs, stats.Summarize(ttft)}, {"latency", m.LatencyMs, stats.Summarize(lat)}, {"ITL", m.ITLMs, stats.Summarize(itl)}} {
			if d.got == nil || d.got.N != d.want.N || d.got.P50 != d.want.P50 || d.got.Mean != d.want.Mean || !eqPtr(d.got.P95, d.want.P95) || !eqPtr(d.got.P99, d.want.P99) {
				t.Errorf("c%d %s: got %+v, want the pooled %+v", c, d.what, d.got, d.want)
			}
		}
		if math.Abs(m.TTFTMs.P50-stats.Round3(shardP50s)) < 0.5 {
			t.Fatalf("c%d: the shards' TTFT p50s average to %.3f, the pooled p50 is %.3f: the data cannot tell them apart", c, shardP50s, m.TTFTMs.P50)
		}
		dur := float64(last-first) / 1e6
		if m.DurationS != stats.Round3(dur) || m.OutputThroughput != stats.Round3(tokens/dur) {
			t.Errorf("c%d: duration %v s, output %v tok/s; want the union window %v s, %v tok/s", c, m.DurationS, m.OutputThroughput, stats.Round3(dur), stats.Round3(tokens/dur))
		}
		// Goodput over the pooled requests: each judged on its own TTFT.
		met := 0
		for _, f := range files {
			for _, q := range f.Local.Levels[j].Samples.Requests {
				if q.OK() && float64(q.TTFTUs)/1000 <= slo.TTFTMs {
					met++
				}
			}
		}
		if g := merged.Local.Levels[j].Goodput; g == nil || g.Met != met || met == 0 || met == okN {
			t.Errorf("c%d: goodput %+v, want %d of the pooled %d met TTFT ≤ 50 ms (and the test must split them)", c, g, met, okN)
		}
		if h := got.Environment.IgnoreEOSHonoured; h == nil || !*h {
			t.Errorf("c%d: ignore_eos_honoured %v", c, h)
		}
		// Users 0…c-1, each of them; in the order sent; every request.
		s := merged.Local.Levels[j].Samples
		used := map[int]bool{}
		for i, q := range s.Requests {
			used[q.Slot] = true
			if i > 0 && q.StartUs < s.Requests[i-1].StartUs {
				t.Errorf("c%d: merged samples out of order at %d", c, i)
			}
		}
		if s.Slots != c || len(used) != c || len(s.Requests) != r || s.StartUs != first || s.EndUs != last {
			t.Errorf("c%d: merged samples slots %d (used %d), %d requests, window %d…%d; want %d, %d, %d…%d", c, s.Slots, len(used), len(s.Requests), s.StartUs, s.EndUs, c, r, first, last)
		}
		if e := merged.Local.Levels[j].Errors["http_500"]; e != r-okN {
			t.Errorf("c%d: %d http_500 errors kept, want %d", c, e, r-okN)
		}
	}
	// Shard 3's user 1 is user 2+4 of the level at concurrency 8.
	s3 := files[2].Local.Levels[1].Samples
	var mine results.RequestSample
	for _, q := range s3.Requests {
		if q.Slot == 1 {
			mine = q
			break
		}
	}
	off := files[2].Local.Shard.T0UnixUs - files[0].Local.Shard.T0UnixUs
	if !slices.ContainsFunc(merged.Local.Levels[1].Samples.Requests, func(q results.RequestSample) bool {
		return q.Slot == 6 && q.StartUs == mine.StartUs+off && q.TTFTUs == mine.TTFTUs
	}) {
		t.Errorf("shard 3's user 1 request %+v is not user 6 of the merged level", mine)
	}
	// The clocks: offsets, the bound on their skew, the release spread,
	// and the note that says what they could change.
	mg := merged.Local.Merged
	if mg == nil || mg.Of != n || len(mg.Shards) != n {
		t.Fatalf("local.merged %+v", mg)
	}
	for k, s := range mg.Shards {
		if s.Index != k+1 || s.OffsetUs != int64(k)*337_000 || !s.ClockSynced {
			t.Errorf("shard %d: %+v, want offset %d µs", k+1, s, k*337_000)
		}
	}
	if mg.MaxSkewUs != 2400+2300 || !slices.Equal(mg.LevelStartSpreadUs, []int64{150, 150}) {
		t.Errorf("max skew %d µs, level start spread %v; want 4700, [150 150]", mg.MaxSkewUs, mg.LevelStartSpreadUs)
	}
	ws := merged.Local.Warnings
	if slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(w, "shard 1 of 4") }) ||
		!slices.Contains(ws, "the same engine note") ||
		!slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(w, "could disagree by up to 4.7 ms") }) {
		t.Errorf("merged warnings %q", ws)
	}
	if merged.CreatedAt != time.UnixMicro(files[0].Local.Shard.T0UnixUs).UTC().Format(time.RFC3339) {
		t.Errorf("created_at %s, want the first shard's start", merged.CreatedAt)
	}
}

func eqPtr(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// Shards that cannot make one run are refused, each reason naming the
// shard and what differs.
func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(fs []*results.File) []*results.File
		want   string
	}{
		{"not a shard", func(fs []*results.File) []*results.File { fs[2].Local.Shard = nil; return fs }, "file 3 is not a shard file"},
		{"missing", func(fs []*results.File) []*results.File { return fs[:3] }, "shard 4 of 4 is missing"},
		{"twice", func(fs []*results.File) []*results.File { fs[3] = fs[1]; return fs }, "shard 2 of 4 is given twice: file 2 and file 4"},
		{"other run", func(fs []*results.File) []*results.File { fs[1].Local.Shard.Of = 3; return fs }, "file 2 is shard 2 of 3, but file 1 is of 4"},
		{"stopped", func(fs []*results.File) []*results.File { fs[1].Complete = false; return fs }, "file 2 (shard 2 of 4) was stopped before its last level"},
		{"no samples", func(fs []*results.File) []*results.File { fs[0].Local.Levels[1].Samples = nil; return fs }, "kept no raw samples at concurrency 8"},
		{"model", func(fs []*results.File) []*results.File { fs[2].Local.Shard.Runs[0].ModelID = "other"; return fs },
			"shard 3 (file 3) differs from shard 1 (file 1) in model: other against m"},
		{"input tokens", func(fs []*results.File) []*results.File { fs[3].Local.Shard.Runs[0].InputTokens = 512; return fs }, "in input tokens: 512 against 100"},
		{"seed", func(fs []*results.File) []*results.File { fs[1].Local.Shard.Runs[0].Seed = 5; return fs }, "in prompt seed: 5 against 77"},
		{"warmup", func(fs []*results.File) []*results.File { fs[1].Local.Shard.Runs[0].Warmup = 0; return fs }, "in warmup requests: 0 against 2"},
		{"requests", func(fs []*results.File) []*results.File { fs[1].Local.Shard.Requests = 80; return fs }, "in requests per level: 80 against 40"},
		{"start", func(fs []*results.File) []*results.File {
			fs[1].Local.Shard.StartAt = "2026-12-02T11:00:00Z"
			return fs
		}, "in the agreed start (--start-at)"},
		{"level time", func(fs []*results.File) []*results.File { fs[1].Local.Shard.LevelEveryS = 20; return fs }, "(--level-every, s): 20 against 10"},
		{"levels", func(fs []*results.File) []*results.File {
			fs[2].Local.Levels = fs[2].Local.Levels[:1]
			fs[2].Local.Shard.Runs = fs[2].Local.Shard.Runs[:1]
			return fs
		}, "in levels: 4 against 4,8"},
		{"late", func(fs []*results.File) []*results.File {
			shiftLevel(fs[2].Local.Levels[1].Samples, 200_000)
			return fs
		},
			"shard 3 (file 3) released its users at concurrency 8 200.1 ms after the agreed time"},
		{"early", func(fs []*results.File) []*results.File {
			shiftLevel(fs[0].Local.Levels[0].Samples, -2_000_000)
			return fs
		}, "shard 1 (file 1) released its users at concurrency 4 2000.0 ms before the agreed time"},
		{"overlap", func(fs []*results.File) []*results.File {
			s := fs[1].Local.Levels[0].Samples
			s.Requests[len(s.Requests)-1].EndUs += 12_000_000
			s.EndUs += 12_000_000
			return fs
		}, "at concurrency 4, shard 2 was still running"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := tc.change(synthShards(t, 4, []int{4, 8}, 40))
			_, err := Merge(fs, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Merge: %v\nwant %q", err, tc.want)
			}
		})
	}
}

func shiftLevel(s *results.LevelSamples, us int64) {
	s.StartUs += us
	s.EndUs += us
	for i := range s.Requests {
		s.Requests[i].StartUs += us
		s.Requests[i].EndUs += us
	}
}

// record's figures, now computed from the samples, are those of the
// outcomes themselves to the µs the samples keep.
func TestRecordKeepsOutcomeFigures(t *testing.T) {
	t.Parallel()
	lv := &levelRun{concurrency: 2, requests: 6, loadRun: loadRun{start: 1_000_321 * time.Nanosecond, end: 912_345_678 * time.Nanosecond, slots: make([]slotRun, 2)}}
	var ttft, lat, itl, tpot []float64
	for i := range 6 {
		s := &lv.slots[i%2]
		from := len(s.itl)
		at := time.Duration(i)*150_123_457 + 1_000_321
		first := time.Duration(40_000_000 + i*1_234_567)
		var sum time.Duration
		for k := range 7 {
			g := time.Duration(9_876_543 + k*333_333 + i*77_777)
			s.itl = append(s.itl, float32(ms(g)))
			itl = append(itl, float64(float32(ms(g))))
			sum += g
		}
		end := at + first + sum + 123_456
		s.outs = append(s.outs, outcome{n: int64(i), start: at, end: end, ttft: first, ttfa: -1, chunks: 8,
			hasUsage: true, promptTok: 100, complTok: 8, itlFrom: from, itlTo: len(s.itl)})
		ttft = append(ttft, ms(first))
		lat = append(lat, ms(end-at))
		tpot = append(tpot, ms(end-at-first)/7)
	}
	sess, _ := newSession(setup.Endpoint{URL: "http://127.0.0.1:1"}, Observer{})
	r := &runner{session: sess, plan: smallPlan(), usage: true}
	r.plan.OutputTokens = 8
	run, loc := r.record(lv)
	m := run.Metrics
	for _, d := range []struct {
		what      string
		got, want *results.Dist
	}{{"TTFT", m.TTFTMs, stats.Summarize(ttft)}, {"latency", m.LatencyMs, stats.Summarize(lat)},
		{"ITL", m.ITLMs, stats.Summarize(itl)}, {"TPOT", m.TPOTMs, stats.Summarize(tpot)}} {
		if d.got.N != d.want.N || math.Abs(d.got.P50-d.want.P50) > 0.0015 || math.Abs(d.got.Mean-d.want.Mean) > 0.0015 ||
			math.Abs(d.got.Min-d.want.Min) > 0.0015 || math.Abs(d.got.Max-d.want.Max) > 0.0015 {
			t.Errorf("%s: from the samples %+v, from the outcomes %+v", d.what, d.got, d.want)
		}
	}
	dur := (lv.end - lv.start).Seconds()
	if math.Abs(m.DurationS-dur) > 0.0015 || math.Abs(m.OutputThroughput-48/dur) > 0.0015 || m.RequestsOK != 6 || loc.Gaps != 42 {
		t.Errorf("duration %v throughput %v ok %d gaps %d; want %v %v 6 42", m.DurationS, m.OutputThroughput, m.RequestsOK, loc.Gaps, dur, 48/dur)
	}
}

// A shard that cannot begin a level at its agreed time stops and says
// why: not ready by --start-at, or a level that outran --level-every.
func TestRunShardLate(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, fastSim())
	p := smallPlan()
	for _, tc := range []struct {
		name  string
		ahead time.Duration
		every time.Duration
		want  string
	}{
		{"start", 10 * time.Millisecond, time.Minute, "after --start-at"},
		{"level", 1500 * time.Millisecond, time.Millisecond, "ended"},
	} {
		sh := Shard{Index: 1, Of: 2, StartAt: time.Now().Add(tc.ahead), LevelEvery: tc.every}
		f, err := RunShard(context.Background(), p, setup.Endpoint{URL: url}, Observer{}, sh)
		var pe *PlanError
		if f != nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: file %v, error %v; want a *PlanError saying %q", tc.name, f != nil, err, tc.want)
		}
	}
}

// The same plan run as four shards at once against the simulator in its
// own process: every shard's requests are held against the simulator's
// record (the truth bar, docs/method.md, "How we check it": 1 ms), and
// the merged file's figures are exactly those levelMetrics computes from
// the shards' own recorded samples pooled on one clock. One process then
// runs the same plan, and the merged file holds the same requests as it
// (counts, token means, prompt lengths). Two live runs' medians are
// never compared: on a loaded machine they differ by however the machine
// happened to run each.
func TestMergeEqualsOneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five benchmarks against a simulator process")
	}
	url := startSimProcess(t, simProcConfig{TokenInterval: 10 * time.Millisecond, PrefillRate: 100000})
	p := smallPlan()
	p.Concurrency, p.Requests, p.OutputTokens = []int{4, 8}, 16, 12
	p.Seed, p.FixedSeed = 4242, true
	var shards []*results.File
	for misses := 0; ; misses++ {
		var miss string
		shards, miss = shardsAgainstTruth(t, url, p)
		if miss == "" {
			break
		}
		t.Logf("try %d missed: %s", misses+1, miss)
		if misses >= truthMisses {
			t.Fatalf("%d tries missed the bar; the last: %s", misses+1, miss)
		}
	}
	merged, err := Merge(shards, nil)
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	mustValid(t, merged)
	for j, c := range p.Concurrency {
		union := pooledSamples(shards, j)
		want, _, _, err := levelMetrics(union, p.OutputTokens, true)
		if err != nil {
			t.Fatal(err)
		}
		got := merged.Runs[j].Metrics
		if !reflect.DeepEqual(got, want) {
			t.Errorf("c%d: merged metrics\n%s\nfrom the shards' pooled samples\n%s", c, pooledLine(got), pooledLine(want))
		}
		if s := merged.Local.Levels[j].Samples; s.Slots != c || s.StartUs != union.StartUs || s.EndUs != union.EndUs || !reflect.DeepEqual(s.Requests, union.Requests) {
			t.Errorf("c%d: merged samples on %d users, %d requests, window %d…%d µs; the shards' pooled: %d users, %d requests, %d…%d µs",
				c, s.Slots, len(s.Requests), s.StartUs, s.EndUs, union.Slots, len(union.Requests), union.StartUs, union.EndUs)
		}
	}
	one, err := Run(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	for j, c := range p.Concurrency {
		got, want := merged.Runs[j], one.Runs[j]
		gm, wm := got.Metrics, want.Metrics
		if got.Concurrency != c || got.Requests != p.Requests || got.Seed != want.Seed || gm.RequestsOK != wm.RequestsOK || gm.RequestsError != wm.RequestsError ||
			gm.TTFTMs.N != wm.TTFTMs.N || gm.ITLMs.N != wm.ITLMs.N || gm.TPOTMs.N != wm.TPOTMs.N ||
			*gm.OutputTokensMean != *wm.OutputTokensMean || *gm.InputTokensMean != *wm.InputTokensMean || gm.TokenCountMethod != wm.TokenCountMethod {
			t.Fatalf("c%d: merged %+v\none process %+v", c, got, want)
		}
		if s := merged.Local.Levels[j].Samples; s.Slots != c || len(s.Requests) != p.Requests {
			t.Fatalf("c%d: merged samples on %d users, %d requests", c, s.Slots, len(s.Requests))
		}
		// For the reader only: two live runs, as fast as the machine was.
		t.Logf("c%d merged / one process: TTFT p50 %.3f / %.3f, ITL p50 %.3f / %.3f, duration %.3f / %.3f s",
			c, gm.TTFTMs.P50, wm.TTFTMs.P50, gm.ITLMs.P50, wm.ITLMs.P50, gm.DurationS, wm.DurationS)
	}
}

// shardsAgainstTruth runs p as 4 shards at once and says how their
// requests missed the truth bar, if they did; a structural failure fails
// the test at once.
func shardsAgainstTruth(t *testing.T, url string, p setup.KovaraPlan) ([]*results.File, string) {
	t.Helper()
	const n = 4
	start := time.Now().Add(2500 * time.Millisecond)
	shards := make([]*results.File, n)
	errs := make([]error, n)
	recs := make([][]RequestRecord, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			obs := Observer{Requests: func(_ int, r []RequestRecord) { recs[i] = append(recs[i], r...) }}
			shards[i], errs[i] = RunShard(context.Background(), p, setup.Endpoint{URL: url}, obs,
				Shard{Index: i + 1, Of: n, StartAt: start, LevelEvery: 1500 * time.Millisecond})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d: %v", i+1, err)
		}
		if shards[i].Local.Shard == nil || len(shards[i].Runs) != 0 {
			t.Fatalf("shard %d: local.shard %v, %d published records; want a shard that publishes none", i+1, shards[i].Local.Shard, len(shards[i].Runs))
		}
	}
	truth := fetchTimings(t, url)
	var all []RequestRecord
	for _, r := range recs {
		all = append(all, r...)
	}
	e := compareTruth(t, truth, all)
	if raceEnabled {
		return shards, ""
	}
	if tt, it := p99(e.ttft), p99(e.itl); tt > 1 || it > 1 {
		return shards, fmt.Sprintf("the shards measured TTFT within %.3f ms and ITL within %.3f ms of the truth (p99), want 1 ms", tt, it)
	}
	return shards, ""
}

// pooledSamples is level j of the shards (in shard order) on one clock,
// from their own recorded samples: times from the earliest shard's t0,
// user u of shard k (0-based) as user k + u·of, in the order sent, the
// window the union of the shards' windows.
func pooledSamples(shards []*results.File, j int) *results.LevelSamples {
	zero := shards[0].Local.Shard.T0UnixUs
	for _, f := range shards {
		zero = min(zero, f.Local.Shard.T0UnixUs)
	}
	out := &results.LevelSamples{}
	windowed := false
	for k, f := range shards {
		s, off := f.Local.Levels[j].Samples, f.Local.Shard.T0UnixUs-zero
		out.Slots += s.Slots
		if s.Slots > 0 {
			if !windowed || s.StartUs+off < out.StartUs {
				out.StartUs = s.StartUs + off
			}
			if !windowed || s.EndUs+off > out.EndUs {
				out.EndUs = s.EndUs + off
			}
			windowed = true
		}
		for _, q := range s.Requests {
			q.Slot = k + q.Slot*len(shards)
			q.StartUs += off
			q.EndUs += off
			out.Requests = append(out.Requests, q)
		}
	}
	slices.SortStableFunc(out.Requests, func(a, b results.RequestSample) int { return cmp.Compare(a.StartUs, b.StartUs) })
	return out
}

// pooledLine is a level's figures in one line, for a failure's message.
func pooledLine(m results.Metrics) string {
	d := func(x *results.Dist) string {
		if x == nil {
			return "-"
		}
		return fmt.Sprintf("n %d p50 %.3f mean %.3f", x.N, x.P50, x.Mean)
	}
	return fmt.Sprintf("ok %d err %d, TTFT %s, ITL %s, latency %s, TPOT %s, duration %.3f s, %.3f tok/s",
		m.RequestsOK, m.RequestsError, d(m.TTFTMs), d(m.ITLMs), d(m.LatencyMs), d(m.TPOTMs), m.DurationS, m.OutputThroughput)
}
