package results

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModelName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ id, want string }{
		{"/work/servers/models/tiny.gguf", "tiny.gguf"}, // llama-server b4748 without --alias
		{"/home/alice/models/Qwen3-8B-Q4_K_M.gguf", "Qwen3-8B-Q4_K_M.gguf"},
		{`C:\Users\bob\models\m.gguf`, "m.gguf"},
		{"C:/Users/bob/m.gguf", "m.gguf"},
		{`\\nas\models\m.gguf`, "m.gguf"},
		{"~/m/q4.gguf", "q4.gguf"},
		{"./models/tiny.gguf", "tiny.gguf"},
		{"../tiny.gguf", "tiny.gguf"},
		{"models/tiny.gguf", "tiny.gguf"}, // -m models/tiny.gguf
		{"/models/Qwen3-8B", "Qwen3-8B"},  // vLLM serving a folder
		{"/models/Qwen3-8B/", "Qwen3-8B/"},
		{"Qwen/Qwen3-8B", "Qwen/Qwen3-8B"}, // a hub id is no path
		{"hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M", "hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M"},
		{"models--Qwen--Qwen3-8B/snapshots/abc", "models--Qwen--Qwen3-8B/snapshots/abc"},
		{"tiny.gguf", "tiny.gguf"},
		{"qwen2.5-coder:32b", "qwen2.5-coder:32b"},
		{"/", "/"},
		{"", ""},
	} {
		if got := ModelName(tc.id); got != tc.want {
			t.Errorf("ModelName(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}

// TestPublishedModelIsItsName: a results file written against the real
// llama-server b4748 started without --alias names its model by its -m
// path in model_id and environment.server_model; what Export, `export`
// and `validate` publish names the file alone, every other byte as
// written.
func TestPublishedModelIsItsName(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "plans", "planstest", "testdata", "llamacpp-b4748", "kovara.json"))
	if err != nil {
		t.Fatal(err)
	}
	const path = "/work/servers/models/"
	if !bytes.Contains(data, []byte(`"model_id": "`+path+`tiny.gguf"`)) {
		t.Fatalf("the capture no longer names its model by its path")
	}
	out, reasons := PublishCheck(data)
	if out == nil {
		t.Fatalf("refused: %q", reasons)
	}
	if bytes.Contains(out, []byte(path)) || bytes.Contains(out, []byte("/work/")) {
		t.Errorf("the published document still holds the model's folder:\n%s", out)
	}
	want := 0
	for _, raw := range mustRuns(t, data) {
		want += bytes.Count(raw, []byte(`"`+path+`tiny.gguf"`))
	}
	if got := bytes.Count(out, []byte(`"tiny.gguf"`)); got != want || want < 2 {
		t.Errorf("the model's name is published %d times, want %d (model_id and server_model of every run)", got, want)
	}
	// The same bytes, the path aside: publishedModel touches nothing else.
	for _, raw := range mustRuns(t, data) {
		got := publishedModel(raw)
		if want := bytes.ReplaceAll(raw, []byte(path), nil); !bytes.Equal(got, want) {
			t.Errorf("publishedModel changed more than the model fields:\n got %s\nwant %s", got, want)
		}
	}
}

// TestPublishRefusesAPath: a path anywhere else in a record is refused,
// the field named.
func TestPublishRefusesAPath(t *testing.T) {
	t.Parallel()
	good := readFixture(t, "hardware.json")
	for _, tc := range []struct{ spot, value string }{
		{"/runs/0/profile", "/home/alice/bench/profile.yaml"},
		{"/runs/0/accelerator", `C:\Users\bob\gpu.txt`},
		{"/runs/1/precision", "see ~/notes/q4.md"},
		{"/runs/0/environment/os", "linux (/home/alice)"},
	} {
		_, reasons := PublishCheck(edit(t, good, setting(tc.spot, tc.value)))
		if len(reasons) == 0 || !strings.Contains(strings.Join(reasons, " "), "at "+tc.spot+": ") || !strings.Contains(strings.Join(reasons, " "), "path on your disk") {
			t.Errorf("%s = %q: reasons %q, want the field named as holding a path", tc.spot, tc.value, reasons)
		}
	}
}

func mustRuns(t *testing.T, data []byte) [][]byte {
	t.Helper()
	runs, ok := rawRuns(data)
	if !ok || len(runs) == 0 {
		t.Fatal("no runs")
	}
	out := make([][]byte, len(runs))
	for i, r := range runs {
		out[i] = r
	}
	return out
}
