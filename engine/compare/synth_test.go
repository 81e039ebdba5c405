package compare

import (
	"math"
	"math/rand/v2"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/stats"
)

// synth is a server as a closed loop of users sees it: each request's
// pace varies around the server's (lognormal, spread paceSD), its TTFT
// and each gap vary around that pace (gapSD), and slow stretches every
// time by a factor. Only the randomness is made up; the layout (slots,
// send and end offsets, packed gaps, usage) is what engine/level.go
// writes.
type synth struct {
	users, requests, tokens int
	ttftUs, gapUs           float64
	paceSD, gapSD           float64
	turnUs                  int64
	slow                    float64 // 1: as fast as the server is; 1.1: 10 % slower
	// pace, when set, is request i's pace factor instead of a random
	// one (a drift along the level, a given order).
	pace func(i int) float64
}

// typical is a level of a small model on a busy homelab machine: 60 ms
// to the first token, 8 ms a token, requests differing by about 8 %.
func typical(users, requests, tokens int) synth {
	return synth{users: users, requests: requests, tokens: tokens, ttftUs: 60_000, gapUs: 8_000,
		paceSD: 0.08, gapSD: 0.25, turnUs: 300, slow: 1}
}

// level lays the requests out from start (µs): each user sends its next
// request as soon as its previous one has ended and turned around.
func (s synth) level(rng *rand.Rand, start int64) *results.LevelSamples {
	free := make([]int64, s.users)
	for i := range free {
		free[i] = start + int64(i)*20 // the send gate lets them out one after another
	}
	ls := &results.LevelSamples{StartUs: start, Slots: s.users}
	gaps := make([]int64, s.tokens-1)
	for i := range s.requests {
		slot := 0
		for j, t := range free {
			if t < free[slot] {
				slot = j
			}
		}
		p := math.Exp(s.paceSD * rng.NormFloat64())
		if s.pace != nil {
			p = s.pace(i)
		}
		p *= s.slow
		sent := free[slot]
		ttft := int64(s.ttftUs * p * math.Exp(s.gapSD*rng.NormFloat64()))
		end := sent + ttft
		for k := range gaps {
			gaps[k] = int64(s.gapUs * p * math.Exp(s.gapSD*rng.NormFloat64()))
			end += gaps[k]
		}
		ls.Requests = append(ls.Requests, results.RequestSample{
			Slot: slot, StartUs: sent, EndUs: end, TTFTUs: ttft, ChunkCount: s.tokens,
			Gaps: results.EncodeGaps(gaps), Usage: true, CompletionTokens: s.tokens, PromptTokens: 512,
		})
		free[slot] = end + s.turnUs
		ls.EndUs = max(ls.EndUs, end)
	}
	return ls
}

// synthFile is a complete results file of these levels, its records
// computed from its samples as engine/level.go computes them.
func synthFile(seed uint64, levels []int, s synth) *results.File {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	f := session(levels)
	var start int64
	for i, c := range levels {
		s := s
		s.users = c
		ls := s.level(rng, start)
		start = ls.EndUs + 1_000_000
		f.Runs[i].Requests = s.requests
		f.Runs[i].OutputTokens = s.tokens
		f.Runs[i].Metrics = recordOf(ls)
		f.Local.Levels = append(f.Local.Levels, results.LevelLocal{Concurrency: c, Samples: ls})
	}
	return f
}

// recordOf is a level's published metrics from its samples, as
// engine/level.go's record computes them.
func recordOf(ls *results.LevelSamples) results.Metrics {
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

// resampled is f drawn again from itself: each level's requests drawn
// with replacement and laid out in a fresh closed loop, the records
// computed from the new samples. It is the run a second try could have
// given if nothing at all had changed.
func resampled(f *results.File, seed uint64) *results.File {
	rng := rand.New(rand.NewPCG(seed, 0xd2a3))
	out := session(nil)
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
		out.Runs[i].Metrics = recordOf(ls)
		out.Local.Levels = append(out.Local.Levels, results.LevelLocal{Concurrency: r.Concurrency, Samples: ls})
	}
	return out
}
