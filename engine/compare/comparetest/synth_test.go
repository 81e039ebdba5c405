package comparetest

import (
	"bytes"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// A synthetic file, and a slowed copy of it, are valid results files:
// they pass the schema as written and read back to the same bytes, so
// the app's Compare and the CLI's compare take them as they take a real
// run. The same seed gives the same file, byte for byte.
func TestSynthFileIsValid(t *testing.T) {
	t.Parallel()
	marshal := func(name string, f *results.File) []byte {
		t.Helper()
		data, err := results.Marshal(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, err := results.Decode(data)
		if err != nil {
			t.Fatalf("%s: read back: %v", name, err)
		}
		again, err := results.Marshal(back)
		if err != nil {
			t.Fatalf("%s: written again: %v", name, err)
		}
		if !bytes.Equal(again, data) {
			t.Errorf("%s: read back and written again, the file changed", name)
		}
		return data
	}
	levels := []int{1, 4}
	f := SynthFile(3, levels, Typical(0, 40, 8))
	data := marshal("synthetic", f)
	if again := marshal("the same seed", SynthFile(3, levels, Typical(0, 40, 8))); !bytes.Equal(again, data) {
		t.Error("the same seed gave another file")
	}
	if other := marshal("another seed", SynthFile(4, levels, Typical(0, 40, 8))); bytes.Equal(other, data) {
		t.Error("another seed gave the same file")
	}
	slowed, err := Slowed(f, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	marshal("slowed", slowed)
	marshal("resampled", Resampled(f, 1))

	for i, c := range levels {
		r, ls := f.Runs[i], f.SamplesAt(c)
		if ls == nil {
			t.Fatalf("level %d: no samples", c)
		}
		if r.Concurrency != c || len(ls.Requests) != 40 || ls.Slots != c || r.Requests != 40 || r.OutputTokens != 8 ||
			r.Metrics.RequestsOK != 40 || r.Metrics.TTFTMs == nil || r.Metrics.TTFTMs.N != 40 || r.Metrics.ITLMs.N != 40*7 {
			t.Errorf("level %d: record %+v, %d samples", c, r, len(ls.Requests))
		}
	}
}
