// Package comparetest makes results files for the tests of the packages
// that show comparisons (engine/compare, the CLI, the app): a run drawn
// from a seeded generator with raw samples of a known distribution
// (SynthFile), the same on every machine, and a run as if measured on a
// server that was some factor slower or faster (Slowed), its raw samples
// and its records alike, so a test knows the true change. A test that
// asserts what a comparison concludes takes its runs from here, never
// from live timing. It imports engine/results and engine/stats only, so
// engine/compare's own tests can use it.
package comparetest

import (
	"encoding/json"
	"math"

	"github.com/kovara/desktop/engine/results"
)

// Slowed is a copy of f whose every measured time is factor times as
// long (factor 1.5: 50 % slower; 0.5: twice as fast): each level's
// window, each request's send and end offsets, TTFT and inter-chunk gaps
// in the raw samples, and in the records the time distributions, the
// level's duration and, divided by factor, its throughputs. Counts and
// tokens stay. f itself is left as it is.
func Slowed(f *results.File, factor float64) (*results.File, error) {
	data, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	out := new(results.File)
	if err := json.Unmarshal(data, out); err != nil {
		return nil, err
	}
	stretch := func(us int64) int64 { return int64(math.Round(float64(us) * factor)) }
	for i := range out.Local.Levels {
		s := out.Local.Levels[i].Samples
		if s == nil {
			continue
		}
		at := func(us int64) int64 { return s.StartUs + stretch(us-s.StartUs) }
		for j := range s.Requests {
			r := &s.Requests[j]
			gaps, err := results.DecodeGaps(nil, r.Gaps)
			if err != nil {
				return nil, err
			}
			for k := range gaps {
				gaps[k] = stretch(gaps[k])
			}
			r.StartUs, r.EndUs, r.Gaps = at(r.StartUs), at(r.EndUs), results.EncodeGaps(gaps)
			if r.TTFTUs >= 0 {
				r.TTFTUs = stretch(r.TTFTUs)
			}
		}
		s.EndUs = at(s.EndUs)
	}
	for i := range out.Runs {
		m := &out.Runs[i].Metrics
		m.DurationS *= factor
		m.RequestThroughput /= factor
		m.OutputThroughput /= factor
		for _, d := range []*results.Dist{m.TTFTMs, m.ITLMs, m.LatencyMs, m.TPOTMs} {
			scale(d, factor)
		}
	}
	return out, nil
}

func scale(d *results.Dist, factor float64) {
	if d == nil {
		return
	}
	d.Mean, d.Min, d.P50, d.Max = d.Mean*factor, d.Min*factor, d.P50*factor, d.Max*factor
	for _, p := range []*float64{d.P95, d.P99} {
		if p != nil {
			*p *= factor
		}
	}
}
