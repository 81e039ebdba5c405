package shellwords

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		want []string
		err  string
	}{
		{"llama-server -m /models/q4.gguf -np 8 --port 8081", []string{"llama-server", "-m", "/models/q4.gguf", "-np", "8", "--port", "8081"}, ""},
		{`  ollama   serve  `, []string{"ollama", "serve"}, ""},
		{`llama-server -m '/models/my model.gguf' --alias "big one"`, []string{"llama-server", "-m", "/models/my model.gguf", "--alias", "big one"}, ""},
		{`a\ b "q\"uote" 'it'\''s'`, []string{"a b", `q"uote`, "it's"}, ""},
		{`x ""`, []string{"x", ""}, ""},
		{"", nil, "empty"},
		{"llama-server > log.txt", nil, `">"`},
		{"llama-server -m a.gguf | tee log", nil, `"|"`},
		{"a; rm -rf /", nil, `";"`},
		{"a && b", nil, `"&"`},
		{"llama-server -m $HOME/a.gguf", nil, `"$"`},
		{`llama-server -m "$HOME/a.gguf"`, nil, "double quotes"},
		{"echo `id`", nil, "\"`\""},
		{"llama-server 'unclosed", nil, "single quote"},
		{`llama-server "unclosed`, nil, "double quote"},
		{`llama-server \`, nil, "backslash"},
	}
	for _, tt := range tests {
		got, err := Split(tt.line)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Split(%q) = %q, %v; want an error saying %s", tt.line, got, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
}

// TestJoinIsWhatTheShellReads: a real sh reads Join's line back as the
// same words, and Split reads it the same, for words with every kind of
// character a path or an argument may hold.
func TestJoinIsWhatTheShellReads(t *testing.T) {
	t.Parallel()
	words := []string{"printf", `%s\n`, "plain", "with space", "it's", `dq"`, "$HOME", "`id`", "a;b", "", "-np=8", "ünï", `back\slash`}
	line := Join(words)
	out, err := exec.Command("sh", "-c", line).Output()
	if err != nil {
		t.Fatalf("sh -c %q: %v", line, err)
	}
	if got, want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"), words[2:]; !slices.Equal(got, want) {
		t.Errorf("sh read %q, want %q", got, want)
	}
	if got, err := Split(line); err != nil || !slices.Equal(got, words) {
		t.Errorf("Split of the joined line: %q %v, want %q", got, err, words)
	}
}
