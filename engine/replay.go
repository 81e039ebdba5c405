package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/stats"
	"github.com/kovara/desktop/engine/trace"
)

// A trace replayed (issue #51): the rate plan's one level, its requests
// sent at their recorded times (divided by the speed), each with a prompt
// made to its recorded length and prefix structure — the blocks that
// share a hash id share one text, so what the server could take from its
// cache when it was recorded it can take again — and an answer as long
// as the recorded one.

// maxTraceBytes bounds a trace file read for a replay.
const maxTraceBytes = 1 << 30

// replay is a trace read and cut to what is sent.
type replay struct {
	r        setup.Replay
	format   trace.Format
	inTrace  int
	skipped  int
	reqs     []trace.Request // those sent, in time order
	sched    Schedule
	spanS    float64
	rate     float64 // the requests over the recorded span, as sent
	maxIn    int
	maxOut   int
	medianIn int
	// blocks are each request's prompt blocks, set by prepare: a block's
	// seed (from its hash id) and its words.
	blocks [][]block
	// parent is the request each carries on from (-1: none), found by
	// follows, and think the recorded time between that one's end and
	// its arrival, divided by the speed.
	parent []int
	think  []time.Duration
	// Set for each level (pacer): each request's end, closed when it is
	// known, the time it ended and the time the pacer let it go, both
	// from the loop's release.
	ends   []chan struct{}
	endRel []time.Duration
	dueRel []time.Duration
	ctx    context.Context
	// A request another carries on from keeps the messages it sent and
	// its answer, so the next turn sends them as its history — as the
	// person's client did, and as the server's cache holds them — then
	// a new user message of tail words (prepare).
	isParent []bool
	sent     [][]byte
	answers  [][]byte
	tail     []block
	// Where the server counts a text's tokens (counter: llama-server's,
	// vLLM's and SGLang's /tokenize), a turn's own words are sized at
	// its send from what the turn before it really was: its prompt as
	// the server counted it (sentIn) and its answer as the server's
	// tokenizer reads it back (answerIn). A model's answer sent back as
	// text may be more tokens than it generated (the test model's
	// sub-word soup: a tenth more), which the recorded lengths cannot
	// know.
	counter      *tokenCounter
	sentIn       []int
	answerIn     []int
	perWord      float64
	turnOverhead int
	// anthropic: the server serves the Anthropic Messages API, so the
	// requests recorded on it are sent on it; else as chat completions,
	// and noAnthropic says why.
	anthropic   bool
	noAnthropic string
}

type block struct {
	seed  int64
	words int
}

// loadReplay reads r's trace and keeps what is sent: the requests in the
// part of the day asked for that had an answer when recorded.
func loadReplay(r setup.Replay) (*replay, error) {
	f, err := os.Open(r.File)
	if err != nil {
		return nil, &PlanError{Err: fmt.Errorf("the trace: %w", err)}
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > maxTraceBytes {
		return nil, &PlanError{Err: fmt.Errorf("the trace is %d MiB: replays read traces of up to %d MiB", st.Size()>>20, maxTraceBytes>>20)}
	}
	im, err := trace.Import(f, 0)
	if err != nil {
		return nil, &PlanError{Err: fmt.Errorf("the trace %s: %w", r.File, err)}
	}
	rp := &replay{r: r, format: im.Format, inTrace: len(im.Requests)}
	var from, to time.Duration
	window := r.From != "" || r.To != ""
	if window && im.Format != trace.FormatKovara {
		return nil, &PlanError{Err: fmt.Errorf("a %s trace has no time of day for each request: a part of the day (from, to) needs a trace recorded by kovara-bench record", im.Format)}
	}
	if r.From != "" {
		from, _ = setup.ParseClock(r.From)
	}
	to = 24 * time.Hour
	if r.To != "" {
		to, _ = setup.ParseClock(r.To)
	}
	for _, q := range im.Requests {
		if window {
			at, err := time.Parse(time.RFC3339Nano, q.Time)
			if err != nil {
				continue
			}
			h, m, s := at.Clock()
			day := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second
			if day < from || day >= to {
				continue
			}
		}
		if q.OutputLength <= 0 {
			rp.skipped++ // no answer recorded: a failure, not load to send
			continue
		}
		rp.reqs = append(rp.reqs, q)
	}
	if len(rp.reqs) == 0 {
		return nil, &PlanError{Err: errors.New("the trace has no request with an answer to replay in the part of the day asked for")}
	}
	if len(rp.reqs) > setup.RateMaxRequests {
		return nil, &PlanError{Err: fmt.Errorf("the trace has %d requests to replay: a replay sends at most %d (give a part of the day with from and to)", len(rp.reqs), setup.RateMaxRequests)}
	}
	speed := r.SpeedOr1()
	t0 := rp.reqs[0].Timestamp
	var ins []int
	for _, q := range rp.reqs {
		rp.sched = append(rp.sched, time.Duration(float64(q.Timestamp-t0)*float64(time.Millisecond)/speed))
		rp.maxIn, rp.maxOut = max(rp.maxIn, q.InputLength), max(rp.maxOut, q.OutputLength)
		ins = append(ins, q.InputLength)
	}
	slices.Sort(ins)
	rp.medianIn = max(ins[len(ins)/2], 1)
	rp.follows(speed)
	rp.spanS = float64(rp.reqs[len(rp.reqs)-1].Timestamp-t0) / 1000
	// The level's offered rate: its requests over the time they took to
	// arrive, as sent (one request a second when they all came at once).
	if sent := rp.spanS / speed; sent > 0 && len(rp.reqs) > 1 {
		rp.rate = max(roundRate(float64(len(rp.reqs)-1)/sent), 0.001)
	} else {
		rp.rate = 1
	}
	return rp, nil
}

// followsWindow is how many requests before one are looked at for the
// one it carries on from.
const followsWindow = 256

// follows finds the request each one carries on from: a conversation's
// next turn, or an agent's next step, holds the whole prompt of the one
// before (all its blocks but its last, which the answer and the new turn
// fill), and arrived after that one's answer ended. A replay cannot send
// such a request before the one it carries on from has its answer — its
// prompt holds that answer — however the open-loop times fall: it is
// sent at its recorded time or, later, when that one ended plus the
// recorded time between them (a person reading, a tool running). Another
// conversation that shares only a system prompt arrived while the first
// was still answering, or shares less than all of its prompt, and is not
// held back.
func (rp *replay) follows(speed float64) {
	rp.parent = make([]int, len(rp.reqs))
	rp.think = make([]time.Duration, len(rp.reqs))
	for i, q := range rp.reqs {
		rp.parent[i] = -1
		// This app's traces say it by message: the turn before's whole
		// prompt is one of this one's message ids, however short both
		// are (a chat turn is shorter than a block).
		if j, think, ok := rp.followsByMessage(i, speed); ok {
			rp.parent[i], rp.think[i] = j, think
			continue
		}
		best := 0
		for j := i - 1; j >= max(0, i-followsWindow); j-- {
			p := rp.reqs[j]
			// Timestamps are whole ms: a turn sent the moment the one
			// before ended may read up to 2 ms before that end.
			end := p.Timestamp + int64(p.DurationMs)
			// and the turn holds that one's prompt and its answer.
			if len(p.HashIDs) == 0 || q.Timestamp+2 < end || q.InputLength < p.InputLength+p.OutputLength {
				continue
			}
			n := 0
			for n < min(len(p.HashIDs), len(q.HashIDs)) && p.HashIDs[n] == q.HashIDs[n] {
				n++
			}
			if n >= max(len(p.HashIDs)-1, 1) && n > best {
				best, rp.parent[i] = n, j
				rp.think[i] = time.Duration(float64(max(q.Timestamp-end, 0)) * float64(time.Millisecond) / speed)
			}
		}
	}
}

// followsByMessage is the request i carries on from by their message
// ids: the latest before it, ended by its arrival, whose last id (its
// whole prompt) is among i's and whose answer i's length holds.
func (rp *replay) followsByMessage(i int, speed float64) (int, time.Duration, bool) {
	q := rp.reqs[i]
	if len(q.MessageIDs) < 2 {
		return -1, 0, false
	}
	for j := i - 1; j >= max(0, i-followsWindow); j-- {
		p := rp.reqs[j]
		end := p.Timestamp + int64(p.DurationMs)
		if len(p.MessageIDs) == 0 || q.Timestamp+2 < end || q.InputLength < p.InputLength+p.OutputLength ||
			!slices.Contains(q.MessageIDs[:len(q.MessageIDs)-1], p.MessageIDs[len(p.MessageIDs)-1]) {
			continue
		}
		return j, time.Duration(float64(max(q.Timestamp-end, 0)) * float64(time.Millisecond) / speed), true
	}
	return -1, 0, false
}

// pacer is the level's Pacer: request k at its recorded time, or, where
// it carries on from another, no sooner than that one's end and the
// recorded time after it. It waits, in the slot about to send k, for
// that end; the loop's end ends the wait (bind).
func (rp *replay) pacer() Pacer {
	rp.ends = make([]chan struct{}, len(rp.reqs))
	for i := range rp.ends {
		rp.ends[i] = make(chan struct{})
	}
	rp.endRel = make([]time.Duration, len(rp.reqs))
	rp.dueRel = make([]time.Duration, len(rp.reqs))
	rp.sent = make([][]byte, len(rp.reqs))
	rp.answers = make([][]byte, len(rp.reqs))
	return rp
}

// bind is loopBound's: Due gives up waiting when the loop ends, as the
// watchdog ends it alone when the server is gone.
func (rp *replay) bind(ctx context.Context) { rp.ctx = ctx }

// Due is Pacer's.
func (rp *replay) Due(k int) (time.Duration, bool) {
	if k < 0 || k >= len(rp.sched) {
		return 0, false
	}
	at := rp.sched[k]
	if j := rp.parent[k]; j >= 0 {
		select {
		case <-rp.ends[j]:
		case <-rp.ctx.Done():
			return 0, false
		}
		at = max(at, rp.endRel[j]+rp.think[k])
	}
	rp.dueRel[k] = at
	return at, true
}

// ended is loadSpec.ended: request k's end, from the loop's release,
// and, where another carries on from it, its answer.
func (rp *replay) ended(k int, o *outcome, answer []byte) {
	if k < 0 || k >= len(rp.ends) {
		return
	}
	rp.endRel[k] = o.end - o.due + rp.dueRel[k]
	if rp.isParent[k] && o.ok() {
		rp.answers[k] = bytes.Clone(answer)
		if rp.counter != nil && o.hasUsage && o.promptTok > 0 {
			rp.countAnswer(k, o.promptTok)
		}
	}
	close(rp.ends[k])
}

// countAnswerTimeout bounds the count of a turn's answer: the next turn
// waits for it (after its think time, most often longer).
const countAnswerTimeout = 2 * time.Second

// countAnswer keeps what request k was as the server counts it: its
// prompt (promptTok, the server's usage) and its answer read back by the
// server's tokenizer. Nothing is kept where the count fails: the next
// turn is then sized from the recorded lengths.
func (rp *replay) countAnswer(k, promptTok int) {
	var text string
	if json.Unmarshal(append(append([]byte{'"'}, rp.answers[k]...), '"'), &text) != nil {
		return
	}
	ctx := rp.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, countAnswerTimeout)
	defer cancel()
	n, err := rp.counter.count(ctx, text)
	if err != nil {
		return
	}
	rp.sentIn[k], rp.answerIn[k] = promptTok, n
}

// prepare sizes each request's blocks once the server's tokens per word
// of the synthetic text is known, less overhead tokens of chat template
// each request carries. A block's length is fixed by its first sight, so
// every request holding a hash id sends the same text for it.
func (rp *replay) prepare(seed int64, tokensPerWord float64, overhead, turnOverhead int) {
	if tokensPerWord <= 0 {
		tokensPerWord = 1.3
	}
	rp.perWord, rp.turnOverhead = tokensPerWord, turnOverhead
	rp.sentIn, rp.answerIn = make([]int, len(rp.reqs)), make([]int, len(rp.reqs))
	// A turn that carries a conversation on sends the one before it and
	// its answer, then its own words: what its recorded length leaves.
	rp.isParent = make([]bool, len(rp.reqs))
	rp.tail = make([]block, len(rp.reqs))
	for i, p := range rp.parent {
		if p < 0 {
			continue
		}
		rp.isParent[p] = true
		pq := rp.reqs[p]
		rp.tail[i] = block{seed: mixSeed(seed, -int64(i)-1_000_000_000), words: rp.ownWords(i, pq.InputLength, pq.OutputLength)}
	}
	// This app's traces hash blocks of bytes: the trace's tokens per byte
	// turns a block's bytes into its tokens, the same for every request.
	var in, bytesAll int64
	for _, q := range rp.reqs {
		if q.PromptBytes > 0 && q.InputLength > 0 {
			in += int64(max(q.InputLength-overhead, 1))
			bytesAll += int64(q.PromptBytes)
		}
	}
	perByte := 0.0
	if bytesAll > 0 {
		perByte = float64(in) / float64(bytesAll)
	}
	seen := map[int64]int{}
	rp.blocks = make([][]block, len(rp.reqs))
	for i, q := range rp.reqs {
		want := float64(max(q.InputLength-overhead, 1))
		if len(q.HashIDs) == 0 {
			// No prefix structure (BurstGPT): a text of its own.
			rp.blocks[i] = []block{{seed: mixSeed(seed, -int64(i)-1), words: rp.wordsOf(want)}}
			continue
		}
		bs := make([]block, len(q.HashIDs))
		sofar := 0.0 // the tokens of the blocks before
		for j, id := range q.HashIDs {
			w, ok := seen[id]
			if !ok {
				tokens := float64(trace.MooncakeBlockTokens) // Mooncake's block
				if q.PromptBytes > 0 && q.BlockBytes > 0 {
					tokens = float64(max(min(q.BlockBytes, q.PromptBytes-j*q.BlockBytes), 1)) * perByte
				}
				if j == len(q.HashIDs)-1 {
					// The last block, first seen here, is what the request's
					// recorded length leaves: the prompt's own tail, where a
					// trace-wide tokens per byte would miss a short prompt
					// of template-heavy chat (27 tokens of 58 bytes).
					tokens = max(want-sofar, 1)
				}
				w = rp.wordsOf(tokens)
				seen[id] = w
			}
			sofar += float64(w) * tokensPerWord
			bs[j] = block{seed: mixSeed(seed, id), words: w}
		}
		rp.blocks[i] = bs
	}
}

// wordsOf is the synthetic words that make tokens tokens, at least one.
func (rp *replay) wordsOf(tokens float64) int {
	return max(int(math.Round(tokens/rp.perWord)), 1)
}

// ownWords is the words of turn k's own message after the turn it
// carries on, whose prompt and answer were before and answer tokens:
// what k's recorded length leaves, less two messages' template (the
// answer's and its own; turnOverhead is one message's, replayProbe).
func (rp *replay) ownWords(k, before, answer int) int {
	return rp.wordsOf(float64(rp.reqs[k].InputLength - before - answer - 2*rp.turnOverhead))
}

// mixSeed is a block's seed: the run's with the block's id, so a replay
// with a fresh seed sends texts the server's cache has not seen.
func mixSeed(seed, id int64) int64 {
	z := uint64(seed) ^ uint64(id)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return int64(z ^ (z >> 31))
}

// messagesFor is request k's messages: the conversation it carries on,
// with its own words after, where the one before it answered; else its
// blocks as one user message.
func (rp *replay) messagesFor(k int) []byte {
	p := -1
	if rp.parent != nil {
		p = rp.parent[k]
	}
	if p < 0 || rp.sent == nil || rp.sent[p] == nil || rp.answers[p] == nil {
		return rp.messages(k)
	}
	b := slices.Clip(rp.sent[p])
	b = append(b, `,{"role":"assistant","content":"`...)
	b = append(b, rp.answers[p]...)
	b = append(b, `"},`...)
	tail := rp.tail[k]
	if rp.answerIn[p] > 0 {
		// Sized again from the turn before as the server read it.
		tail.words = rp.ownWords(k, rp.sentIn[p], rp.answerIn[p])
	}
	return appendWordsMessage(b, "user", tail)
}

// messages is request i's one user message: its blocks' texts in turn.
func (rp *replay) messages(i int) []byte {
	return appendWordsMessage(nil, "user", rp.blocks[i]...)
}

// appendWordsMessage appends a message element of role whose content is
// each block's synthetic words in turn (every word after a space, so the
// blocks join as they are).
func appendWordsMessage(b []byte, role string, blocks ...block) []byte {
	b = append(b, `{"role":"`...)
	b = append(b, role...)
	b = append(b, `","content":"`...)
	for _, bl := range blocks {
		b = prompt.AppendWords(b, bl.seed, 0, bl.words)
	}
	return append(b, `"}`...)
}

// replayProbe measures what the replay's own messages cost in the
// server's tokens: three unmeasured requests answered with one token —
// one user message of one synthetic word, one of a thousand, and a
// conversation of three one-word messages — give the tokens per word,
// the chat template's own tokens and what each further turn adds.
// ok is false where one failed or gave no usage (the caller falls back
// on calibration's tokens per word and no template).
func (r *rateRun) replayProbe(ctx context.Context) (tokensPerWord float64, overhead, turnOverhead int, ok bool) {
	cn := r.newConn()
	defer cn.close()
	msg := func(role string, i, words int) []byte {
		return appendWordsMessage(nil, role, block{seed: mixSeed(r.plan.Seed, -2_000_000_000-int64(i)), words: words})
	}
	// One word alone is the template's own tokens, near enough; a
	// thousand words the tokens a word, over enough words that the
	// words' own spread evens out; three one-word turns what a turn adds.
	conv := slices.Concat(msg("user", 0, 1), []byte(","), msg("assistant", 3, 1), []byte(","), msg("user", 4, 1))
	var got [3]int
	for i, m := range [][]byte{msg("user", 0, 1), msg("user", 1, 1000), conv} {
		n := prompt.FirstWarmupRequest + int64(r.plan.Warmup) + r.used
		r.used++
		o := r.opts
		o.maxTokens, o.messages = 1, m
		out := cn.do(ctx, o, n, r.rp.Timeout)
		if !out.ok() || !out.hasUsage || out.promptTok <= 0 {
			return 0, 0, 0, false
		}
		got[i] = out.promptTok
	}
	tpw := float64(got[1]-got[0]) / 999
	if tpw < 0.2 || tpw > 5 {
		return 0, 0, 0, false
	}
	overhead = max(int(math.Round(float64(got[0])-tpw)), 0)
	turnOverhead = max(int(math.Round(float64(got[2]-got[0])/2-tpw)), 0)
	return tpw, overhead, turnOverhead, true
}

// match is how the level's requests, first numbered first, matched the
// recording.
func (rp *replay) match(lr *loadRun, first int64) *results.ReplayMatch {
	m := &results.ReplayMatch{Format: string(rp.format), InTrace: rp.inTrace, Sent: len(rp.reqs), Skipped: rp.skipped,
		Speed: rp.r.SpeedOr1(), From: rp.r.From, To: rp.r.To, SpanS: rp.spanS, APIs: map[string]int{}, NoAnthropic: rp.noAnthropic}
	for _, q := range rp.reqs {
		api := q.API
		if api == "" {
			api = trace.APIChat // a public trace's: chat, as far as it says
		}
		m.APIs[api]++
		switch {
		case api == trace.APIAnthropic && rp.anthropic:
			m.Anthropic++
		case api != trace.APIChat:
			m.AsChat++
		}
	}
	var prompts, answers [][2]int
	var cachedRec, cachedRep, recIn, repIn int64
	var onlyCached, onlyIn int64 // the replay's, where the trace says none
	var cachedN int
	var ttftRec, ttftRep []float64
	points := make([]results.ReplayPoint, len(rp.reqs))
	for k, q := range rp.reqs {
		points[k] = results.ReplayPoint{AtS: rp.sched[k].Seconds(), RecordedIn: q.InputLength, RecordedTTFTMs: q.TTFTMs}
	}
	for _, o := range lr.outcomes() {
		k := int(o.n - first)
		if k < 0 || k >= len(rp.reqs) || o.interrupted {
			continue
		}
		// When it was due in fact: a turn waits for the one before it.
		points[k].AtS = (rp.dueRel[k]).Seconds()
		if !o.ok() {
			continue
		}
		q := rp.reqs[k]
		if o.hasUsage {
			points[k].ReplayedIn = o.promptTok
		}
		if o.ttft >= 0 {
			v := ms(o.start + o.ttft - o.due)
			points[k].ReplayedTTFTMs = &v
		}
		if o.hasUsage {
			prompts = append(prompts, [2]int{q.InputLength, o.promptTok})
			answers = append(answers, [2]int{q.OutputLength, o.complTok})
		}
		// The cached share over the requests both counts are known for.
		if got, ok := sharedTokens(*o); ok && o.promptTok > 0 {
			if q.CachedTokens != nil && q.InputLength > 0 {
				cachedN++
				cachedRec, recIn = cachedRec+int64(*q.CachedTokens), recIn+int64(q.InputLength)
				cachedRep, repIn = cachedRep+int64(got), repIn+int64(o.promptTok)
			} else {
				onlyCached, onlyIn = onlyCached+int64(got), onlyIn+int64(o.promptTok)
			}
		}
		if q.TTFTMs != nil && o.ttft >= 0 {
			ttftRec = append(ttftRec, *q.TTFTMs)
			ttftRep = append(ttftRep, ms(o.start+o.ttft-o.due))
		}
	}
	m.Requests = points
	m.Prompt, m.Answer = tokenMatch(prompts), tokenMatch(answers)
	if cachedN > 0 {
		m.CachedShare = &results.ShareMatch{Requests: cachedN, Recorded: float64(cachedRec) / float64(recIn), Replayed: float64(cachedRep) / float64(repIn)}
	} else if onlyIn > 0 {
		v := float64(onlyCached) / float64(onlyIn)
		m.ReplayCachedShare = &v
	}
	if len(ttftRep) > 0 {
		slices.Sort(ttftRec)
		slices.Sort(ttftRep)
		m.TTFTMs = &results.TTFTMatch{Requests: len(ttftRep), RecordedP50: stats.Quantile(ttftRec, 0.5), RecordedP90: stats.Quantile(ttftRec, 0.9),
			ReplayedP50: stats.Quantile(ttftRep, 0.5), ReplayedP90: stats.Quantile(ttftRep, 0.9)}
	}
	return m
}

// tokenMatch is the match of pairs of (recorded, replayed) counts; nil
// without a pair whose recorded count is above 0.
func tokenMatch(pairs [][2]int) *results.TokenMatch {
	m := &results.TokenMatch{}
	var errs []float64
	for _, p := range pairs {
		if p[0] <= 0 || p[1] < 0 {
			continue
		}
		m.Requests++
		m.Recorded += int64(p[0])
		m.Replayed += int64(p[1])
		errs = append(errs, math.Abs(float64(p[1]-p[0]))/float64(p[0])*100)
	}
	if m.Requests == 0 {
		return nil
	}
	slices.Sort(errs)
	m.MedianErrPct, m.P90ErrPct = stats.Quantile(errs, 0.5), stats.Quantile(errs, 0.9)
	return m
}

// replayOpts is request k's options: the plan's, with k's prompt and
// answer length.
func (rp *replay) opts(base requestOpts, k int) requestOpts {
	o := base
	o.messages = rp.messagesFor(k)
	if rp.isParent != nil && rp.isParent[k] && rp.sent != nil {
		rp.sent[k] = o.messages // read by its next turn, after its end
	}
	o.maxTokens = rp.reqs[k].OutputLength
	o.anthropic = rp.anthropic && rp.reqs[k].API == trace.APIAnthropic
	return o
}

// wantsAnthropic: some request was recorded on the Anthropic Messages API.
func (rp *replay) wantsAnthropic() bool {
	return slices.ContainsFunc(rp.reqs, func(q trace.Request) bool { return q.API == trace.APIAnthropic })
}

// anthropicProbe asks the server, with one unmeasured Messages request
// answered with one token, whether it serves the Anthropic Messages API
// (Ollama 0.24 does; llama-server b4748 answers 404).
func (r *rateRun) anthropicProbe(ctx context.Context) (ok bool, why string) {
	cn := r.newConn()
	defer cn.close()
	n := prompt.FirstWarmupRequest + int64(r.plan.Warmup) + r.used
	r.used++
	o := r.opts
	o.maxTokens, o.anthropic = 1, true
	o.messages = appendWordsMessage(nil, "user", block{seed: mixSeed(r.plan.Seed, -3_000_000_000), words: 8})
	out := cn.do(ctx, o, n, r.rp.Timeout)
	if out.ok() {
		return true, ""
	}
	return false, failure(&out)
}
