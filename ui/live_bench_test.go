package ui

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine"
)

// BenchmarkLiveRefresh256 is one live-view refresh during a 256-stream
// level after a minute of running: fold a snapshot in (256 streams at
// 50 tok/s bring ~3,200 gaps and ~12 finished requests per quarter
// second), then update the labels and re-render the three charts at
// 1180×820-window sizes. At 4 refreshes a second, the share of one core is
// 4 × (time per op) / 1 s.
func BenchmarkLiveRefresh256(b *testing.B) {
	a := test.NewApp()
	defer a.Quit()
	v := newLiveView("bench", func() {})
	w := a.NewWindow("bench")
	w.SetContent(v.content)
	w.Resize(fyne.NewSize(1180, 820))
	p := PaletteFor(a.Settings().Theme(), a.Settings().ThemeVariant())
	rng := rand.New(rand.NewPCG(1, 2))
	var d liveData
	snap := func(i int) engine.Snapshot {
		s := engine.Snapshot{
			At: time.Duration(i) * liveRefresh, Phase: engine.PhaseMeasure, Level: 1, Levels: 1, Concurrency: 256,
			Line: fmt.Sprintf("Level 1 of 1 — concurrency 256 — %d of 100000 requests", 12*i), StageName: "level 1",
			LevelDone: 12 * i, LevelTotal: 100000, OverallDone: 12 * i, OverallTotal: 100000,
			OK: 12 * i, Tokens: int64(3200 * i), LevelElapsed: time.Duration(i) * liveRefresh,
		}
		for j := 0; j < 12; j++ {
			s.TTFT = append(s.TTFT, 80+rng.Float64()*40)
		}
		for j := 0; j < 3200; j++ {
			s.ITL = append(s.ITL, float32(20+rng.NormFloat64()))
		}
		return s
	}
	for i := 1; i <= 240; i++ { // a minute already shown
		d.add(snap(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.add(snap(241 + i))
		v.update(&d, p)
	}
	b.StopTimer()
	b.ReportMetric(4*float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e9*100, "%core@4Hz")
}
