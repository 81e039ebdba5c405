package engine

import "context"

// The Kovara plan with a workload (a shared prefix, conversations): its
// levels send the workload's requests through the same loop as the rate
// plan (workload.go); the warmup stays the method's synthetic prompt.
// Such a file keeps all of it in local and is never published.

// prepareWorkload builds the workload's system prompts once calibration
// has said the tokens a word makes, and with a shared prefix measures it
// alone (checks requests) before the first level. Its requests are
// numbered after the last level's, so no prompt of the method repeats.
func (r *kovaraRun) prepareWorkload(ctx context.Context, checks int) error {
	r.wl.prepare(r.tokensPerWord())
	if checks > 0 {
		first := levelFirstNumber(r.plan, len(r.plan.Concurrency))
		pc, _, err := r.prefixCheck(ctx, r.wl, first, r.plan.Timeout)
		if err != nil {
			// Before the first level, as an interrupted warmup: nothing
			// measured to keep.
			r.obs.Live.setPhase(PhaseStopped)
			return err
		}
		r.file.Local.PrefixCheck = pc
		r.obs.Live.prepared(checks)
		r.obs.logf("%s", pc.Words())
	}
	// The words, as the check settled them.
	r.file.Local.Workload = r.wl.settings()
	return nil
}
