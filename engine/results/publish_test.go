package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestPublishCheckGolden(t *testing.T) {
	data := readFixture(t, "hardware.json")
	payload, reasons := PublishCheck(data)
	if reasons != nil {
		t.Fatalf("refused: %q", reasons)
	}
	golden := filepath.Join("testdata", "payload.golden.json")
	if *update {
		if err := os.WriteFile(golden, payload, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(payload, want) {
		t.Fatalf("payload differs from %s (rerun with -update if the change is meant):\n%s", golden, payload)
	}

	// The payload is the file without local: its head, the manifest
	// reference and the runs, which are the file's own objects, key order
	// and all.
	var p map[string]json.RawMessage
	if err := json.Unmarshal(payload, &p); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if got, want := strings.Join(keys, " "), "complete created_at format format_version manifest runs"; got != want {
		t.Fatalf("payload keys: got %q, want %q", got, want)
	}
	var head struct{ Manifest ManifestRef }
	if err := json.Unmarshal(payload, &head); err != nil || head.Manifest.Revision != "r3f9c2a71b0de" {
		t.Fatalf("payload manifest: %+v (%v)", head.Manifest, err)
	}
	// It is a results file by itself, and publishing it again gives it back.
	if err := Validate(payload); err != nil {
		t.Fatalf("the published document is not a valid results file: %v", err)
	}
	if again, reasons := PublishCheck(payload); reasons != nil || !bytes.Equal(again, payload) {
		t.Fatalf("publishing the published document: reasons %q, same bytes %v", reasons, bytes.Equal(again, payload))
	}
	var file struct{ Runs json.RawMessage }
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	_ = json.Compact(&a, file.Runs)
	_ = json.Compact(&b, p["runs"])
	if a.String() != b.String() {
		t.Fatal("payload runs are not the file's runs as written")
	}
	if bytes.Contains(payload, []byte("gpubox")) || bytes.Contains(payload, []byte("local")) {
		t.Fatal("payload leaks local detail")
	}
}

func TestPublishCheckProtocolPayload(t *testing.T) {
	payload, reasons := PublishCheck(readFixture(t, "python_cli.json"))
	if reasons != nil {
		t.Fatalf("refused: %q", reasons)
	}
	if !bytes.Contains(payload, []byte("\n  \"manifest\": null,\n  \"runs\": [\n")) || bytes.Contains(payload, []byte(`"local"`)) {
		t.Fatalf("payload:\n%s", payload)
	}
	// The raw run is sent as written: the Python client's identity stays.
	if !bytes.Contains(payload, []byte(`"cli_version": "0.9.2"`)) || bytes.Contains(payload, []byte("go_version")) {
		t.Fatalf("payload:\n%s", payload)
	}
}

func TestPublishCheckRefuses(t *testing.T) {
	good := readFixture(t, "hardware.json")
	protocol := readFixture(t, "python_cli.json")
	tests := []struct {
		name   string
		base   []byte
		change func(map[string]any)
		hosts  []string
		want   []string // every reason, in order
	}{
		{
			name:   "incomplete",
			change: setting("/complete", false),
			want:   []string{"The run was interrupted before every level finished (complete is false); only complete files can be published."},
		},
		{
			name:   "simulated",
			change: setting("/local/simulated", true),
			want:   []string{"These results come from the built-in simulator; simulator runs can never be published."},
		},
		{
			name:   "no runs",
			change: setting("/runs", []any{}),
			want:   []string{"The file holds no run records; there is nothing to publish."},
		},
		{
			name:   "unknown field in metrics",
			change: setting("/runs/1/metrics/gpu_power_w", 301.5),
			want:   []string{`at /runs/1/metrics: unknown field "gpu_power_w".`},
		},
		{
			name:   "hardware run without a manifest",
			change: setting("/manifest", nil),
			want: []string{
				"at /runs/0: a hardware run needs the manifest revision it was made under, and the file names none.",
				"at /runs/1: a hardware run needs the manifest revision it was made under, and the file names none.",
			},
		},
		{
			name:   "protocol test with a manifest",
			base:   protocol,
			change: setting("/manifest", map[string]any{"revision": "r000000000001", "content_hash": "x"}),
			want:   []string{"at /runs/0: a protocol test (a run with no kovara.yaml stating its hardware) is made without a manifest, but the file names one."},
		},
		{
			name:   "protocol test stating manifest conditions",
			base:   protocol,
			change: setting("/runs/0/gpu_count", 1),
			want:   []string{"at /runs/0/gpu_count: a protocol test (a run with no kovara.yaml stating its hardware) cannot state gpu_count; only a manifest supplies it."},
		},
		{
			name:   "URL in server_model",
			change: setting("/runs/0/environment/server_model", "http://gpubox.lan:8000/v1/models/x"),
			want:   []string{`at /runs/0/environment/server_model: "http://gpubox.lan:8000/v1/models/x" looks like a URL; addresses and host names are never published.`},
		},
		{
			name:   "host and port in model id",
			change: setting("/runs/1/model_id", "box:8000/Qwen3-8B"),
			want:   []string{`at /runs/1/model_id: "box:8000" looks like a host and port; addresses and host names are never published.`},
		},
		{
			name:   "IPv4 in accelerator",
			change: setting("/runs/0/accelerator", "RTX 4090 @ 192.168.1.20"),
			want:   []string{`at /runs/0/accelerator: "192.168.1.20" looks like an IPv4 address; addresses and host names are never published.`},
		},
		{
			name:   "IPv6 in engine",
			change: setting("/runs/0/engine", "vllm on [fe80::1%eth0]"),
			want:   []string{`at /runs/0/engine: "fe80::1%eth0" looks like an IPv6 address; addresses and host names are never published.`},
		},
		{
			name:   "localhost in os",
			change: setting("/runs/0/environment/os", "linux (localhost)"),
			want:   []string{`at /runs/0/environment/os: "localhost" looks like a local host name; addresses and host names are never published.`},
		},
		{
			name:   "endpoint host from the file in a label-like field",
			change: setting("/runs/1/profile", "GPUBOX.LAN-tuned"),
			want:   []string{`at /runs/1/profile: "GPUBOX.LAN" looks like the endpoint's host name; addresses and host names are never published.`},
		},
		{
			name:   "endpoint host passed by the caller",
			change: setting("/runs/0/precision", "bf16 on tank"),
			hosts:  []string{"http://Tank:8000/v1"},
			want:   []string{`at /runs/0/precision: "tank" looks like the endpoint's host name; addresses and host names are never published.`},
		},
		{
			name:   "a host named after the engine or the model is not private",
			change: setting("/runs/0/environment/server_model", "gpubox.lan"),
			hosts:  []string{"http://vllm:8000", "qwen3-8b", "qwen"},
			want:   []string{`at /runs/0/environment/server_model: "gpubox.lan" looks like the endpoint's host name; addresses and host names are never published.`},
		},
		{
			name:   "address in an unknown key",
			change: setting("/runs/0/metrics/10.0.0.7", 1),
			want: []string{
				`at /runs/0/metrics: unknown field "10.0.0.7".`,
				`at /runs/0/metrics: the field name "10.0.0.7" contains "10.0.0.7", which looks like an IPv4 address; addresses and host names are never published.`,
			},
		},
		{
			name:   "address nested inside an unknown value",
			change: setting("/runs/0/environment/extra", map[string]any{"notes": []any{"ok", "see ::1"}}),
			want: []string{
				`at /runs/0/environment: unknown field "extra".`,
				`at /runs/0/environment/extra/notes/1: "::1" looks like an IPv6 address; addresses and host names are never published.`,
			},
		},
		{
			name:   "address in the manifest revision",
			change: setting("/manifest/revision", "https://example.org/r1"),
			want:   []string{`at /manifest/revision: "https://example.org/r1" looks like a URL; addresses and host names are never published.`},
		},
		{
			name: "every reason is collected",
			change: func(doc map[string]any) {
				set(doc, "/complete", false)
				set(doc, "/local/simulated", true)
				set(doc, "/runs/0/metrics/extra", "x")
				set(doc, "/runs/1/environment/server_model", "localhost:8000")
				del(doc, "/runs/1/seed")
			},
			want: []string{
				`at /runs/0/metrics: unknown field "extra".`,
				`at /runs/1: missing field "seed".`,
				"The run was interrupted before every level finished (complete is false); only complete files can be published.",
				"These results come from the built-in simulator; simulator runs can never be published.",
				`at /runs/1/environment/server_model: "localhost:8000" looks like a host and port; addresses and host names are never published.`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.base
			if base == nil {
				base = good
			}
			payload, reasons := PublishCheck(edit(t, base, tt.change), tt.hosts...)
			if payload != nil {
				t.Error("a refused file still produced a payload")
			}
			if !slices.Equal(reasons, tt.want) {
				t.Fatalf("reasons:\n%s\nwant:\n%s", strings.Join(reasons, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestPublishCheckUnreadable(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("{"), []byte("not json"), make([]byte, MaxFileSize+1)} {
		payload, reasons := PublishCheck(data)
		if payload != nil || len(reasons) != 1 {
			t.Fatalf("%.20q: payload %q reasons %q", data, payload, reasons)
		}
	}
}

// Unknown keys are found on the raw JSON even where a duplicate key would
// hide them from a map, and duplicates themselves are refused.
func TestPublishCheckDuplicateKeys(t *testing.T) {
	data := bytes.Replace(readFixture(t, "hardware.json"),
		[]byte(`"model_id": "Qwen/Qwen3-8B",`),
		[]byte(`"model_id": "gpubox.lan:8000", "model_id": "Qwen/Qwen3-8B",`), 1)
	_, reasons := PublishCheck(data)
	want := []string{
		`at /runs/0: field "model_id" appears more than once.`,
		`at /runs/0/model_id: "gpubox.lan:8000" looks like a host and port; addresses and host names are never published.`,
	}
	if !slices.Equal(reasons, want) {
		t.Fatalf("reasons:\n%s", strings.Join(reasons, "\n"))
	}
}

func TestAddressLike(t *testing.T) {
	hosts := []string{normalizeHost("gpubox"), normalizeHost("http://Tank.lan:8000/v1")}
	tests := []struct {
		value   string
		version bool // the value of a *_version field
		what    string
		match   string // "" when the value is fine
	}{
		// ordinary values: never flagged
		{value: "Qwen/Qwen3-8B"},
		{value: "meta-llama/Llama-3.1-8B-Instruct"},
		{value: "meta-llama/Llama-3.1-8B-Instruct:Q4_K_M"},
		{value: "bartowski/Qwen2.5-7B-Instruct-GGUF:Q8_0"},
		{value: "llama3.1:8b"},
		{value: "model:8b"},
		{value: "qwen2.5:0.5b"},
		{value: "qwen3:30b-a3b"},
		{value: "nomic-embed-text:latest"},
		{value: "gemma3:27b-it-qat"},
		{value: "0.11.0"},
		{value: "v1.2.3"},
		{value: "0.6.3.post1"},
		{value: "b4567"},
		{value: "fp8"},
		{value: "bf16"},
		{value: "Q4_K_M"},
		{value: "NVIDIA H100 80GB HBM3"},
		{value: "go1.26.8"},
		{value: "3.12.7"},
		{value: "12:30"},
		{value: "12:30:45"},
		{value: "12:30:45.123"},
		{value: "2026-10-29T12:30:00Z"},
		{value: "2026-10-29T12:30"},
		{value: "ratio 1:2"},
		{value: "std::vector"},
		{value: "model::v2"},
		{value: "1.2.3.4.5"},
		{value: "v1.2.3.4"},
		{value: "10.3.0.26", version: true},
		{value: "256.1.1.1"},
		{value: "gpubox2"},
		{value: "notlocalhost"},
		{value: "kovara-synthetic-v1"},
		{value: "sha256:3f9c2a71"},
		{value: "model:99999"},

		// addresses: always flagged
		{value: "http://gpubox:8000/v1", what: "a URL", match: "http://gpubox:8000/v1"},
		{value: "see HTTPS://x.org", what: "a URL", match: "HTTPS://x.org"},
		{value: "hf://Qwen/Qwen3-8B", what: "a URL", match: "hf://Qwen/Qwen3-8B"},
		{value: "file:///srv/models", what: "a URL", match: "file:///srv/models"},
		{value: "gpubox:8000", what: "a host and port", match: "gpubox:8000"},
		{value: "gpu.home.arpa:8000/v1", what: "a host and port", match: "gpu.home.arpa:8000"},
		{value: "served by my-box:30000.", what: "a host and port", match: "my-box:30000"},
		{value: "model:8", what: "a host and port", match: "model:8"},
		{value: "10.0.0.2", what: "an IPv4 address", match: "10.0.0.2"},
		{value: "10.0.0.2:8000", what: "an IPv4 address", match: "10.0.0.2"},
		{value: "at 192.168.1.20.", what: "an IPv4 address", match: "192.168.1.20"},
		{value: "1.2.3.4", what: "an IPv4 address", match: "1.2.3.4"},
		{value: "10.3.0.26", what: "an IPv4 address", match: "10.3.0.26"},
		{value: "node_10.0.0.2", what: "an IPv4 address", match: "10.0.0.2"},
		{value: "::1", what: "an IPv6 address", match: "::1"},
		{value: "[::1]:8000", what: "an IPv6 address", match: "::1"},
		{value: "fe80::1%eth0", what: "an IPv6 address", match: "fe80::1%eth0"},
		{value: "2001:db8::7", what: "an IPv6 address", match: "2001:db8::7"},
		{value: "[2001:db8:0:0:0:0:0:7]:8000", what: "an IPv6 address", match: "2001:db8:0:0:0:0:0:7"},
		{value: "::ffff:10.0.0.2", what: "an IPv6 address", match: "::ffff:10.0.0.2"},
		{value: "addr:fe80::1", what: "an IPv6 address", match: "fe80::1"},
		{value: "fe80::1/64", what: "an IPv6 address", match: "fe80::1"},
		{value: "localhost", what: "a local host name", match: "localhost"},
		{value: "LocalHost.localdomain", what: "a local host name", match: "LocalHost"},
		{value: "gpubox", what: "the endpoint's host name", match: "gpubox"},
		{value: "GPUBox-fast", what: "the endpoint's host name", match: "GPUBox"},
		{value: "bench on tank.lan", what: "the endpoint's host name", match: "tank.lan"},
	}
	for _, tt := range tests {
		what, match, found := addressIn(tt.value, hosts, tt.version)
		if found != (tt.match != "") || what != tt.what || match != tt.match {
			t.Errorf("addressIn(%q, version=%v) = %q, %q, %v; want %q, %q", tt.value, tt.version, what, match, found, tt.what, tt.match)
		}
	}
}

// Long hostile strings are scanned in linear time.
// longAddressLike are megabyte strings built from the pieces the address
// scanners look for, and what each scanner must make of them.
var longAddressLike = []struct {
	unit, what string
}{
	{"a:", ""}, {"a://", "a URL"}, {":", "an IPv6 address"},
	{"1.", ""}, {"a%::", ""}, {"gpubo", ""},
}

// TestAddressLikeLongStrings: a megabyte of address-like pieces gets the
// right verdict (BenchmarkAddressLikeLongStrings shows it is found in time
// linear in the length).
func TestAddressLikeLongStrings(t *testing.T) {
	for _, tc := range longAddressLike {
		s := strings.Repeat(tc.unit, 1<<20/len(tc.unit))
		what, _, found := addressIn(s, []string{"gpubox"}, false)
		if what != tc.what || found != (tc.what != "") {
			t.Errorf("%d × %q: %q, %v; want %q", 1<<20/len(tc.unit), tc.unit, what, found, tc.what)
		}
	}
}

// BenchmarkAddressLikeLongStrings scans the same pieces at 64 KiB and at
// 1 MiB: ns/byte stays flat when the scan is linear (a quadratic one
// would take 16 times longer per byte at the larger size).
func BenchmarkAddressLikeLongStrings(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20} {
		b.Run(strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
			var inputs []string
			for _, tc := range longAddressLike {
				inputs = append(inputs, strings.Repeat(tc.unit, size/len(tc.unit)))
			}
			b.SetBytes(int64(len(inputs) * size))
			for b.Loop() {
				for _, s := range inputs {
					addressIn(s, []string{"gpubox"}, false)
				}
			}
		})
	}
}

func TestNormalizeHost(t *testing.T) {
	for in, want := range map[string]string{
		"gpubox":                    "gpubox",
		"GPUBox.lan.":               "gpubox.lan",
		"gpubox:8000":               "gpubox",
		"http://gpubox:8000/v1":     "gpubox",
		"gpubox:8000/v1":            "gpubox",
		"[fe80::1]:8000":            "fe80::1",
		"http://[2001:db8::7]:8000": "2001:db8::7",
		"::1":                       "::1",
		"  ":                        "",
	} {
		if got := normalizeHost(in); got != want {
			t.Errorf("normalizeHost(%q) = %q, want %q", in, got, want)
		}
	}
}
