package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/storage"
)

// manyRuns fills the harness's library with n runs of the Python CLI's
// file (each its own time, seed and model), imported as a person moving
// their history would.
func (h *harness) manyRuns(n int) {
	h.t.Helper()
	data, err := os.ReadFile("../engine/results/testdata/python_cli.json")
	if err != nil {
		h.t.Fatal(err)
	}
	src := h.t.TempDir()
	for i := 0; i < n; i++ {
		at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 17 * time.Minute)
		s := strings.Replace(string(data), `"created_at": "2026-10-29T12:00:00.123456+00:00"`, `"created_at": "`+at.Format(time.RFC3339)+`"`, 1)
		s = strings.Replace(s, `"seed": 7`, fmt.Sprintf(`"seed": %d`, 1000+i), 1)
		s = strings.Replace(s, `"llama3.1:8b"`, fmt.Sprintf(`"model-%d:%db"`, i%37, 1+i%70), -1)
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("%05d.json", i)), []byte(s), 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
	r, err := h.u.lib.ImportFiles(context.Background(), storage.ImportPaths([]string{src}), nil)
	if imported, _, bad := r.Count(); err != nil || imported != n {
		h.t.Fatalf("%d imported, %d unreadable (%s), %v", imported, bad, r.Sentence(), err)
	}
}

// BenchmarkHistory10000 is History with 10,000 runs at the window's
// default size: opening it (the list read and laid out), one keystroke in
// the search, a kind chosen, a scroll of a page, a run selected.
func BenchmarkHistory10000(b *testing.B) {
	h := newHarness(b)
	h.manyRuns(10000)
	hs := h.u.historyScreen
	h.win.Resize(defaultWindowSize)
	hs.reload()
	b.Run("open", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			h.u.tabs.SelectIndex(0)
			h.u.tabs.SelectIndex(1)
			if len(hs.shown) != 10000 {
				b.Fatalf("%d shown", len(hs.shown))
			}
		}
	})
	b.Run("search", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			hs.search.SetText(fmt.Sprintf("model-%d:", i%37))
			if len(hs.shown) == 0 {
				b.Fatal("search found nothing")
			}
		}
		hs.search.SetText("")
	})
	b.Run("kind", func(b *testing.B) {
		b.ReportAllocs()
		kinds := []string{storage.KindName("protocol"), kindAll}
		for i := 0; i < b.N; i++ {
			hs.kindSelect.SetSelected(kinds[i%2])
		}
		hs.kindSelect.SetSelected(kindAll)
	})
	b.Run("scroll", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			hs.table.ScrollTo(widget.TableCellID{Row: (i * 97) % 10000, Col: 1})
			hs.table.Refresh()
		}
	})
	b.Run("compare", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			hs.selected = map[string]bool{hs.all[i%5000].ID: true, hs.all[5000+i%5000].ID: true}
			hs.onCompare()
			if n := len(h.u.compareScreen.files); n != 2 {
				b.Fatalf("compare shows %d runs", n)
			}
		}
		hs.selected = map[string]bool{}
	})
	b.Run("select", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			hs.table.Select(widget.TableCellID{Row: i % 10000, Col: 0})
		}
	})
}
