package compare

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kovara/desktop/engine/results"
)

// stat is one statistic of a level that a comparison puts an interval
// on. Each is read from the raw samples exactly as the engine computes
// the record's metric (engine/level.go): only successes enter, tokens are
// counted as the level counts them.
type stat int

const (
	statOutput stat = iota
	statPerUser
	statRequests
	// The quantiles, from here on.
	statTTFT50
	statTTFT95
	statTTFT99
	statITL50
	statITL95
	statITL99
	statLatency50
	statLatency99
	statTPOT50
	nStats
)

// statOf names the statistic behind each metric of Metrics that has an
// interval. The others (counts, error rate, output length) have none and
// are compared as before (SameWithin); tokens per joule is judged from
// the throughput's and the power readings' spread (noise.go).
var statOf = map[string]stat{
	"output_throughput":   statOutput,
	"per_user_throughput": statPerUser,
	"request_throughput":  statRequests,
	"ttft_p50":            statTTFT50,
	"ttft_p95":            statTTFT95,
	"ttft_p99":            statTTFT99,
	"itl_p50":             statITL50,
	"itl_p95":             statITL95,
	"itl_p99":             statITL99,
	"latency_p50":         statLatency50,
	"latency_p99":         statLatency99,
	"tpot_p50":            statTPOT50,
}

// The bootstrap's settings (docs/method.md, "Telling a change from
// noise"). The seed is fixed so that a comparison, its tests and its
// golden output come out the same every time.
const (
	resamples    = 500
	resampleSeed = 0x6b6f76617261 // "kovara"
	// A statistic whose resamples are undefined too often (no success
	// drawn, a zero time) has no interval.
	minValidShare = 0.9
)

// levelSpread is what one run's samples at one level say about each
// statistic: its value, and how far its logarithm moves when the level
// is resampled (the standard deviation over the resamples), with the
// degrees of freedom that deviation rests on. has is false for a
// statistic the samples are too few to bound: its noise is unknown but
// large, so it is within noise whatever it shows.
type levelSpread struct {
	value [nStats]float64
	sd    [nStats]float64
	has   [nStats]bool
	df    [nStats]float64
}

// errTooFew says a level has fewer than two successful requests: nothing
// to resample.
var errTooFew = errors.New("fewer than two successful requests")

// spreadOf resamples one level's requests: a block bootstrap of
// neighbouring requests, within three strata (the level's first users,
// its middle and its last users), with throughput from a replay of the
// closed loop (docs/method.md, "Telling a change from noise").
func spreadOf(s *results.LevelSamples) (*levelSpread, error) {
	lv, err := newLevelSample(s)
	switch {
	case errors.Is(err, errTooFew):
		return &levelSpread{}, nil
	case err != nil:
		return nil, err
	}
	out := &levelSpread{}
	lv.point(&out.value)
	// A stratum of k blocks gives k − 1 degrees of freedom, and its
	// resamples spread (k − 1)/k as far as its blocks do: the variance is
	// scaled back by blocks over degrees of freedom, the usual small-sample
	// correction. A stratum of one block is the same in every resample.
	blocks, df := 0, 0
	for _, st := range lv.strata {
		if k := st.to - st.from; k > 1 {
			blocks += k
			df += k - 1
		}
	}
	if df < 1 {
		return out, nil
	}
	for i := range out.df {
		out.df[i] = float64(df)
		// A quantile's bootstrap spread is itself far less sure than a
		// mean's: its relative error shrinks only as n^(−1/4) (Hall and
		// Martin, 1988). Measured on simulated levels of 100 requests it
		// varies by a quarter from one run to the next, as a spread
		// resting on about 8 degrees of freedom does; so a quantile's
		// interval rests on at most 0.8·√n (docs/method.md).
		if stat(i) >= statTTFT50 {
			out.df[i] = min(out.df[i], 0.8*math.Sqrt(float64(lv.oks)))
		}
	}
	correct := math.Sqrt(float64(blocks) / float64(df))

	rng := rand.New(rand.NewPCG(resampleSeed, uint64(len(s.Requests))))
	w := make([]int32, len(lv.blocks))
	order := make([]int32, 0, len(lv.blocks))
	var v [nStats]float64
	var n [nStats]int
	var mean, m2 [nStats]float64
	for range resamples {
		clear(w)
		order = order[:0]
		for _, st := range lv.strata {
			k := st.to - st.from
			for range k {
				b := st.from + rng.IntN(k)
				w[b]++
				order = append(order, int32(b))
			}
		}
		lv.resample(w, order, &v)
		for i, x := range v {
			if !(x > 0) || math.IsInf(x, 0) {
				continue
			}
			// Welford's running mean and sum of squares of the logarithm.
			l := math.Log(x)
			n[i]++
			d := l - mean[i]
			mean[i] += d / float64(n[i])
			m2[i] += d * (l - mean[i])
		}
	}
	for i := range out.value {
		x := out.value[i]
		if !(x > 0) || math.IsInf(x, 0) || float64(n[i]) < minValidShare*resamples || !lv.judgeable(stat(i)) {
			continue
		}
		out.sd[i] = correct * math.Sqrt(m2[i]/float64(n[i]-1))
		out.has[i] = true
	}
	return out, nil
}

// span is a range [from, to) of requests (a block) or of blocks (a
// stratum).
type span struct{ from, to int }

// levelSample is one level's requests laid out for resampling.
type levelSample struct {
	// Per request, in the order their users took them (take): from
	// being taken to being sent (µs; a fresh connection, the send gate),
	// and from being sent to the end of the answer.
	lead, lat []int64
	// Blocks of consecutive requests, and the strata they are drawn
	// within.
	blocks []span
	strata []span
	// The time from the last answer's end to the level's end (µs).
	tail int64
	dur  int64 // the level's measured window, µs
	oks  int   // successful requests
	// Per block, over its successes: output tokens, seconds of latency
	// and how many.
	tok, latS []float64
	ok        []int32
	// The per-request and per-gap samples, each value tagged with its
	// request's block.
	ttft, latency, tpot, itl *weighted
	heap                     []int64 // scratch for the replay: each user's next take
}

// newLevelSample reads a level's samples. Requests are resampled in
// blocks of about the cube root of their number (the usual block length
// for a block bootstrap of a mean), never across a stratum's edge.
func newLevelSample(s *results.LevelSamples) (*levelSample, error) {
	n := len(s.Requests)
	oks := 0
	for _, r := range s.Requests {
		if r.OK() {
			oks++
		}
	}
	if oks < 2 {
		return nil, errTooFew
	}
	lv := &levelSample{lead: make([]int64, n), lat: make([]int64, n), dur: s.EndUs - s.StartUs, oks: oks}

	// The closed loop (docs/method.md, "Levels"): a user takes its next
	// request the moment its previous answer ends (its first at the
	// level's start) and sends it once its connection is ready. The
	// requests are laid out in the order they were taken, which is not
	// always the order they were sent: a user that must open a fresh
	// connection sends later than one that took a request after it.
	type taken struct {
		at   int64 // µs after the level's start
		file int   // its place in the file
	}
	bySend := make([]int, n)
	for i := range bySend {
		bySend[i] = i
	}
	slices.SortStableFunc(bySend, func(a, b int) int { return cmp.Compare(s.Requests[a].StartUs, s.Requests[b].StartUs) })
	free := map[int]int64{} // each user's previous end
	order := make([]taken, n)
	end := s.StartUs
	for i, j := range bySend {
		r := s.Requests[j]
		at, seen := free[r.Slot]
		if !seen {
			at = s.StartUs
		}
		order[i] = taken{at - s.StartUs, j}
		free[r.Slot] = r.EndUs
		end = max(end, r.EndUs)
	}
	slices.SortStableFunc(order, func(a, b taken) int { return cmp.Compare(a.at, b.at) })
	reqs := make([]results.RequestSample, n)
	for i, t := range order {
		reqs[i] = s.Requests[t.file]
		// Not clipped at 0: a send stamped a few µs before the previous
		// answer's end (two clocks' stamps meet there) still replays to
		// the times measured.
		lv.lead[i] = reqs[i].StartUs - s.StartUs - t.at
		lv.lat[i] = max(reqs[i].EndUs-reqs[i].StartUs, 0)
	}
	lv.tail = max(s.EndUs-end, 0)
	lv.heap = make([]int64, len(free))

	// Strata: the first users' requests all start together into a cold,
	// crowded server, and the last ones run as the level empties; every
	// run of the plan has exactly that many of each, so they are drawn
	// only among themselves.
	users := len(free)
	opening := min(users, n)
	closing := min(users, n-opening)
	blockLen := max(1, int(math.Cbrt(float64(n))+1e-9))
	block := make([]int32, n)
	for _, st := range []span{{0, opening}, {opening, n - closing}, {n - closing, n}} {
		if st.to <= st.from {
			continue
		}
		first := len(lv.blocks)
		for from := st.from; from < st.to; from += blockLen {
			b := span{from, min(from+blockLen, st.to)}
			for i := b.from; i < b.to; i++ {
				block[i] = int32(len(lv.blocks))
			}
			lv.blocks = append(lv.blocks, b)
		}
		lv.strata = append(lv.strata, span{first, len(lv.blocks)})
	}

	nb := len(lv.blocks)
	lv.tok, lv.latS, lv.ok = make([]float64, nb), make([]float64, nb), make([]int32, nb)
	usage := s.AllUsage()
	var ttft, lat, tpot, itl []tagged
	var gaps []int64
	for i, r := range reqs {
		if !r.OK() {
			continue
		}
		b := block[i]
		tokens := r.OutputTokens(usage)
		lv.tok[b] += float64(tokens)
		lv.latS[b] += float64(lv.lat[i]) / 1e6
		lv.ok[b]++
		req := int32(i)
		ttft = append(ttft, tagged{float64(r.TTFTUs) / 1000, b, req})
		lat = append(lat, tagged{float64(lv.lat[i]) / 1000, b, req})
		if tokens >= 2 {
			tpot = append(tpot, tagged{float64(lv.lat[i]-r.TTFTUs) / 1000 / float64(tokens-1), b, req})
		}
		var err error
		if gaps, err = results.DecodeGaps(gaps[:0], r.Gaps); err != nil {
			return nil, fmt.Errorf("request %d of the level: %w", order[i].file+1, err)
		}
		for _, g := range gaps {
			itl = append(itl, tagged{float64(g) / 1000, b, req})
		}
	}
	lv.ttft, lv.latency, lv.tpot, lv.itl = newWeighted(ttft, nb), newWeighted(lat, nb), newWeighted(tpot, nb), newWeighted(itl, nb)
	return lv, nil
}

// judgeable says whether the level has enough values beyond a quantile
// statistic's quantile to bound it (weighted.judgeable).
func (lv *levelSample) judgeable(st stat) bool {
	switch st {
	case statTTFT50, statTTFT95, statTTFT99:
		return lv.ttft.judgeable(q509599[st-statTTFT50])
	case statITL50, statITL95, statITL99:
		return lv.itl.judgeable(q509599[st-statITL50])
	case statLatency50, statLatency99:
		return lv.latency.judgeable(q5099[st-statLatency50])
	case statTPOT50:
		return lv.tpot.judgeable(0.5)
	}
	return true
}

// The quantiles each sample's metrics read.
var (
	q509599 = []float64{0.50, 0.95, 0.99}
	q5099   = []float64{0.50, 0.99}
	q50     = []float64{0.50}
)

// point writes the level's statistics as measured.
func (lv *levelSample) point(v *[nStats]float64) {
	w := make([]int32, len(lv.blocks))
	for i := range w {
		w[i] = 1
	}
	lv.resample(w, nil, v)
	// The measured window, not a replay of it: the record's duration.
	secs := float64(lv.dur) / 1e6
	var tok, ok float64
	for b := range lv.blocks {
		tok += lv.tok[b]
		ok += float64(lv.ok[b])
	}
	v[statOutput], v[statRequests] = tok/secs, ok/secs
}

// resample writes the statistics of the level with block b drawn w[b]
// times, the drawn blocks replayed in order (no replay when order is
// nil). A statistic that the draw leaves undefined is NaN.
func (lv *levelSample) resample(w []int32, order []int32, v *[nStats]float64) {
	var tok, latS, ok float64
	for b, k := range w {
		f := float64(k)
		tok += f * lv.tok[b]
		latS += f * lv.latS[b]
		ok += f * float64(lv.ok[b])
	}
	v[statPerUser] = tok / latS
	if order != nil {
		secs := float64(lv.replay(order)) / 1e6
		v[statOutput], v[statRequests] = tok/secs, ok/secs
	}
	var q [3]float64
	set := func(ws *weighted, qs []float64, into ...stat) {
		if !ws.quantiles(w, qs, q[:len(qs)]) {
			for _, s := range into {
				v[s] = math.NaN()
			}
			return
		}
		for j, s := range into {
			v[s] = q[j]
		}
	}
	set(lv.ttft, q509599, statTTFT50, statTTFT95, statTTFT99)
	set(lv.itl, q509599, statITL50, statITL95, statITL99)
	set(lv.latency, q5099, statLatency50, statLatency99)
	set(lv.tpot, q50, statTPOT50)
}

// replay runs the drawn requests through the level's closed loop: the
// user free first takes each in turn, sends it after its lead and is free
// again when its answer ends; the level lasts until the last answer ends
// (plus the level's own tail). Replaying the requests in the order they
// were taken gives the measured window back (to a few µs where two users
// raced for the last requests), so the throughputs of a resample keep
// the level's shape: its start, when all users send at once, and its
// end, when fewer and fewer are busy.
func (lv *levelSample) replay(order []int32) int64 {
	h := lv.heap
	clear(h) // every user takes its first request at the level's start
	var end int64
	for _, b := range order {
		sp := lv.blocks[b]
		for i := sp.from; i < sp.to; i++ {
			h[0] += lv.lead[i] + lv.lat[i]
			end = max(end, h[0])
			siftDown(h)
		}
	}
	return end + lv.tail
}

// siftDown restores a min-heap whose root grew.
func siftDown(h []int64) {
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && h[r] < h[l] {
			c = r
		}
		if h[i] <= h[c] {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// tagged is one value of a sample, the block its request is in and the
// request (its place in the level).
type tagged struct {
	v   float64
	b   int32
	req int32
}

// weighted is a sample whose values are counted as many times as their
// block is drawn. Its values are sorted once; a resample's quantiles then
// walk them with each value's weight. The walk skips whole chunks of the
// sorted values by their per-block counts, so a level's tens of thousands
// of inter-token gaps cost a few thousand steps a resample instead of a
// sort.
type weighted struct {
	vals  []float64
	blk   []int32
	req   []int32 // each value's request
	size  []int64 // values per block
	chunk int
	nb    int
	cnt   []int32 // values of block k in chunk c at cnt[c*nb+k]
	cw    []int64 // scratch: each chunk's weight in this resample, -1 not yet summed
}

func newWeighted(xs []tagged, nb int) *weighted {
	slices.SortFunc(xs, func(a, b tagged) int { return cmp.Compare(a.v, b.v) })
	ws := &weighted{vals: make([]float64, len(xs)), blk: make([]int32, len(xs)), req: make([]int32, len(xs)), size: make([]int64, nb), nb: nb}
	for i, x := range xs {
		ws.vals[i], ws.blk[i], ws.req[i] = x.v, x.b, x.req
		ws.size[x.b]++
	}
	// About √(values × blocks) per chunk balances summing the chunks'
	// weights against walking inside one.
	ws.chunk = max(32, int(math.Sqrt(float64(len(xs)*nb))))
	chunks := (len(xs) + ws.chunk - 1) / ws.chunk
	ws.cnt = make([]int32, chunks*nb)
	for i, b := range ws.blk {
		ws.cnt[(i/ws.chunk)*nb+int(b)]++
	}
	ws.cw = make([]int64, chunks)
	return ws
}

// quantiles writes the type-7 quantiles qs (ascending) of the sample with
// block k's values counted w[k] times, as stats.Quantile would of that
// sample written out; false when no value is drawn.
func (ws *weighted) quantiles(w []int32, qs []float64, out []float64) bool {
	var total int64
	for k, n := range ws.size {
		total += int64(w[k]) * n
	}
	if total == 0 {
		return false
	}
	for i := range ws.cw {
		ws.cw[i] = -1
	}
	cur := cursor{ws: ws, w: w}
	for j, q := range qs {
		out[j] = cur.quantile(float64(total-1)*q, total)
	}
	return true
}

// judgeable says whether the sample has enough values beyond quantile q
// for its spread to be estimated at all: a bootstrap cannot see the noise
// of a tail of a handful of values (the p99 of 100 requests is their
// largest but one). The values beyond it must also come from minBeyond
// requests or more: the gaps of one answer share its pace, so twenty
// slow gaps of one hiccuping answer are one observation of the tail,
// not twenty. Such a quantile is never judged (TooFew).
func (ws *weighted) judgeable(q float64) bool {
	// The n·(1 − q) values beyond the quantile (n·q for a low one); the
	// small epsilon keeps 1000 × 0.01 at 10 in floating point.
	k := int(float64(len(ws.vals))*min(q, 1-q) + 1e-9)
	if k < minBeyond {
		return false
	}
	tail := ws.req[len(ws.req)-k:]
	if q < 0.5 {
		tail = ws.req[:k]
	}
	seen := make(map[int32]struct{}, minBeyond)
	for _, r := range tail {
		seen[r] = struct{}{}
		if len(seen) >= minBeyond {
			return true
		}
	}
	return false
}

// minBeyond is how many values, from as many requests, must lie beyond a
// quantile for it to be judged: a p95 needs 200 requests, a p99 1,000
// (an ITL quantile counts gaps, from at least as many answers).
const minBeyond = 10

// cursor walks a resample's sorted values by rank. Ranks asked in
// ascending order cost one pass; a lower rank starts it again.
type cursor struct {
	ws     *weighted
	w      []int32
	ci     int   // the chunk the walk is in
	before int64 // the weight of the chunks before it
	i      int   // the value the walk is at
	pos    int64 // the weight of the values before it
}

// quantile is the type-7 quantile at fractional rank h of total.
func (c *cursor) quantile(h float64, total int64) float64 {
	lo := int64(h)
	a := c.at(lo)
	if lo >= total-1 {
		return a
	}
	return a + (h-float64(lo))*(c.at(lo+1)-a)
}

// at is the value at rank r (0-based) of the resample written out.
func (c *cursor) at(r int64) float64 {
	ws := c.ws
	if r < c.pos {
		c.ci, c.before, c.i, c.pos = 0, 0, 0, 0
	}
	// Skip whole chunks while r lies beyond the one the walk is in.
	for {
		cw := ws.cw[c.ci]
		if cw < 0 {
			cw = 0
			for k, n := range ws.cnt[c.ci*ws.nb : (c.ci+1)*ws.nb] {
				cw += int64(c.w[k]) * int64(n)
			}
			ws.cw[c.ci] = cw
		}
		if c.before+cw > r {
			break
		}
		c.before += cw
		c.ci++
		c.i, c.pos = c.ci*ws.chunk, c.before
	}
	for {
		n := int64(c.w[ws.blk[c.i]])
		if c.pos+n > r {
			return ws.vals[c.i]
		}
		c.pos += n
		c.i++
	}
}
