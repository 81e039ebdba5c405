package results

import (
	"fmt"
	"strings"
	"testing"
)

// Export safety: the publish check refuses every address-like form
// wherever it hides in a run record, and every field it does not know;
// and it lets through the values that only look odd.

// stringSpots are the places in a run record (hardware.json's) that hold
// text someone or something chose: every condition, every environment
// string, and the metric method.
var stringSpots = []string{
	"/runs/0/model_id",
	"/runs/1/model_revision",
	"/runs/0/engine",
	"/runs/1/engine_version",
	"/runs/0/accelerator",
	"/runs/1/precision",
	"/runs/0/profile",
	"/runs/1/environment/client",
	"/runs/0/environment/client_version",
	"/runs/1/environment/go_version",
	"/runs/0/environment/os",
	"/runs/1/environment/machine",
	"/runs/0/environment/prompt_generator",
	"/runs/1/environment/percentile_method",
	"/runs/0/environment/server_model",
	"/runs/1/metrics/token_count_method",
	"/runs/0/evidence",
	"/runs/1/run_kind",
}

// addressForms are address-like texts and what the check calls them.
var addressForms = []struct{ value, what string }{
	{"http://gpu-node:8000/v1", "a URL"},
	{"HTTPS://Example.ORG/models", "a URL"},
	{"ws://10.1.1.1/socket", "a URL"},
	{"grpc+tls://inference", "a URL"},
	{"unix:///run/vllm.sock", "a URL"},
	{"s3://bucket/weights", "a URL"},
	{"served via gpubox.lan:8000", "a host and port"},
	{"GPU-NODE:8080", "a host and port"},
	{"my_host:443/path", "a host and port"},
	{"node7.cluster.local:30000", "a host and port"},
	{"box:1", "a host and port"},
	{"192.168.1.20", "an IPv4 address"},
	{"10.0.0.2:8000", "an IPv4 address"},
	{"(127.0.0.1)", "an IPv4 address"},
	{"at 255.255.255.255.", "an IPv4 address"},
	{"0.0.0.0", "an IPv4 address"},
	{"::1", "an IPv6 address"},
	{"[::1]", "an IPv6 address"},
	{"[::1]:8000", "an IPv6 address"},
	{"2001:db8::", "an IPv6 address"},
	{"2001:db8::8a2e:370:7334", "an IPv6 address"},
	{"2001:0db8:0000:0000:0000:8a2e:0370:7334", "an IPv6 address"},
	{"[2001:db8::1]:8443/v1", "an IPv6 address"},
	{"fe80::1%eth0", "an IPv6 address"},
	{"fe80::a00:27ff:fe4e:66a1%enp0s3", "an IPv6 address"},
	{"::ffff:192.168.1.20", "an IPv6 address"},
	{"64:ff9b::10.0.0.1", "an IPv6 address"},
	{"localhost", "a local host name"},
	{"LOCALHOST", "a local host name"},
	{"on localhost.localdomain", "a local host name"},
	{"gpubox.lan", "the endpoint's host name"},
	{"GPUBox.LAN-tuned", "the endpoint's host name"},
	{"run on gpubox.lan today", "the endpoint's host name"},
}

func TestExportRefusesAddressesEverywhere(t *testing.T) {
	t.Parallel()
	good := readFixture(t, "hardware.json")
	for _, spot := range stringSpots {
		for _, form := range addressForms {
			if exempt(spot, form.value, form.what) {
				continue
			}
			data := edit(t, good, setting(spot, form.value))
			payload, reasons := PublishCheck(data)
			if payload != nil {
				t.Errorf("%s = %q: published", spot, form.value)
				continue
			}
			want := fmt.Sprintf("at %s: ", spot)
			if !hasReason(reasons, want, "looks like "+form.what) {
				t.Errorf("%s = %q: reasons %q, want one at %s saying it looks like %s", spot, form.value, reasons, spot, form.what)
			}
		}
	}
}

// exempt says which placements the rules deliberately let through (see
// address.go and privateHosts): a whole dotted number in a version field is
// a version, and a host name that is a word of the run's own model id or
// engine tells nothing private.
func exempt(spot, value, what string) bool {
	versionField := strings.HasSuffix(spot, "version")
	if versionField && isDottedNumber(value) {
		return true
	}
	return what == "the endpoint's host name" && (strings.HasSuffix(spot, "/model_id") || strings.HasSuffix(spot, "/engine"))
}

func TestExportDocumentedExemptions(t *testing.T) {
	t.Parallel()
	good := readFixture(t, "hardware.json")
	for _, tc := range []struct {
		spot, value string
		published   bool
	}{
		{"/runs/1/engine_version", "192.168.1.20", true},     // a version, as written
		{"/runs/1/engine_version", "192.168.1.20:80", false}, // not a whole dotted number
		{"/runs/1/precision", "192.168.1.20", false},         // not a version field
		// A host named after the model or engine: its name is public.
		{"/runs/0/model_id", "org/gpubox.lan", true},
		{"/runs/0/profile", "gpubox.lan", false},
	} {
		payload, reasons := PublishCheck(edit(t, good, setting(tc.spot, tc.value)))
		if (payload != nil) != tc.published {
			t.Errorf("%s = %q: published %v (%q), want %v", tc.spot, tc.value, payload != nil, reasons, tc.published)
		}
	}
}

// Unknown fields are refused wherever they are, and an address in one, as
// its name or hidden in its value however deep, is named as well.
func TestExportRefusesUnknownFieldsAndWhatTheyHide(t *testing.T) {
	t.Parallel()
	good := readFixture(t, "hardware.json")
	tests := []struct {
		name  string
		ptr   string
		value any
		want  []string // substrings of reasons that must all be there
	}{
		{"a condition", "/runs/0/hostname", "gpubox.lan", []string{`at /runs/0: unknown field "hostname"`, "the endpoint's host name"}},
		{"in the environment", "/runs/1/environment/node", "n1", []string{`at /runs/1/environment: unknown field "node"`}},
		{"in the metrics", "/runs/0/metrics/gpu_util", 0.93, []string{`at /runs/0/metrics: unknown field "gpu_util"`}},
		{"in a distribution", "/runs/0/metrics/ttft_ms/p999", 60.1, []string{`at /runs/0/metrics/ttft_ms: unknown field "p999"`}},
		{"an address as a metric key", "/runs/0/metrics/10.0.0.7:8000", 1, []string{
			`unknown field "10.0.0.7:8000"`, `the field name "10.0.0.7:8000" contains "10.0.0.7", which looks like an IPv4 address`}},
		{"an IPv6 key", "/runs/1/environment/[fe80::1]", true, []string{`contains "fe80::1", which looks like an IPv6 address`}},
		{"the host as a key", "/runs/1/metrics/gpubox.lan_ttft", 3, []string{`the field name "gpubox.lan_ttft" contains "gpubox.lan", which looks like the endpoint's host name`}},
		{"a URL deep in an object", "/runs/0/environment/extra", map[string]any{"a": map[string]any{"b": []any{1, "x", map[string]any{"c": "see http://10.0.0.5/"}}}},
			[]string{`at /runs/0/environment: unknown field "extra"`, `at /runs/0/environment/extra/a/b/2/c: "http://10.0.0.5/" looks like a URL`}},
		{"a host and port in an array", "/runs/1/tags", []any{"fast", "gpubox:9000"},
			[]string{`at /runs/1: unknown field "tags"`, `at /runs/1/tags/1: "gpubox:9000" looks like a host and port`}},
		{"localhost as a nested key", "/runs/0/metrics/by_host", map[string]any{"localhost": 1},
			[]string{`the field name "localhost" contains "localhost", which looks like a local host name`}},
		{"at the top of the file", "/hostname", "gpubox", []string{`unknown field "hostname"`}},
		{"in the manifest reference", "/manifest/url", "https://hf.co/x", []string{`unknown field "url"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			payload, reasons := PublishCheck(edit(t, good, setting(tc.ptr, tc.value)))
			if payload != nil {
				t.Fatal("published")
			}
			for _, w := range tc.want {
				if !hasReason(reasons, w) {
					t.Errorf("reasons %q lack %q", reasons, w)
				}
			}
		})
	}
}

// The host names the caller passes (the saved endpoint's address, in any
// form) are looked for too, as whole words and ignoring case.
func TestExportLooksForTheCallersHostNames(t *testing.T) {
	t.Parallel()
	good := readFixture(t, "hardware.json")
	for _, tc := range []struct {
		hosts []string
		value string
		found bool
	}{
		{[]string{"http://tank:8000/v1"}, "bf16 on Tank", true},
		{[]string{"tank:8000"}, "bf16-tank-tuned", true},
		{[]string{"tank"}, "bf16 tanks", false},
		{[]string{"https://rig.home.arpa"}, "RIG.home.arpa", true},
		{[]string{"https://rig.home.arpa"}, "rig", false},
		{[]string{"[fe80::1]:8000"}, "fe80::1", true}, // an IPv6 address either way
		{[]string{"  "}, "bf16", false},
	} {
		_, reasons := PublishCheck(edit(t, good, setting("/runs/0/profile", tc.value)), tc.hosts...)
		if got := len(reasons) > 0; got != tc.found {
			t.Errorf("hosts %q, profile %q: refused %v (%q), want %v", tc.hosts, tc.value, got, reasons, tc.found)
		}
	}
}

// Values that only look a little like addresses are published: model ids
// with colons and slashes, versions, build tags, dates and times, ratios.
func TestExportAcceptsTrickyValues(t *testing.T) {
	t.Parallel()
	good := readFixture(t, "hardware.json")
	tests := []struct {
		spot  string
		value string
	}{
		{"/runs/0/model_id", "meta-llama/Llama-3.1-8B-Instruct"},
		{"/runs/0/model_id", "hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M"},
		{"/runs/0/model_id", "qwen2.5-coder:32b-instruct-q8_0"},
		{"/runs/0/model_id", "deepseek-r1:1.5b"},
		{"/runs/0/model_id", "phi3:3.8b"},
		{"/runs/0/model_id", "llama3.1:405b"},
		{"/runs/0/model_id", "mistral:7b-instruct-v0.3-q4_0"},
		{"/runs/0/model_id", "gpt-oss:20b"},
		{"/runs/0/model_id", "library/llama3:latest"},
		{"/runs/0/model_id", "org/model::v2"},
		{"/runs/0/model_id", "Qwen/Qwen3-30B-A3B-Instruct-2507-FP8"},
		{"/runs/0/environment/server_model", "/models/Qwen3-8B"},
		{"/runs/0/environment/server_model", "models--Qwen--Qwen3-8B/snapshots/abc"},
		{"/runs/1/engine_version", "0.11.0"},
		{"/runs/1/engine_version", "v0.11.0rc1"},
		{"/runs/1/engine_version", "0.6.3.post1+cu124"},
		{"/runs/1/engine_version", "10.3.0.26"},
		{"/runs/1/engine_version", "b6000"},
		{"/runs/1/engine_version", "2.4.0+cu121"},
		{"/runs/0/environment/client_version", "1.2.3.4"},
		{"/runs/0/environment/go_version", "go1.26.8"},
		{"/runs/0/accelerator", "NVIDIA H100 80GB HBM3"},
		{"/runs/0/accelerator", "2x RTX 3090 (NVLink)"},
		{"/runs/0/accelerator", "Apple M3 Max 40-core GPU"},
		{"/runs/1/precision", "awq-int4 (w4a16, g128)"},
		{"/runs/1/precision", "Q4_K_M"},
		{"/runs/0/profile", "chat 1:1"},
		{"/runs/0/profile", "ratio 16:9 prompts"},
		{"/runs/0/profile", "2026-10-29T12:30:00Z"},
		{"/runs/0/profile", "2026-10-29T12:30:00.123+01:00"},
		{"/runs/0/profile", "2026-10-29 12:30:45"},
		{"/runs/0/profile", "nightly 12:30"},
		{"/runs/0/profile", "step 3 of 4: decode"},
		{"/runs/0/profile", "sha256:3f9c2a71b0de"},
		{"/runs/0/profile", "std::vector"},
		{"/runs/0/profile", "x86_64 linux/amd64"},
		{"/runs/0/profile", "256.0.0.1"},
		{"/runs/0/profile", "1.2.3.4.5"},
		{"/runs/0/profile", "notlocalhost localhosts"},
		{"/runs/0/profile", "gpubox2"},
		{"/runs/0/profile", "model:99999"},
	}
	for _, tc := range tests {
		payload, reasons := PublishCheck(edit(t, good, setting(tc.spot, tc.value)))
		if payload == nil {
			t.Errorf("%s = %q refused: %q", tc.spot, tc.value, reasons)
		}
	}
}

// A file the engine wrote for an IPv6 or IP endpoint: its own address, as
// recorded in local, is what the runs are checked against.
func TestExportUsesTheFilesOwnEndpoint(t *testing.T) {
	t.Parallel()
	good := readFixture(t, "hardware.json")
	data := edit(t, good, func(doc map[string]any) {
		set(doc, "/local/endpoint", "http://inference-7.corp.example:8000")
		set(doc, "/local/endpoint_host", "inference-7.corp.example")
		set(doc, "/runs/1/profile", "tuned for INFERENCE-7.corp.example")
	})
	_, reasons := PublishCheck(data)
	if !hasReason(reasons, "at /runs/1/profile: ", "the endpoint's host name") {
		t.Errorf("reasons %q", reasons)
	}
}

func hasReason(reasons []string, parts ...string) bool {
next:
	for _, r := range reasons {
		for _, p := range parts {
			if !strings.Contains(r, p) {
				continue next
			}
		}
		return true
	}
	return false
}
