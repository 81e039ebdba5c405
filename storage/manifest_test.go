package storage

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/setup"
)

const exampleManifestPath = "../assets/kovara.example.yaml"

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func mustParseManifest(t *testing.T, src string) *Manifest {
	t.Helper()
	m, err := ParseManifest([]byte(src), "kovara.yaml")
	if err != nil {
		t.Fatalf("ParseManifest: %v", err)
	}
	return m
}

func manifestProblems(t *testing.T, err error) []Problem {
	t.Helper()
	if err == nil {
		t.Fatal("got no error, want a *ManifestError")
	}
	var me *ManifestError
	if !errors.As(err, &me) {
		t.Fatalf("got %T (%v), want a *ManifestError", err, err)
	}
	return me.Problems
}

func ptr(n int) *int { return &n }

func intOrNil(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestManifestExampleIsValid(t *testing.T) {
	t.Parallel()
	m, err := LoadManifest(exampleManifestPath)
	if err != nil {
		t.Fatalf("the shipped example does not parse:\n%v", err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"model id", m.Model.ID, "Qwen/Qwen3-8B"},
		{"model revision length", len(m.Model.Revision), 40},
		{"engine", m.Engine.Name, "vllm"},
		{"engine version", m.Engine.Version, "0.11.0"},
		{"image has a digest", strings.Contains(m.Engine.Image, "@sha256:"), true},
		{"accelerator", m.Hardware.Accelerator, "NVIDIA GeForce RTX 4090"},
		{"gpu count", intOrNil(m.Hardware.GPUCount), 1},
		{"precision", m.Precision, "bf16"},
		{"tensor", intOrNil(m.Parallelism.Tensor), 1},
		{"pipeline", intOrNil(m.Parallelism.Pipeline), 1},
		{"profiles", strings.Join(m.ProfileNames(), ","), "default,long-context"},
		{"serve names the model", strings.HasPrefix(m.Serve, "vllm serve Qwen/Qwen3-8B"), true},
		{"serve is one line", strings.Contains(m.Serve, "\n"), false},
		{"hash", hex64.MatchString(m.ContentHash), true},
		{"revision", m.Revision, "r" + m.ContentHash[:12]},
		{"revision declared", m.RevisionDeclared, false},
		{"path", m.Path, exampleManifestPath},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}
	wantProfiles := map[string]ManifestProfile{
		"default":      {InputTokens: ptr(1024), OutputTokens: ptr(256), Concurrency: []int{1, 8, 32}, Requests: ptr(100), Warmup: ptr(4)},
		"long-context": {InputTokens: ptr(8192), OutputTokens: ptr(512), Concurrency: []int{1, 4}, Requests: ptr(40), Warmup: ptr(2)},
	}
	for name, want := range wantProfiles {
		if got := describeProfile(m.Profiles[name]); got != describeProfile(want) {
			t.Errorf("profile %s: got %s, want %s", name, got, describeProfile(want))
		}
	}
	// The example's default profile is the method's defaults written out.
	plan := setup.DefaultPlan()
	if err := m.ApplyProfile(&plan, ""); err != nil {
		t.Fatal(err)
	}
	def := setup.DefaultPlan()
	if plan.InputTokens != def.InputTokens || plan.OutputTokens != def.OutputTokens || !slices.Equal(plan.Concurrency, def.Concurrency) || plan.Requests != def.Requests || plan.Warmup != def.Warmup {
		t.Errorf("the example's default profile differs from the method defaults: %+v", plan)
	}
	if err := plan.Validate(); err != nil {
		t.Errorf("the example's default profile gives an invalid plan: %v", err)
	}
}

func TestManifestDocExampleIsValid(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/manifest.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(doc), "\r\n", "\n")
	_, rest, ok := strings.Cut(text, "## Annotated example")
	if !ok {
		t.Fatal("docs/manifest.md has no annotated example")
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("the annotated example is not a yaml code block")
	}
	m, err := ParseManifest([]byte(example), "docs/manifest.md")
	if err != nil {
		t.Fatalf("the documented example does not parse:\n%v", err)
	}
	if got := strings.Join(m.ProfileNames(), ","); got != "default,long-context" {
		t.Errorf("profiles %s", got)
	}
}

func TestParseManifestValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, m *Manifest)
	}{
		{
			name: "only a model",
			src:  "model: {id: m}\n",
			check: func(t *testing.T, m *Manifest) {
				if m.Model.ID != "m" || m.Profiles != nil || m.Hardware.GPUCount != nil || m.Engine != (ManifestEngine{}) {
					t.Errorf("got %+v", m)
				}
			},
		},
		{
			name: "numbers and dates in text fields are kept as written",
			src:  "model: {id: 8, revision: 2024-01-01}\nengine: {name: x, version: 0.10}\nprecision: 4.0\n",
			check: func(t *testing.T, m *Manifest) {
				got := []string{m.Model.ID, m.Model.Revision, m.Engine.Version, m.Precision}
				want := []string{"8", "2024-01-01", "0.10", "4.0"}
				if !slices.Equal(got, want) {
					t.Errorf("got %q, want %q", got, want)
				}
			},
		},
		{
			name: "serve may span lines",
			src:  "model: {id: m}\nserve: |\n  llama-server -m /models/q.gguf \\\n    -ngl 99\n",
			check: func(t *testing.T, m *Manifest) {
				if want := "llama-server -m /models/q.gguf \\\n  -ngl 99\n"; m.Serve != want {
					t.Errorf("serve: got %q, want %q", m.Serve, want)
				}
			},
		},
		{
			name: "a profile may set only some fields",
			src:  "model: {id: m}\nprofiles:\n  short:\n    output_tokens: 64\n",
			check: func(t *testing.T, m *Manifest) {
				p := m.Profiles["short"]
				if intOrNil(p.OutputTokens) != 64 || p.InputTokens != nil || p.Concurrency != nil || p.Requests != nil || p.Warmup != nil {
					t.Errorf("got %s", describeProfile(p))
				}
			},
		},
		{
			name: "warmup 0 and requests equal to the highest level",
			src:  "model: {id: m}\nprofiles: {p: {concurrency: [4, 2], requests: 4, warmup: 0}}\n",
			check: func(t *testing.T, m *Manifest) {
				p := m.Profiles["p"]
				if intOrNil(p.Warmup) != 0 || intOrNil(p.Requests) != 4 || !slices.Equal(p.Concurrency, []int{4, 2}) {
					t.Errorf("got %s", describeProfile(p))
				}
			},
		},
		{
			name: "data parallel: more GPUs than tensor × pipeline",
			src:  "model: {id: m}\nhardware: {gpu_count: 8}\nparallelism: {tensor: 2, pipeline: 2}\n",
			check: func(t *testing.T, m *Manifest) {
				if intOrNil(m.Hardware.GPUCount) != 8 {
					t.Errorf("gpu_count: got %v", intOrNil(m.Hardware.GPUCount))
				}
			},
		},
		{
			name: "a UTF-8 byte order mark is fine",
			src:  "\ufeffmodel: {id: m}\n",
			check: func(t *testing.T, m *Manifest) {
				if m.Model.ID != "m" {
					t.Errorf("got %q", m.Model.ID)
				}
			},
		},
		{
			name: "an anchor that nobody aliases is harmless",
			src:  "model: &m {id: m}\n",
			check: func(t *testing.T, m *Manifest) {
				if m.Model.ID != "m" {
					t.Errorf("got %q", m.Model.ID)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.check(t, mustParseManifest(t, tt.src))
		})
	}
}

func TestManifestTestdataFiles(t *testing.T) {
	t.Parallel()
	m, err := LoadManifest(filepath.Join("testdata", "manifests", "declared-revision.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Revision != "v2.1" || !m.RevisionDeclared || intOrNil(m.Parallelism.Tensor) != 2 || m.Parallelism.Pipeline != nil {
		t.Errorf("got revision %q (declared %v), tensor %v, pipeline %v", m.Revision, m.RevisionDeclared, intOrNil(m.Parallelism.Tensor), intOrNil(m.Parallelism.Pipeline))
	}
	if _, err := LoadManifest(filepath.Join("testdata", "manifests", "minimal.yaml")); err != nil {
		t.Error(err)
	}
}

// TestManifestProblems holds each kind of mistake to the exact line and
// key it names.
func TestManifestProblems(t *testing.T) {
	t.Parallel()
	type want struct {
		line int
		key  string
		msg  string // a part of the message
	}
	tests := []struct {
		name string
		src  string
		want []want
	}{
		{"unknown top-level key with a suggestion", "model: {id: m}\nprecission: bf16\n",
			[]want{{2, "precission", `unknown key (did you mean "precision"?)`}}},
		{"unknown key with nothing close lists the known keys", "model: {id: m}\nfoo: 1\n",
			[]want{{2, "foo", "known keys here: name, revision, model"}}},
		{"a known key in the wrong place", "model: {id: m}\ngpu_count: 2\n",
			[]want{{2, "gpu_count", "belongs under hardware:"}}},
		{"a synonym from another tool", "model: {id: m}\nhardware: {num_gpus: 2}\n",
			[]want{{2, "hardware.num_gpus", `did you mean "gpu_count"?`}}},
		{"unknown nested profile key", "model:\n  id: m\nprofiles:\n  slow:\n    requests: 10\n    concurrency: [1]\n  fast:\n    concurency: [1, 8]\n",
			[]want{{8, "profiles.fast.concurency", `unknown key (did you mean "concurrency"?)`}}},
		{"gpu_count as a word", "model: {id: m}\nhardware:\n  accelerator: NVIDIA L40S\n  gpu_count: two\n",
			[]want{{4, "hardware.gpu_count", `expected a whole number, got "two"`}}},
		{"a quoted number", "model: {id: m}\nhardware: {gpu_count: \"2\"}\n",
			[]want{{2, "hardware.gpu_count", "remove the quotes"}}},
		{"a fraction", "model: {id: m}\nprofiles: {p: {input_tokens: 1.5}}\n",
			[]want{{2, "profiles.p.input_tokens", "expected a whole number, got the number 1.5"}}},
		{"octal-looking number", "model: {id: m}\nprofiles: {p: {warmup: 010}}\n",
			[]want{{2, "profiles.p.warmup", "plain decimal digits"}}},
		{"hex number", "model: {id: m}\nprofiles: {p: {warmup: 0x10}}\n",
			[]want{{2, "profiles.p.warmup", "plain decimal digits"}}},
		{"too large a number", "model: {id: m}\nprofiles: {p: {input_tokens: 9999999999}}\n",
			[]want{{2, "profiles.p.input_tokens", "too large"}}},
		{"concurrency as a number", "model: {id: m}\nprofiles:\n  p:\n    concurrency: 8\n",
			[]want{{4, "profiles.p.concurrency", "expected a list of levels, got the number 8; write [8]"}}},
		{"concurrency as a list of words", "model: {id: m}\nprofiles:\n  p:\n    concurrency:\n      - 1\n      - eight\n",
			[]want{{6, "profiles.p.concurrency[1]", `expected a whole number, got "eight"`}}},
		{"concurrency empty", "model: {id: m}\nprofiles: {p: {concurrency: []}}\n",
			[]want{{2, "profiles.p.concurrency", "the list is empty"}}},
		{"concurrency level 0", "model: {id: m}\nprofiles: {p: {concurrency: [0, 1]}}\n",
			[]want{{2, "profiles.p.concurrency[0]", "must be at least 1 request in flight (got 0)"}}},
		{"concurrency level twice", "model: {id: m}\nprofiles: {p: {concurrency: [1, 8, 1]}}\n",
			[]want{{2, "profiles.p.concurrency[2]", "level 1 is already listed (profiles.p.concurrency[0])"}}},
		{"input tokens 0", "model: {id: m}\nprofiles: {p: {input_tokens: 0}}\n",
			[]want{{2, "profiles.p.input_tokens", "must be at least 1 token (got 0)"}}},
		{"output tokens negative", "model: {id: m}\nprofiles: {p: {output_tokens: -5}}\n",
			[]want{{2, "profiles.p.output_tokens", "must be at least 1 token (got -5)"}}},
		{"gpu_count 0", "model: {id: m}\nhardware: {gpu_count: 0}\n",
			[]want{{2, "hardware.gpu_count", "must be at least 1 GPU (got 0)"}}},
		{"negative warmup", "model: {id: m}\nprofiles:\n  p:\n    warmup: -1\n",
			[]want{{4, "profiles.p.warmup", "cannot be negative (got -1)"}}},
		{"requests below the highest level", "model: {id: m}\nprofiles:\n  p:\n    concurrency: [1, 64]\n    requests: 32\n",
			[]want{{5, "profiles.p.requests", "fewer than the highest concurrency level 64"}}},
		{"requests below the default highest level", "model: {id: m}\nprofiles:\n  p:\n    requests: 16\n",
			[]want{{4, "profiles.p.requests", "fewer than the default highest concurrency level 32"}}},
		{"a level above the default requests", "model: {id: m}\nprofiles:\n  p:\n    concurrency: [128]\n",
			[]want{{4, "profiles.p.concurrency", "add requests: 128 or more"}}},
		{"a profile with no value", "model: {id: m}\nprofiles:\n  p:\n",
			[]want{{3, "profiles.p", "the profile sets nothing"}}},
		{"a profile with an empty mapping", "model: {id: m}\nprofiles:\n  p: {}\n",
			[]want{{3, "profiles.p", "the profile sets nothing"}}},
		{"profiles with none in it", "model: {id: m}\nprofiles: {}\n",
			[]want{{2, "profiles", "has no profiles"}}},
		{"a profile field directly under profiles", "model: {id: m}\nprofiles:\n  input_tokens: 512\n",
			[]want{{3, "profiles.input_tokens", "belongs inside a named profile"}}},
		{"a profile name with a space", "model: {id: m}\nprofiles:\n  \"my run\": {warmup: 1}\n",
			[]want{{3, "profiles.my run", "not a usable profile name"}}},
		{"missing model.id under model", "name: x\nmodel:\n  revision: abc\n",
			[]want{{2, "model.id", "missing"}}},
		{"no model at all", "name: x\n\nengine: {name: vllm}\n",
			[]want{{1, "model.id", "missing"}}},
		{"model as a string", "model: Qwen/Qwen3-8B\n",
			[]want{{1, "model", "write model: {id: Qwen/Qwen3-8B}"}}},
		{"empty model id", "model: {id: \"\"}\n",
			[]want{{1, "model.id", "is empty"}}},
		{"null model id", "model:\n  id:\n",
			[]want{{2, "model.id", "has no value"}}},
		{"model id with padding", "model: {id: \" m\"}\n",
			[]want{{1, "model.id", "spaces at its start or end"}}},
		{"a one-line field over two lines", "model: {id: m}\nname: |\n  a\n  b\n",
			[]want{{2, "name", "must be on one line"}}},
		{"a boolean where text goes", "model: {id: m}\nprecision: false\n",
			[]want{{2, "precision", "got the boolean false"}}},
		{"a list where text goes", "model: {id: m}\nengine:\n  name: [vllm]\n",
			[]want{{3, "engine.name", "expected text, got a list"}}},
		{"engine as text", "model: {id: m}\nengine: vllm\n",
			[]want{{2, "engine", "expected a mapping with name:, version: and image:"}}},
		{"duplicate top-level key", "model: {id: m}\nprecision: bf16\nprecision: fp8\n",
			[]want{{3, "precision", "duplicate key (first set on line 2)"}}},
		{"duplicate nested key", "model:\n  id: a\n  id: b\n",
			[]want{{3, "model.id", "duplicate key (first set on line 2)"}}},
		{"duplicate profile", "model: {id: m}\nprofiles:\n  p: {warmup: 1}\n  p: {warmup: 2}\n",
			[]want{{4, "profiles.p", "duplicate key (first set on line 3)"}}},
		{"declared revision with a space", "model: {id: m}\nrevision: \"r 1\"\n",
			[]want{{2, "revision", "not a usable revision"}}},
		{"declared revision in the derived form", "model: {id: m}\nrevision: r0123456789ab\n",
			[]want{{2, "revision", "form of a revision derived from a content hash"}}},
		{"parallelism needs more GPUs than stated", "model: {id: m}\nhardware: {gpu_count: 2}\nparallelism:\n  tensor: 2\n  pipeline: 2\n",
			[]want{{3, "parallelism", "tensor 2 × pipeline 2 needs 4 GPUs, but hardware.gpu_count is 2"}}},
		{"parallelism 0", "model: {id: m}\nparallelism: {tensor: 0}\n",
			[]want{{2, "parallelism.tensor", "must be at least 1"}}},
		{"an alias", "model: {id: &x m}\nname: *x\n",
			[]want{{2, "name", "aliases (*x) are not supported"}}},
		{"a merge key", "model: {id: m}\nprofiles:\n  base: &b {warmup: 1}\n  p:\n    <<: *b\n",
			[]want{{5, "profiles.p.<<", "merge keys (<<) are not supported"}}},
		{"empty file", "",
			[]want{{1, "", "the manifest is empty"}}},
		{"only comments", "# nothing here\n\n# yet\n",
			[]want{{1, "", "the manifest is empty"}}},
		{"a list at the top", "- model: m\n",
			[]want{{1, "", "not a list"}}},
		{"YAML scanner error: yaml's line as it is", "model:\n  id: m\n  revision: a: b\n",
			[]want{{3, "", "YAML syntax error: mapping values are not allowed in this context"}}},
		{"YAML parser error: yaml's 0-based line made 1-based", "model:\n  id: m\n profiles: x\n",
			[]want{{3, "", "YAML syntax error: did not find expected key"}}},
		{"YAML parser error in a flow list", "model: {id: m}\nprofiles: {p: {concurrency: [1, 2}}\n",
			[]want{{2, "", "YAML syntax error: did not find expected ',' or ']'"}}},
		{"YAML error on the first line, which yaml leaves unnumbered", "model: @x\n",
			[]want{{1, "", "YAML syntax error: found character that cannot start any token"}}},
		{"an alias to nothing has no line", "model: {id: *nope}\n",
			[]want{{0, "", "YAML syntax error: unknown anchor 'nope' referenced"}}},
		{"a tab in the indentation", "model:\n\tid: m\n",
			[]want{{2, "", "YAML syntax error: found character that cannot start any token"}}},
		{"two documents", "model: {id: m}\n---\nmodel: {id: n}\n",
			[]want{{2, "", "a second YAML document starts here"}}},
		{"a control character", "model: {id: m}\nname: a\x01b\n",
			[]want{{2, "", "control character (U+0001)"}}},
		{"not UTF-8", "model: {id: m}\n\nname: caf\xe9\n",
			[]want{{3, "", "not valid UTF-8"}}},
		{"UTF-16", "\xff\xfem\x00",
			[]want{{1, "", "UTF-16"}}},
		{"every problem is reported, in line order", "modle: {id: m}\nhardware: {gpu_count: 0}\nprofiles: {p: {warmup: -2}}\n",
			[]want{{1, "modle", `did you mean "model"?`}, {1, "model.id", "missing"}, {2, "hardware.gpu_count", "at least 1"}, {3, "profiles.p.warmup", "negative"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := ParseManifest([]byte(tt.src), "kovara.yaml")
			if m != nil {
				t.Errorf("got a manifest alongside the error")
			}
			got := manifestProblems(t, err)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Line != w.line || g.Key != w.key || !strings.Contains(g.Msg, w.msg) {
					t.Errorf("problem %d: got line %d key %q msg %q\nwant line %d key %q msg containing %q", i, g.Line, g.Key, g.Msg, w.line, w.key, w.msg)
				}
			}
		})
	}
}

func TestManifestErrorRendering(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "manifests", "many-problems.yaml")
	_, err := LoadManifest(path)
	if err == nil {
		t.Fatal("got no error")
	}
	golden, rerr := os.ReadFile(strings.TrimSuffix(path, ".yaml") + ".golden")
	if rerr != nil {
		t.Fatal(rerr)
	}
	want := strings.ReplaceAll(string(golden), "PATH", path)
	if got := err.Error() + "\n"; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}

	tests := []struct {
		name string
		err  *ManifestError
		want string
	}{
		{"line and key", &ManifestError{Path: "kovara.yaml", Problems: []Problem{{7, "profiles.fast.concurency", `unknown key (did you mean "concurrency"?)`}}},
			`kovara.yaml:7: profiles.fast.concurency: unknown key (did you mean "concurrency"?)`},
		{"no key", &ManifestError{Path: "kovara.yaml", Problems: []Problem{{3, "", "YAML syntax error: x"}}},
			"kovara.yaml:3: YAML syntax error: x"},
		{"no line", &ManifestError{Path: "a/kovara.yaml", Problems: []Problem{{0, "", "too big"}}},
			"a/kovara.yaml: too big"},
		{"no path", &ManifestError{Problems: []Problem{{1, "model.id", "missing"}, {2, "name", "empty"}}},
			"manifest:1: model.id: missing\nmanifest:2: name: empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestManifestContentHash(t *testing.T) {
	t.Parallel()
	lf, err := os.ReadFile(exampleManifestPath)
	if err != nil {
		t.Fatal(err)
	}
	// A checkout may have turned the line ends into CR LF; start from LF.
	lf = bytes.ReplaceAll(lf, []byte("\r\n"), []byte("\n"))
	sum := sha256.Sum256(lf)
	want := hex.EncodeToString(sum[:])

	tests := []struct {
		name string
		data []byte
		same bool
	}{
		{"LF", lf, true},
		{"CRLF", bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n")), true},
		{"lone CR", bytes.ReplaceAll(lf, []byte("\n"), []byte("\r")), true},
		{"mixed", bytes.Replace(lf, []byte("\n"), []byte("\r\n"), 3), true},
		{"one more blank line", append(slices.Clone(lf), '\n'), false},
		{"a trailing space", bytes.Replace(lf, []byte("bf16\n"), []byte("bf16 \n"), 1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := ParseManifest(tt.data, "kovara.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if (m.ContentHash == want) != tt.same {
				t.Errorf("hash %s, LF file's %s, want same=%v", m.ContentHash, want, tt.same)
			}
			if !hex64.MatchString(m.ContentHash) {
				t.Errorf("hash %q is not 64 lower-case hex digits", m.ContentHash)
			}
			if m.Revision != "r"+m.ContentHash[:12] {
				t.Errorf("revision %q does not follow the hash", m.Revision)
			}
		})
	}
}

func TestManifestRevision(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		src          string
		wantDeclared bool
		want         string // "" means derived from the hash
	}{
		{"absent", "model: {id: m}\n", false, ""},
		{"present", "revision: r2025.10\nmodel: {id: m}\n", true, "r2025.10"},
		{"present as a number", "revision: 3\nmodel: {id: m}\n", true, "3"},
		{"quoted", "revision: \"abc-1\"\nmodel: {id: m}\n", true, "abc-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := mustParseManifest(t, tt.src)
			want := tt.want
			if want == "" {
				want = "r" + m.ContentHash[:12]
			}
			if m.Revision != want || m.RevisionDeclared != tt.wantDeclared {
				t.Errorf("got %q (declared %v), want %q (declared %v)", m.Revision, m.RevisionDeclared, want, tt.wantDeclared)
			}
			c, err := m.Conditions("")
			if err != nil {
				t.Fatal(err)
			}
			if c.Revision != want || c.ContentHash != m.ContentHash {
				t.Errorf("conditions carry revision %q hash %q", c.Revision, c.ContentHash)
			}
		})
	}
	// The hash covers the file, revision line included, either way.
	a := mustParseManifest(t, "revision: a\nmodel: {id: m}\n")
	b := mustParseManifest(t, "revision: b\nmodel: {id: m}\n")
	if a.ContentHash == b.ContentHash {
		t.Error("two different files share a hash")
	}
}

func TestManifestProfileSelection(t *testing.T) {
	t.Parallel()
	const (
		none    = "model: {id: m}\n"
		one     = "model: {id: m}\nprofiles: {only: {warmup: 1}}\n"
		withDef = "model: {id: m}\nprofiles: {a: {warmup: 1}, default: {warmup: 2}, z: {warmup: 3}}\n"
		noDef   = "model: {id: m}\nprofiles: {fast: {warmup: 1}, slow: {warmup: 2}, long: {warmup: 3}}\n"
	)
	tests := []struct {
		name, src, ask string
		want           string
		wantErr        []string // parts of the error
	}{
		{"no profiles, none asked", none, "", "", nil},
		{"no profiles, one asked", none, "fast", "", []string{`no profile "fast"`, "defines no profiles"}},
		{"the only profile", one, "", "only", nil},
		{"the only profile by name", one, "only", "only", nil},
		{"default among several", withDef, "", "default", nil},
		{"a named one among several", withDef, "z", "z", nil},
		{"several, no default", noDef, "", "", []string{"3 profiles", `none is named "default"`, "fast, long, slow"}},
		{"unknown name", noDef, "fats", "", []string{`no profile "fats"`, `did you mean "fast"?`, "its profiles are: fast, long, slow"}},
		{"names are case-sensitive", one, "Only", "", []string{`no profile "Only"`, `did you mean "only"?`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := mustParseManifest(t, tt.src)
			got, err := m.SelectProfile(tt.ask)
			_, cerr := m.Conditions(tt.ask)
			plan := setup.DefaultPlan()
			aerr := m.ApplyProfile(&plan, tt.ask)
			if tt.wantErr == nil {
				if err != nil || cerr != nil || aerr != nil {
					t.Fatalf("errors: %v / %v / %v", err, cerr, aerr)
				}
				if got != tt.want {
					t.Errorf("got %q, want %q", got, tt.want)
				}
				if plan.Conditions == nil || plan.Conditions.Profile != tt.want {
					t.Errorf("plan conditions %+v, want profile %q", plan.Conditions, tt.want)
				}
				return
			}
			for _, e := range []error{err, cerr, aerr} {
				if e == nil {
					t.Fatalf("got no error, want one containing %q", tt.wantErr)
				}
				for _, part := range tt.wantErr {
					if !strings.Contains(e.Error(), part) {
						t.Errorf("error %q lacks %q", e, part)
					}
				}
			}
			if plan.Conditions != nil || plan.Warmup != setup.DefaultWarmup {
				t.Errorf("a failed ApplyProfile changed the plan: %+v", plan)
			}
		})
	}
}

func TestManifestApplyProfile(t *testing.T) {
	t.Parallel()
	m := mustParseManifest(t, `model: {id: org/model}
profiles:
  default:
    input_tokens: 2048
    concurrency: [1, 2, 4]
  full:
    input_tokens: 100
    output_tokens: 50
    concurrency: [16]
    requests: 16
    warmup: 0
`)
	custom := setup.KovaraPlan{InputTokens: 1, OutputTokens: 2, Concurrency: []int{3}, Requests: 400, Warmup: 5, Seed: 99, Timeout: 7, Model: "alias"}
	tests := []struct {
		name    string
		start   setup.KovaraPlan
		profile string
		want    setup.KovaraPlan // Conditions are checked apart
	}{
		{"partial profile over the defaults", setup.DefaultPlan(), "",
			setup.KovaraPlan{InputTokens: 2048, OutputTokens: setup.DefaultOutputTokens, Concurrency: []int{1, 2, 4}, Requests: setup.DefaultRequests, Warmup: setup.DefaultWarmup, Seed: setup.DefaultSeed, Timeout: setup.DefaultTimeout}},
		{"partial profile over a custom plan", custom, "default",
			setup.KovaraPlan{InputTokens: 2048, OutputTokens: 2, Concurrency: []int{1, 2, 4}, Requests: 400, Warmup: 5, Seed: 99, Timeout: 7, Model: "alias"}},
		{"a full profile sets every field it names, warmup 0 included", custom, "full",
			setup.KovaraPlan{InputTokens: 100, OutputTokens: 50, Concurrency: []int{16}, Requests: 16, Warmup: 0, Seed: 99, Timeout: 7, Model: "alias"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			plan := tt.start
			plan.Concurrency = slices.Clone(tt.start.Concurrency)
			if err := m.ApplyProfile(&plan, tt.profile); err != nil {
				t.Fatal(err)
			}
			if plan.Conditions == nil {
				t.Fatal("no conditions set")
			}
			cond := plan.Conditions
			plan.Conditions = nil
			if plan.InputTokens != tt.want.InputTokens || plan.OutputTokens != tt.want.OutputTokens ||
				!slices.Equal(plan.Concurrency, tt.want.Concurrency) || plan.Requests != tt.want.Requests ||
				plan.Warmup != tt.want.Warmup || plan.Seed != tt.want.Seed || plan.Timeout != tt.want.Timeout ||
				plan.Model != tt.want.Model || plan.Simulated != tt.want.Simulated {
				t.Errorf("got  %+v\nwant %+v", plan, tt.want)
			}
			if cond.ModelID != "org/model" {
				t.Errorf("conditions model %q", cond.ModelID)
			}
			// The plan owns its levels: changing them leaves the manifest alone.
			plan.Concurrency[0] = 999
			if name, _ := m.SelectProfile(tt.profile); m.Profiles[name].Concurrency[0] == 999 {
				t.Error("the plan shares its concurrency slice with the manifest")
			}
		})
	}
	if err := m.ApplyProfile(nil, ""); err == nil {
		t.Error("a nil plan gave no error")
	}
}

func TestManifestConditions(t *testing.T) {
	t.Parallel()
	m, err := LoadManifest(exampleManifestPath)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Conditions("long-context")
	if err != nil {
		t.Fatal(err)
	}
	want := setup.Conditions{
		ModelID:       "Qwen/Qwen3-8B",
		ModelRevision: m.Model.Revision,
		Engine:        "vllm",
		EngineVersion: "0.11.0",
		Accelerator:   "NVIDIA GeForce RTX 4090",
		GPUCount:      1,
		Precision:     "bf16",
		Profile:       "long-context",
		Revision:      "r" + m.ContentHash[:12],
		ContentHash:   m.ContentHash,
		ManifestPath:  exampleManifestPath,
		ManifestName:  "Qwen3-8B on one RTX 4090 (vLLM)",
	}
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}

	sparse := mustParseManifest(t, "model: {id: m}\n")
	c, err := sparse.Conditions("")
	if err != nil {
		t.Fatal(err)
	}
	if (c != setup.Conditions{ModelID: "m", Revision: sparse.Revision, ContentHash: sparse.ContentHash, ManifestPath: "kovara.yaml"}) {
		t.Errorf("sparse manifest: got %+v", c)
	}
}

func TestLoadManifestRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	data := append([]byte("model: {id: m}\n#"), bytes.Repeat([]byte("x"), MaxManifestSize)...)
	if err := os.WriteFile(big, data, 0o600); err != nil {
		t.Fatal(err)
	}
	exact := filepath.Join(dir, "exact.yaml")
	head := []byte("model: {id: m}\n#")
	if err := os.WriteFile(exact, append(head, bytes.Repeat([]byte("x"), MaxManifestSize-len(head))...), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		wantErr    string // "" means success
	}{
		{"over 1 MiB", big, "larger than 1 MiB"},
		{"exactly 1 MiB", exact, ""},
		{"missing", filepath.Join(dir, "nope.yaml"), "does not exist"},
		{"a folder", dir, "is a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadManifest(tt.path)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("got %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("got %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
	if _, err := ParseManifest(data, "big.yaml"); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("ParseManifest of %d bytes: got %v", len(data), err)
	}
}

func TestManifestProblemsAreCapped(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("model: {id: m}\n")
	for i := range 250 {
		fmt.Fprintf(&b, "unknown%d: x\n", i)
	}
	got := manifestProblems(t, mustFail(t, b.String()))
	if len(got) != maxProblemsShown+1 {
		t.Fatalf("got %d problems, want %d", len(got), maxProblemsShown+1)
	}
	if first := got[0]; first.Line != 2 || first.Key != "unknown0" {
		t.Errorf("first problem %+v", first)
	}
	if last := got[len(got)-1]; last.Line != 0 || !strings.Contains(last.Msg, "150 more problems not shown") {
		t.Errorf("last problem %+v", last)
	}
}

func mustFail(t *testing.T, src string) error {
	t.Helper()
	m, err := ParseManifest([]byte(src), "kovara.yaml")
	if err == nil {
		t.Fatalf("accepted %+v", m)
	}
	return err
}

func TestManifestSummary(t *testing.T) {
	t.Parallel()
	m, err := LoadManifest(exampleManifestPath)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Manifest: Qwen3-8B on one RTX 4090 (vLLM), revision " + m.Revision,
		"Model: Qwen/Qwen3-8B at revision " + m.Model.Revision,
		"Engine: vllm 0.11.0 (image " + m.Engine.Image + ")",
		"Hardware: 1 × NVIDIA GeForce RTX 4090",
		"Precision: bf16",
		"Parallelism: tensor 1, pipeline 1",
		"Profile default: 1024 input tokens, 256 output tokens, levels 1, 8, 32, 100 requests per level, 4 warmup",
		"Profile long-context: 8192 input tokens, 512 output tokens, levels 1, 4, 40 requests per level, 2 warmup",
	}
	if got := m.Summary(); !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	sparse := mustParseManifest(t, "model: {id: m}\nprofiles: {p: {warmup: 1}}\n")
	wantSparse := []string{
		"Manifest: revision " + sparse.Revision,
		"Model: m",
		"Engine: not stated",
		"Hardware: not stated",
		"Precision: not stated",
		"Parallelism: not stated",
		"Profile p: 1 warmup (the rest: method defaults)",
	}
	if got := sparse.Summary(); !slices.Equal(got, wantSparse) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantSparse, "\n"))
	}
}

// FuzzManifest: parsing never panics; what is accepted names a model, has
// a proper hash and revision, and every profile applied to the method
// defaults gives a plan the engine accepts. What is refused is always a
// *ManifestError with at least one problem.
func FuzzManifest(f *testing.F) {
	for _, p := range []string{exampleManifestPath, "testdata/manifests/minimal.yaml", "testdata/manifests/declared-revision.yaml", "testdata/manifests/many-problems.yaml"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data, "kovara.yaml")
		if err != nil {
			var me *ManifestError
			if !errors.As(err, &me) || len(me.Problems) == 0 || err.Error() == "" {
				t.Fatalf("refusal is not a *ManifestError with problems: %T %v", err, err)
			}
			if m != nil {
				t.Fatal("a manifest came back with an error")
			}
			return
		}
		if m.Model.ID == "" {
			t.Fatal("accepted without a model id")
		}
		if !hex64.MatchString(m.ContentHash) {
			t.Fatalf("hash %q", m.ContentHash)
		}
		if m.Revision == "" || (!m.RevisionDeclared && m.Revision != "r"+m.ContentHash[:12]) {
			t.Fatalf("revision %q", m.Revision)
		}
		_ = m.Summary()
		names := m.ProfileNames()
		if len(names) == 0 {
			names = []string{""}
		}
		for _, name := range names {
			plan := setup.DefaultPlan()
			if err := m.ApplyProfile(&plan, name); err != nil {
				t.Fatalf("profile %q: %v", name, err)
			}
			if err := plan.Validate(); err != nil {
				t.Fatalf("profile %q gives an invalid plan: %v", name, err)
			}
		}
	})
}
