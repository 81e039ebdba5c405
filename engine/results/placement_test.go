package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readLog(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "serverlogs", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// Start-up logs of real llama.cpp servers (testdata/serverlogs,
// SOURCES.md): a CPU build says no offload and is said to have no GPU; a
// partial offload is a split model, a problem naming the layers on the
// CPU; a full offload is nothing to say.
func TestPlacementFromLog(t *testing.T) {
	for _, c := range []struct {
		log     string
		gpu     int
		total   int
		noGPU   bool
		problem bool
		words   string
	}{
		{"llamacpp-b4748-cpu.log", 0, 0, true, false, "llama.cpp has no GPU to offload to: the whole model ran on the CPU"},
		{"llamacpp-partial-offload.log", 1, 35, false, true, "llama.cpp ran 34 of this model's 35 layers on the CPU: these figures are a split model's"},
		{"ollama-full-offload.log", 81, 81, false, false, ""},
	} {
		p, ok := PlacementFromLog(readLog(t, c.log))
		if !ok || p.LayersGPU != c.gpu || p.LayersTotal != c.total || p.NoGPU != c.noGPU || p.Source != PlacementServerLog {
			t.Errorf("%s: %+v (%v)", c.log, p, ok)
			continue
		}
		words, problem := p.Words(FamilyLlamaCpp)
		if problem != c.problem || !strings.HasPrefix(words, c.words) || (c.words == "") != (words == "") {
			t.Errorf("%s: said %q (problem %v), want %q (problem %v)", c.log, words, problem, c.words, c.problem)
		}
	}
	if _, ok := PlacementFromLog([]string{"main: server is listening on http://127.0.0.1:8080"}); ok {
		t.Error("a log cut before the model loaded says where it ran")
	}
}

func TestPlacementOf(t *testing.T) {
	for _, c := range []struct {
		size, vram int64
		ok         bool
		share      float64
	}{{100, 100, true, 0}, {100, 62, true, 0.38}, {100, 0, true, 1}, {0, 0, false, 0}, {100, 120, false, 0}} {
		p, ok := PlacementOf(c.size, c.vram)
		if ok != c.ok || (ok && (p.CPUShare < c.share-1e-9 || p.CPUShare > c.share+1e-9)) {
			t.Errorf("PlacementOf(%d, %d) = %+v, %v", c.size, c.vram, p, ok)
		}
	}
}
