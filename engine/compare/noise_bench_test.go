package compare

import (
	"testing"

	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
)

// BenchmarkNoiseDefaultRun is the cost of comparing two default runs (3
// levels × 100 requests × 256 tokens each, about 76,800 gaps a run) with
// their raw samples: the table with every interval and the verdict's
// words, as Compare shows them, and the same from the files' bytes
// (docs/performance.md):
//
//	go test -run '^$' -bench Noise -benchmem ./engine/compare
func BenchmarkNoiseDefaultRun(b *testing.B) {
	s := comparetest.Typical(0, 100, 256)
	files := []*results.File{comparetest.SynthFile(1, std, s), comparetest.SynthFile(2, std, s)}
	compared := func(b *testing.B, files []*results.File) {
		v, rows := Compared(files, nil)
		if len(v.Changes) == 0 || rows[0].Cells[1].Noise == NoiseUnknown {
			b.Fatal("nothing was judged")
		}
	}
	b.Run("compare", func(b *testing.B) {
		for range b.N {
			compared(b, files)
		}
	})
	// From the two files on disk, as Compare opens them: read (and
	// checked against the schema) first.
	var data [][]byte
	for _, f := range files {
		d, err := results.Marshal(f)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d)
	}
	b.Run("decode+compare", func(b *testing.B) {
		b.SetBytes(int64(len(data[0]) + len(data[1])))
		for range b.N {
			var read []*results.File
			for _, d := range data {
				f, err := results.Decode(d)
				if err != nil {
					b.Fatal(err)
				}
				read = append(read, f)
			}
			compared(b, read)
		}
	})
}

// BenchmarkNoiseLevel is one run's level of 32 users × 100 requests ×
// 256 tokens resampled.
func BenchmarkNoiseLevel(b *testing.B) {
	f := comparetest.SynthFile(1, []int{32}, comparetest.Typical(0, 100, 256))
	ls := f.SamplesAt(32)
	b.ResetTimer()
	for range b.N {
		if _, err := spreadOf(ls); err != nil {
			b.Fatal(err)
		}
	}
}
