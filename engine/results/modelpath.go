package results

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// A model is published by its name, never by where it lies on someone's
// disk. llama-server started without --alias names its model by its -m
// path ("/home/alice/models/tiny.gguf"), vLLM a local folder by its path
// ("/models/Qwen3-8B"): the folder says whose machine it was, its last
// element is the model. One rule for every surface that publishes or
// shares a model's name: Export, `export`, `validate`, the reports and
// Compare's and the charts' run names.

// ModelName is the model id as it is published: the last element of a
// path on a disk (ModelFolder), else the id unchanged. A hub id
// ("Qwen/Qwen3-8B") is no path and stays whole.
func ModelName(id string) string {
	return strings.TrimPrefix(id, ModelFolder(id))
}

// ModelFolder is the folder of a model id that is a path on a disk, with
// its last separator, or "" for any other id. A path is absolute (/…, a
// drive letter, \\server\…, ~), relative by its own words (./, ../),
// written with Windows' separator, or a name with a folder ending in a
// model file's extension ("models/tiny.gguf", as -m models/tiny.gguf
// reports it). A trailing separator ("/models/Qwen3-8B/") is the folder's
// own and is left with the name.
func ModelFolder(id string) string {
	name := strings.TrimRight(id, `/\`)
	if name == "" || !isPath(name) {
		return ""
	}
	i := strings.LastIndexAny(name, `/\`)
	if i < 0 {
		return ""
	}
	return name[:i+1]
}

// modelFileExt are the extensions of model files people name with -m.
var modelFileExt = []string{".gguf", ".ggml", ".bin", ".safetensors", ".pt", ".pth", ".onnx", ".llamafile"}

// isPath reports whether s, one word, is a path on a disk with a folder
// in it (see ModelFolder).
func isPath(s string) bool {
	if !strings.ContainsAny(s, `/\`) {
		return false
	}
	switch {
	case strings.HasPrefix(s, "/") && strings.LastIndexByte(s, '/') > 0 && !strings.HasPrefix(s, "//"):
		return true
	case strings.HasPrefix(s, "~"), strings.HasPrefix(s, "./"), strings.HasPrefix(s, "../"),
		strings.HasPrefix(s, `.\`), strings.HasPrefix(s, `..\`), strings.HasPrefix(s, `\\`):
		return true
	case len(s) > 2 && isLetter(s[0]) && s[1] == ':' && (s[2] == '\\' || s[2] == '/'):
		return true
	case strings.Contains(s, `\`):
		return true
	}
	lower := strings.ToLower(s)
	for _, ext := range modelFileExt {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// PathIn is the first word of s that is a path on a disk (isPath), as the
// publish check refuses one anywhere in a record: a model's path names
// its owner's folders, and so does any other path a field picked up.
func PathIn(s string) (string, bool) {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '"' || r == '\'' || r == '(' || r == ')' || r == ',' || r == ';' || r == '='
	}) {
		if isPath(strings.TrimRight(w, `/\.:`)) {
			return w, true
		}
	}
	return "", false
}

// pathReason is the publish check's sentence for a path found at ptr.
func pathReason(ptr, match string) string {
	const limit = 60
	if utf8.RuneCountInString(match) > limit {
		match = string([]rune(match)[:limit]) + "…"
	}
	return fmt.Sprintf("at %s: %q is a path on your disk; paths are never published (a model is published by its file's name).", ptr, match)
}
