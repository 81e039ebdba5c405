package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// An Ollama with CPUShare set says it in /api/ps (size_vram the GPU's
// part of size) and, for a split model, decodes 1 + 9 × the share times
// slower; all on the CPU or all on the GPU decodes at its own pace.
func TestSplitModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		share float64
		vram  int64
		slow  float64
	}{{0, 80036000, 1}, {0.5, 40018000, 5.5}, {1, 0, 1}} {
		cfg := Config{Personality: Ollama, TokenInterval: 2 * time.Millisecond, PrefillRate: 1e6, CPUShare: c.share}
		srv, url := startSim(t, cfg)
		resp, err := http.Get(url + "/api/ps")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var ps struct {
			Models []struct {
				Size     int64 `json:"size"`
				SizeVRAM int64 `json:"size_vram"`
			} `json:"models"`
		}
		if err := json.Unmarshal(body, &ps); err != nil || len(ps.Models) != 1 || ps.Models[0].SizeVRAM != c.vram {
			t.Errorf("share %.1f: /api/ps %s (%v), want size_vram %d", c.share, body, err, c.vram)
		}
		gap := (&run{s: srv, j: &job{}}).interval()
		if want := time.Duration(c.slow * float64(2*time.Millisecond)); gap != want {
			t.Errorf("share %.1f: interval %v, want %v", c.share, gap, want)
		}
	}
}
