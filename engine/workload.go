package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/promptfile"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/stats"
)

// What a plan's requests ask beyond the method's synthetic prompt
// (docs/plans.md, "Your own load"): a person's prompts from a file, a
// system prompt each group of users shares, conversations that carry
// their history. It shapes each request on its slot (loadSpec.shape),
// so the request loop and its pacer stay the same for every workload.

// Bounds on the prompts a run holds from a file: at most this many, and
// about this many bytes of them; requests cycle through them.
const (
	maxFilePrompts     = 4096
	maxFilePromptBytes = 256 << 20
	maxPromptRecord    = 1 << 20 // a longer record is malformed: 1 MiB is about 250,000 tokens
)

// workload is a plan's setup.Workload made ready for the run.
type workload struct {
	w setup.Workload
	// prompts are the sampled file prompts, each as message elements
	// (JSON objects, comma-separated, no brackets), and their answers'
	// caps (0: the plan's).
	prompts   [][]byte
	maxTokens []int
	source    *results.PromptsSource
	next      atomic.Int64
	// prefixes are each group's system message element; prefixWords
	// the words of each.
	prefixes    [][]byte
	prefixWords int
	seed        int64
}

// loadPrompts scans and samples the plan's prompts file, before the
// run touches the server: a file that cannot be used stops the plan
// here, named by its line.
func loadPrompts(ctx context.Context, live *Live, w setup.Workload, seed int64, want int) (*workload, error) {
	wl := &workload{w: w, seed: seed}
	if w.PromptsFile == "" {
		return wl, nil
	}
	progress := new(promptfile.Progress)
	live.readingPrompts(progress)
	ix, err := promptfile.Scan(ctx, w.PromptsFile, promptfile.Options{SkipBad: w.SkipBad, MaxRecordBytes: maxPromptRecord, Progress: progress})
	if errors.Is(err, promptfile.ErrStopped) {
		return nil, fmt.Errorf("while reading the prompts file: %w", ErrInterrupted)
	}
	if err != nil {
		return nil, &PlanError{Err: fmt.Errorf("the prompts file: %w", err)}
	}
	n := min(want, maxFilePrompts)
	if ix.Records > 0 {
		if each := ix.Size / int64(ix.Records); each > 0 {
			n = min(n, int(max(maxFilePromptBytes/each, 1)))
		}
	}
	ps, err := ix.Sample(max(n, 1), seed)
	if err != nil {
		return nil, &PlanError{Err: fmt.Errorf("the prompts file: %w", err)}
	}
	for _, p := range ps {
		wl.prompts = append(wl.prompts, p.AppendMessagesJSON(nil))
		wl.maxTokens = append(wl.maxTokens, p.MaxTokens)
	}
	src := &results.PromptsSource{Shape: ix.Shape, SHA256: ix.SHA256, Bytes: ix.Size, Lines: ix.Lines, Records: ix.Records, Skipped: ix.Skipped}
	for _, b := range ix.Bad {
		src.SkippedLines = append(src.SkippedLines, b.Line)
	}
	wl.source = src
	return wl, nil
}

// prepare builds the groups' system prompts once calibration has said
// how many tokens a word of the synthetic text makes.
func (wl *workload) prepare(tokensPerWord float64) {
	if wl.w.SharedPrefix <= 0 {
		return
	}
	wl.prefixWords = max(1, int(math.Round(float64(wl.w.SharedPrefix)/tokensPerWord)))
	wl.prefixes = wl.prefixes[:0]
	for g := range wl.w.Groups() {
		wl.prefixes = append(wl.prefixes, systemMessage(prefixRef(wl.seed, g), wl.seed+int64(g)+1, wl.prefixWords))
	}
}

// prefixRef names a group's system prompt at its start, so groups and
// the prefix check's cold prompts differ from their first token.
func prefixRef(seed int64, group int) string {
	return "system prompt " + strconv.Itoa(group+1) + " of run " + strconv.FormatInt(seed, 10)
}

// systemMessage is a system message element of words synthetic words
// under seed, starting "Reference <ref>.".
func systemMessage(ref string, seed int64, words int) []byte {
	b := []byte(`{"role":"system","content":"Reference `)
	b = append(b, ref...)
	b = append(b, ". "...)
	b = prompt.AppendText(b, seed, 0, words)
	return append(b, `"}`...)
}

// tokensPerWord is what one word of the synthetic text makes in the
// server's tokenizer, from calibration's prompts: the slope between
// them where it sent two lengths, else its one prompt less the words'
// share of the chat template, else 1.3 (everyday English).
func (r *runner) tokensPerWord() float64 {
	cal := r.file.Local.Calibration
	if cal == nil {
		return 1.3
	}
	var pts []point
	for _, a := range cal.Attempts {
		if !a.Refused && a.Words > 0 && a.PromptTokens > 0 && !slices.ContainsFunc(pts, func(p point) bool { return p.words == a.Words }) {
			pts = append(pts, point{a.Words, a.PromptTokens})
		}
	}
	if len(pts) >= 2 {
		if slope, _ := fitLine(pts); slope > 0.2 && slope < 5 {
			return slope
		}
	}
	if cal.PromptTokens != nil && cal.Words > 0 {
		if t := float64(*cal.PromptTokens-r.sharedOverhead()) / float64(cal.Words); t > 0.2 && t < 5 {
			return t
		}
	}
	return 1.3
}

// counterCache is what the server's /metrics prefix-cache counters say
// it took from its cache since before, over requests requests; nil when
// it has no such counters (a server that says it per answer is read
// from the answers instead: requestCache).
func (r *runner) counterCache(ctx context.Context, before PrefixCounters, requests int) *results.PromptCache {
	after, ok := r.readPrefix(ctx)
	if !ok {
		return nil
	}
	prompt, cached, ok := after.Since(before)
	if !ok || prompt <= 0 {
		return nil
	}
	return &results.PromptCache{CachedTokens: cached, PromptTokens: prompt, Requests: requests, Source: results.CacheFromMetrics, Metrics: after.Names}
}

// sharedOverhead is what every request shares by design (chat template
// and instruction), when the run measured it.
func (r *runner) sharedOverhead() int {
	if r.sharedOK {
		return r.shared
	}
	return 0
}

// settings is the workload as the result records it; nil for the
// synthetic prompt.
func (wl *workload) settings() *results.Workload {
	if wl == nil || !wl.w.Set() {
		return nil
	}
	out := &results.Workload{Prompts: wl.source}
	if wl.w.SharedPrefix > 0 {
		out.SharedPrefix, out.SharedPrefixWords, out.PrefixGroups = wl.w.SharedPrefix, wl.prefixWords, wl.w.Groups()
	}
	if wl.w.Turns > 1 {
		out.Turns = wl.w.Turns
	}
	return out
}

// loop makes a loop's shaper over slots slots, nil for the synthetic
// prompt; conversations begin afresh in every loop.
func (wl *workload) loop(set *slotSet) *shaper {
	if wl == nil || !wl.w.Set() {
		return nil
	}
	sh := &shaper{wl: wl}
	if wl.w.Turns > 1 {
		sh.chats = make([]chat, len(set.conns))
		for _, c := range set.conns {
			c.details = true // the answers' text carries on the conversation
		}
	}
	return sh
}

// shaper shapes each request of one loop on its slot.
type shaper struct {
	wl    *workload
	chats []chat // one per slot, with turns
}

// chat is one slot's conversation: the turns sent and the history, as
// message elements, that the next turn carries.
type chat struct {
	turn    int
	history []byte
}

// before shapes request n on slot, and gives its turn (0 without
// conversations).
func (sh *shaper) before(slot int, o *requestOpts, n int64) int {
	wl := sh.wl
	if len(wl.prompts) > 0 {
		i := int(wl.next.Add(1)-1) % len(wl.prompts)
		o.messages = wl.prompts[i]
		if m := wl.maxTokens[i]; m > 0 {
			o.maxTokens = m
		}
	}
	if len(wl.prefixes) > 0 {
		o.prefix = wl.prefixes[slot%len(wl.prefixes)]
	}
	if sh.chats == nil {
		return 0
	}
	ch := &sh.chats[slot]
	if ch.turn >= wl.w.Turns {
		ch.turn, ch.history = 0, ch.history[:0]
	}
	ch.turn++
	o.history = ch.history
	return ch.turn
}

// after carries a conversation on with the answer to request n: its
// question and the answer's text join the history; a failed turn ends
// the conversation, and the slot's next request begins another.
func (sh *shaper) after(slot int, o requestOpts, out *outcome, n int64, answer []byte) {
	if sh.chats == nil {
		return
	}
	ch := &sh.chats[slot]
	if !out.ok() || out.interrupted {
		ch.turn, ch.history = 0, ch.history[:0]
		return
	}
	h := ch.history
	if len(h) > 0 {
		h = append(h, ',')
	}
	h = append(h, `{"role":"user","content":"`...)
	h = prompt.AppendText(h, o.seed, n, o.words)
	h = append(h, `"},{"role":"assistant","content":"`...)
	h = append(h, answer...)
	ch.history = append(h, `"}`...)
}

// prefixPairs is how many warm and how many cold requests the prefix
// check measures; prefixCheckRequests how many it sends in all, with the
// two that prime the cache.
const (
	prefixPairs         = 5
	prefixCheckRequests = 2*prefixPairs + 2
)

// prefixCheck measures the shared prefix alone, one request at a time
// on one connection: a request that primes group 1's system prompt (and
// sizes it), prefixPairs with system prompts of the same length no cache
// has seen (cold), one that primes it again and prefixPairs with it
// (warm), each with its own question of the plan's length. Cold runs
// first and the prefix is primed again after it, so a server whose slot
// keeps one prompt (llama-server) holds the shared one when the load
// begins, and the warm requests follow their priming.
func (r *runner) prefixCheck(ctx context.Context, wl *workload, first int64, timeout time.Duration) (*results.PrefixCheck, int64, error) {
	if wl == nil || len(wl.prefixes) == 0 {
		return nil, first, nil
	}
	n := first
	r.obs.logf("the shared prefix: %d requests with it and %d with a system prompt of the same length no cache has seen, one at a time", prefixPairs, prefixPairs)
	// The first request primes the cache and says how long the system
	// prompt came out, beside calibration's question alone: a prefix
	// more than a tenth off its length is made again at the measured
	// tokens per word, and primed again.
	cn := r.newConn()
	prime := func() outcome {
		o := r.opts
		o.prefix = wl.prefixes[0]
		out := cn.do(ctx, o, n, timeout)
		n++
		return out
	}
	if out := prime(); out.ok() && out.hasUsage {
		if cal := r.file.Local.Calibration; cal != nil && cal.PromptTokens != nil {
			got, want := out.promptTok-*cal.PromptTokens, wl.w.SharedPrefix
			if got > 0 && math.Abs(float64(got-want)) > 0.1*float64(want) {
				wl.prepare(float64(got) / float64(wl.prefixWords))
				prime()
			}
		}
	}
	cn.close()
	if ctx.Err() != nil {
		return nil, n, fmt.Errorf("the shared prefix check: %w", ErrInterrupted)
	}
	st := Stage{Name: "the shared prefix", Users: 1, Requests: 2*prefixPairs + 1, TokensEach: r.opts.maxTokens, Line: func(done, total int) string {
		return fmt.Sprintf("The shared prefix, cold then cached, one at a time (not measured) — %d of %d requests", done, total)
	}}
	set := r.openSlots(ctx, r.obs.Live.beginStage(st), false)
	defer set.close()
	colds := make([][]byte, prefixPairs)
	for i := range colds {
		colds[i] = systemMessage("cold "+newRef(), FreshSeed(), wl.prefixWords)
	}
	// Cold, then the prefix primed again, then warm, each its own loop
	// on the one slot, so a server that counts its cache only in
	// /metrics is read around the cold and the warm ones.
	from := n
	loop := func(total int, sys func(k int) []byte, at int64) (*loadRun, *results.PromptCache) {
		before, _ := r.readPrefix(ctx)
		lr := set.run(ctx, loadSpec{total: total, timeout: timeout, request: func(k int) (requestOpts, int64) {
			o := r.opts
			o.prefix = sys(k)
			return o, at + int64(k)
		}})
		return &lr, r.counterCache(ctx, before, total)
	}
	shared := func(int) []byte { return wl.prefixes[0] }
	coldRun, coldCounted := loop(prefixPairs, func(k int) []byte { return colds[k] }, from)
	loop(1, shared, from+prefixPairs)
	warmRun, warmCounted := loop(prefixPairs, shared, from+prefixPairs+1)
	n += 2*prefixPairs + 1
	if ctx.Err() != nil {
		return nil, n, fmt.Errorf("the shared prefix check: %w", ErrInterrupted)
	}
	pc := &results.PrefixCheck{Pairs: prefixPairs}
	oks := func(lr *loadRun) []*outcome {
		var out []*outcome
		for _, o := range lr.outcomes() {
			if o.ok() {
				out = append(out, o)
			} else {
				pc.Failed++
			}
		}
		return out
	}
	warm, cold := oks(warmRun), oks(coldRun)
	median := func(os []*outcome, f func(*outcome) float64) float64 {
		var xs []float64
		for _, o := range os {
			if v := f(o); v >= 0 {
				xs = append(xs, v)
			}
		}
		if len(xs) == 0 {
			return 0
		}
		slices.Sort(xs)
		return stats.Quantile(xs, 0.5)
	}
	ttft := func(o *outcome) float64 {
		if o.ttft < 0 {
			return -1
		}
		return round1(ms(o.ttft))
	}
	tokens := func(o *outcome) float64 {
		if !o.hasUsage {
			return -1
		}
		return float64(o.promptTok)
	}
	pc.WarmTTFTMs, pc.ColdTTFTMs = median(warm, ttft), median(cold, ttft)
	pc.WarmPromptTokens, pc.ColdPromptTokens = int(median(warm, tokens)), int(median(cold, tokens))
	pc.Cache, pc.ColdCache = requestCache(warm), requestCache(cold)
	if pc.Cache == nil {
		pc.Cache, pc.ColdCache = warmCounted, coldCounted
	}
	return pc, n, nil
}

// workloadFigures fills a rate level's lengths, cache share and turns
// from its loop: the lengths and the cache as the server counted them,
// TTFT by turn from the intended send, as the level's own.
func workloadFigures(lv *results.RateLevel, lr *loadRun) {
	var oks []*outcome
	var prompts, answers []float64
	for _, o := range lr.outcomes() {
		if o.interrupted || !o.ok() {
			continue
		}
		oks = append(oks, o)
		if o.hasUsage {
			prompts, answers = append(prompts, float64(o.promptTok)), append(answers, float64(o.complTok))
		}
	}
	lv.PromptTokens, lv.CompletionTokens = stats.Summarize(prompts), stats.Summarize(answers)
	lv.Cache = requestCache(oks)
	lv.ByTurn = byTurn(lr)
}

// byTurn is a loop's conversations turn by turn (turnFigures), nil
// without turns: the rate plan's levels and the Kovara plan's alike.
func byTurn(lr *loadRun) []results.TurnFigures {
	turns := map[int][]*outcome{}
	for _, o := range lr.outcomes() {
		if !o.interrupted && o.turn > 0 {
			turns[o.turn] = append(turns[o.turn], o)
		}
	}
	var out []results.TurnFigures
	for _, t := range slices.Sorted(maps.Keys(turns)) {
		out = append(out, turnFigures(t, turns[t]))
	}
	return out
}

// turnFigures are one turn's requests: TTFT from the intended send, the
// prompts' lengths and the cache as the server counted them.
func turnFigures(turn int, os []*outcome) results.TurnFigures {
	tf := results.TurnFigures{Turn: turn, Requests: len(os)}
	var oks []*outcome
	var ttft, prompts []float64
	for _, o := range os {
		if !o.ok() {
			continue
		}
		tf.OK++
		oks = append(oks, o)
		if o.ttft >= 0 {
			from := o.start // a closed loop's request is due as it leaves
			if o.due > 0 {
				from = o.due
			}
			ttft = append(ttft, ms(o.start-from+o.ttft))
		}
		if o.hasUsage {
			prompts = append(prompts, float64(o.promptTok))
		}
	}
	tf.TTFTMs, tf.PromptTokens, tf.Cache = stats.Summarize(ttft), stats.Summarize(prompts), requestCache(oks)
	return tf
}
