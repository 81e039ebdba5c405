package compare

import (
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// BenchmarkNoiseDefaultRun is the cost of comparing two default runs (3
// levels × 100 requests × 256 tokens each, about 76,800 gaps a run) with
// their raw samples: the table with every interval and the verdict's
// words, as Compare shows them (docs/performance.md):
//
//	go test -run '^$' -bench Noise -benchmem ./engine/compare
func BenchmarkNoiseDefaultRun(b *testing.B) {
	s := typical(0, 100, 256)
	files := []*results.File{synthFile(1, std, s), synthFile(2, std, s)}
	b.ResetTimer()
	for range b.N {
		v, rows := Compared(files, nil)
		if len(v.Changes) == 0 || rows[0].Cells[1].Noise == NoiseUnknown {
			b.Fatal("nothing was judged")
		}
	}
}

// BenchmarkNoiseLevel is one run's level of 32 users × 100 requests ×
// 256 tokens resampled.
func BenchmarkNoiseLevel(b *testing.B) {
	f := synthFile(1, []int{32}, typical(0, 100, 256))
	ls := f.SamplesAt(32)
	b.ResetTimer()
	for range b.N {
		if _, err := spreadOf(ls); err != nil {
			b.Fatal(err)
		}
	}
}
