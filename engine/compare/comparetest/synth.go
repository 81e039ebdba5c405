package comparetest

import (
	"math"
	"math/rand/v2"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/stats"
)

// Synth is a server as a closed loop of users sees it: each request's
// pace varies around the server's (lognormal, spread PaceSD), its TTFT
// and each gap vary around that pace (GapSD), and Slow stretches every
// time by a factor. Only the randomness is made up; the layout (slots,
// send and end offsets, packed gaps, usage) is what engine/level.go
// writes. Drawn from a seeded generator, its samples are the same on
// every machine: a test that asserts what a comparison concludes takes
// its runs from here (or from captured samples), never from live timing.
type Synth struct {
	Users, Requests, Tokens int
	TTFTUs, GapUs           float64
	PaceSD, GapSD           float64
	TurnUs                  int64
	Slow                    float64 // 1: as fast as the server is; 1.1: 10 % slower
	// Pace, when set, is request i's pace factor instead of a random
	// one (a drift along the level, a given order).
	Pace func(i int) float64
	// StallP is the chance that a gap is held up by another user's
	// prompt being read (the server prefills it between two tokens of
	// this answer), and StallUs about how long that takes: the long,
	// rare gaps that make a real server's ITL p99. 0: no stalls.
	StallP, StallUs float64
}

// Typical is a level of a small model on a busy homelab machine: 60 ms
// to the first token, 8 ms a token, requests differing by about 8 %.
func Typical(users, requests, tokens int) Synth {
	return Synth{Users: users, Requests: requests, Tokens: tokens, TTFTUs: 60_000, GapUs: 8_000,
		PaceSD: 0.08, GapSD: 0.25, TurnUs: 300, Slow: 1}
}

// Level lays the requests out from start (µs): each user sends its next
// request as soon as its previous one has ended and turned around.
func (s Synth) Level(rng *rand.Rand, start int64) *results.LevelSamples {
	free := make([]int64, s.Users)
	for i := range free {
		free[i] = start + int64(i)*20 // the send gate lets them out one after another
	}
	ls := &results.LevelSamples{StartUs: start, Slots: s.Users}
	gaps := make([]int64, s.Tokens-1)
	for i := range s.Requests {
		slot := 0
		for j, t := range free {
			if t < free[slot] {
				slot = j
			}
		}
		p := math.Exp(s.PaceSD * rng.NormFloat64())
		if s.Pace != nil {
			p = s.Pace(i)
		}
		p *= s.Slow
		sent := free[slot]
		ttft := int64(s.TTFTUs * p * math.Exp(s.GapSD*rng.NormFloat64()))
		end := sent + ttft
		for k := range gaps {
			gaps[k] = int64(s.GapUs * p * math.Exp(s.GapSD*rng.NormFloat64()))
			// Drawn only when stalls are asked for, so a level without
			// them is the same draw as before they existed.
			if s.StallP > 0 && rng.Float64() < s.StallP {
				gaps[k] += int64(s.StallUs * p * math.Exp(s.GapSD*rng.NormFloat64()))
			}
			end += gaps[k]
		}
		ls.Requests = append(ls.Requests, results.RequestSample{
			Slot: slot, StartUs: sent, EndUs: end, TTFTUs: ttft, ChunkCount: s.Tokens,
			Gaps: results.EncodeGaps(gaps), Usage: true, CompletionTokens: s.Tokens, PromptTokens: 512,
		})
		free[slot] = end + s.TurnUs
		ls.EndUs = max(ls.EndUs, end)
	}
	return ls
}

// SynthFile is a complete results file (Session's records) of these
// levels, s.Users taking each level's concurrency in turn, drawn from
// seed alone: its records computed from its samples as engine/level.go
// computes them, the file valid as results.Marshal and Decode check it.
func SynthFile(seed uint64, levels []int, s Synth) *results.File {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	f := Session(levels)
	var start int64
	for i, c := range levels {
		s := s
		s.Users = c
		ls := s.Level(rng, start)
		start = ls.EndUs + 1_000_000
		f.Runs[i].Requests = s.Requests
		f.Runs[i].OutputTokens = s.Tokens
		f.Runs[i].Metrics = RecordOf(ls)
		f.Local.Levels = append(f.Local.Levels, results.LevelLocal{Concurrency: c, Samples: ls})
	}
	return f
}

// RecordOf is a level's published metrics from its samples, as
// engine/level.go's record computes them.
func RecordOf(ls *results.LevelSamples) results.Metrics {
	usage := ls.AllUsage()
	var ttft, lat, tpot, itl []float64
	var out float64
	ok, failed := 0, 0
	for _, r := range ls.Requests {
		if !r.OK() {
			failed++
			continue
		}
		ok++
		n := r.OutputTokens(usage)
		out += float64(n)
		ttft = append(ttft, float64(r.TTFTUs)/1000)
		lat = append(lat, float64(r.LatencyUs())/1000)
		if n >= 2 {
			tpot = append(tpot, float64(r.LatencyUs()-r.TTFTUs)/1000/float64(n-1))
		}
		gaps, err := results.DecodeGaps(nil, r.Gaps)
		if err != nil {
			panic(err)
		}
		for _, g := range gaps {
			itl = append(itl, float64(g)/1000)
		}
	}
	dur := float64(ls.EndUs-ls.StartUs) / 1e6
	m := results.Metrics{
		RequestsOK: ok, RequestsError: failed, DurationS: stats.Round3(dur),
		RequestThroughput: stats.Round3(float64(ok) / dur), OutputThroughput: stats.Round3(out / dur),
		TokenCountMethod: results.TokenCountServerUsage,
		TTFTMs:           stats.Summarize(ttft), ITLMs: stats.Summarize(itl),
		LatencyMs: stats.Summarize(lat), TPOTMs: stats.Summarize(tpot),
	}
	if ok > 0 {
		mean := stats.Round3(out / float64(ok))
		m.OutputTokensMean = &mean
	}
	return m
}

// Resampled is f drawn again from itself: each level's requests drawn
// with replacement and laid out in a fresh closed loop, the records
// computed from the new samples. It is the run a second try could have
// given if nothing at all had changed.
func Resampled(f *results.File, seed uint64) *results.File {
	rng := rand.New(rand.NewPCG(seed, 0xd2a3))
	out := Session(nil)
	out.Runs = append(out.Runs, f.Runs...)
	var start int64
	for i, r := range f.Runs {
		src := f.SamplesAt(r.Concurrency)
		free := make([]int64, src.Slots)
		for j := range free {
			free[j] = start + int64(j)*20
		}
		ls := &results.LevelSamples{StartUs: start, Slots: src.Slots}
		for range src.Requests {
			q := src.Requests[rng.IntN(len(src.Requests))]
			slot := 0
			for j, t := range free {
				if t < free[slot] {
					slot = j
				}
			}
			q.Slot, q.StartUs, q.EndUs = slot, free[slot], free[slot]+q.LatencyUs()
			free[slot] = q.EndUs + 300
			ls.EndUs = max(ls.EndUs, q.EndUs)
			ls.Requests = append(ls.Requests, q)
		}
		start = ls.EndUs + 1_000_000
		out.Runs[i].Metrics = RecordOf(ls)
		out.Local.Levels = append(out.Local.Levels, results.LevelLocal{Concurrency: r.Concurrency, Samples: ls})
	}
	return out
}
