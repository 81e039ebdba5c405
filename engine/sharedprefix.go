package engine

import (
	"context"

	"github.com/kovara/desktop/engine/prompt"
)

// sharedPairRequests are the request numbers of the shared-prefix pair:
// calibration's first two, sent with no words, so no number is added to
// the method's and the prompts that follow are unchanged.
var sharedPairRequests = [2]int64{prompt.CalibrationRequest(0), prompt.CalibrationRequest(1)}

// measureShared sends the shared-prefix pair, after the probe and before
// calibration: two prompts under the run's seed with no words
// ("<instruction> Request 1:" and "… Request 2:"), max_tokens 1, one after
// the other on one connection. They differ only after "Request", so what
// the second took from the server's cache is what every request of the
// method shares by design: the chat template and the instruction. Only
// what a level took beyond it is a problem (results.PromptCacheHit).
//
// Both are short on purpose: llama.cpp gives a request the slot whose
// cached prompt it covers most (as a share of that prompt, b4748's
// get_available_slot), so a second short prompt lands on the first's
// slot, where a long one would go to an empty slot and say nothing.
//
// A server that says nothing of its cache leaves the figure unknown, and
// a failed request only costs the figure: the run goes on.
func (r *runner) measureShared(ctx context.Context) error {
	if !r.usage && !r.prefix {
		return nil
	}
	cn := r.newConn()
	defer cn.close()
	opts := r.opts
	opts.maxTokens, opts.words = 1, 0
	var before PrefixCounters
	var out outcome
	for i, n := range sharedPairRequests {
		if i == 1 && r.prefix {
			before, _ = r.fetchPrefix(ctx)
		}
		out = cn.do(ctx, opts, n, checkTimeout(r.ep))
		if out.interrupted {
			return ErrInterrupted
		}
		if !out.ok() {
			r.obs.logf("the shared-prefix request %d of 2 failed (%s: %s): what every request shares by design is not measured, and all of a level's cached prompt tokens count", i+1, out.class, out.msg)
			return nil
		}
	}
	c, ok := sharedTokens(out)
	if !ok && r.prefix {
		if after, aok := r.fetchPrefix(ctx); aok {
			var cached int64
			_, cached, ok = after.Since(before)
			c = int(cached)
		}
	}
	if ok {
		r.shared, r.sharedOK = c, true
		r.obs.logf("every request shares %d prompt tokens by design (chat template and instruction), measured from the server's cache", c)
	}
	return nil
}

// sharedTokens is what one answer says it took from the server's cache,
// from the best of its per-request counts, as requestCache ranks them.
func sharedTokens(o outcome) (int, bool) {
	switch {
	case o.hasCached && o.promptTok > 0:
		return o.cachedTok, true
	case o.hasCacheN:
		return o.timingsCache, true
	}
	return o.cacheFromPromptN()
}
