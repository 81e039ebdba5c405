package engine

import (
	"testing"

	"github.com/kovara/desktop/engine/setup"
)

// Where a setting's server listens, read from its command, for every
// family and form; the sentence said when it is not the endpoint's
// address, and where the runs go.
func TestListenOf(t *testing.T) {
	t.Parallel()
	const local = "http://127.0.0.1:8080"
	cmd := func(line string, env ...string) setup.TuneSetting {
		return setup.TuneSetting{Name: "B", How: setup.ByCommand, Command: line, Env: env}
	}
	viaSSH := func(host, line string) setup.TuneSetting {
		s := cmd(line)
		s.SSH = host
		return s
	}
	tests := []struct {
		name     string
		setting  setup.TuneSetting
		endpoint string
		addr     string // "": the command does not say, the endpoint's address is kept
		why      string
		url      string
		sentence string
	}{
		// llama-server: --host and --port (no short forms: -p is its
		// --prompt), LLAMA_ARG_HOST and LLAMA_ARG_PORT, 127.0.0.1:8080.
		{"llama --port", cmd("llama-server -m x.gguf --port 8090"), local, "127.0.0.1:8090", "its --port", "http://127.0.0.1:8090",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:8090 (its --port): the runs go to 8090."},
		// (llama-server itself refuses --port=N as an unknown argument, and
		// its start says so; what was meant is read.)
		{"llama --port=", cmd("llama-server -m x.gguf --port=8090"), local, "127.0.0.1:8090", "its --port", "http://127.0.0.1:8090",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:8090 (its --port): the runs go to 8090."},
		{"llama the last --port", cmd("llama-server --port 8081 -np 8 --port 8090"), local, "127.0.0.1:8090", "its --port", "http://127.0.0.1:8090",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:8090 (its --port): the runs go to 8090."},
		{"llama defaults, agreeing", cmd("llama-server -m x.gguf -np 8"), local, "127.0.0.1:8080", "llama-server's default", local, ""},
		{"llama -p is the prompt", cmd("llama-server -m x.gguf -p 8090"), local, "127.0.0.1:8080", "llama-server's default", local, ""},
		{"llama listen-all", cmd("llama-server -m x.gguf --host 0.0.0.0 --port 8090"), local, "127.0.0.1:8090", "its --host 0.0.0.0 and --port", "http://127.0.0.1:8090",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:8090 (its --host 0.0.0.0 and --port): the runs go to 8090."},
		{"llama listen-all IPv6", cmd("llama-server --host :: --port 8080"), local, "127.0.0.1:8080", "its --host :: and --port", local, ""},
		{"llama listen-all, default port", cmd("llama-server --host=0.0.0.0"), "http://localhost:8080/v1", "127.0.0.1:8080", "its --host 0.0.0.0, and llama-server's default port", "http://localhost:8080/v1", ""},
		{"llama on another address", cmd("llama-server --host 192.168.1.10"), local, "192.168.1.10:8080", "its --host 192.168.1.10, and llama-server's default port", "http://192.168.1.10:8080",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 192.168.1.10:8080 (its --host 192.168.1.10, and llama-server's default port): the runs go to 192.168.1.10:8080."},
		{"llama IPv6 loopback", cmd("llama-server --host ::1 --port 8090"), local, "[::1]:8090", "its --host ::1 and --port", "http://[::1]:8090",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on [::1]:8090 (its --host ::1 and --port): the runs go to 8090."},
		{"llama .exe", cmd("llama-server.exe --port 8090"), local, "127.0.0.1:8090", "its --port", "http://127.0.0.1:8090",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:8090 (its --port): the runs go to 8090."},
		{"llama by its path", cmd("/opt/llama.cpp/build/bin/llama-server --port 8090"), local, "127.0.0.1:8090", "its --port", "http://127.0.0.1:8090",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:8090 (its --port): the runs go to 8090."},
		{"llama a unix socket", cmd("llama-server --host /tmp/llama.sock"), local, "", "", local, ""},
		{"llama port 0", cmd("llama-server --port 0"), local, "", "", local, ""},
		// The environment: the setting's, NAME=VALUE words in the command, env.
		{"env of the setting", cmd("llama-server --port 8090", "CUDA_VISIBLE_DEVICES=0"), local, "127.0.0.1:8090", "its --port", "http://127.0.0.1:8090",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:8090 (its --port): the runs go to 8090."},
		{"env words before the program", cmd("CUDA_VISIBLE_DEVICES=0 GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 llama-server --port 8090"), local, "127.0.0.1:8090", "its --port", "http://127.0.0.1:8090",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:8090 (its --port): the runs go to 8090."},
		{"env program", cmd("env CUDA_VISIBLE_DEVICES=0 llama-server --port 8090"), local, "127.0.0.1:8090", "its --port", "http://127.0.0.1:8090",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:8090 (its --port): the runs go to 8090."},
		{"LLAMA_ARG_PORT", cmd("llama-server -m x.gguf", "LLAMA_ARG_PORT=8090"), local, "127.0.0.1:8090", "its LLAMA_ARG_PORT", "http://127.0.0.1:8090",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:8090 (its LLAMA_ARG_PORT): the runs go to 8090."},
		{"--port over LLAMA_ARG_PORT", cmd("LLAMA_ARG_PORT=9000 llama-server --port 8080"), local, "127.0.0.1:8080", "its --port", local, ""},
		{"LLAMA_ARG_HOST", cmd("llama-server", "LLAMA_ARG_HOST=0.0.0.0"), local, "127.0.0.1:8080", "its LLAMA_ARG_HOST=0.0.0.0, and llama-server's default port", local, ""},
		// vLLM: vllm serve, or its api_server module; every address, 8000.
		{"vllm serve", cmd("vllm serve Qwen/Qwen3-8B --port 8001 --host 0.0.0.0"), "http://127.0.0.1:8000", "127.0.0.1:8001", "its --host 0.0.0.0 and --port", "http://127.0.0.1:8001",
			"The endpoint is 127.0.0.1:8000 but setting B's command listens on 127.0.0.1:8001 (its --host 0.0.0.0 and --port): the runs go to 8001."},
		{"vllm serve --port=", cmd("vllm serve Qwen/Qwen3-8B --port=8001"), "http://127.0.0.1:8000", "127.0.0.1:8001", "its --port", "http://127.0.0.1:8001",
			"The endpoint is 127.0.0.1:8000 but setting B's command listens on 127.0.0.1:8001 (its --port): the runs go to 8001."},
		{"vllm default against localhost", cmd("vllm serve Qwen/Qwen3-8B"), "http://localhost:8000/v1", "127.0.0.1:8000", "vLLM's default", "http://localhost:8000/v1", ""},
		{"vllm default against 8080", cmd("vllm serve Qwen/Qwen3-8B"), local, "127.0.0.1:8000", "vLLM's default", "http://127.0.0.1:8000",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:8000 (vLLM's default): the runs go to 8000."},
		{"vllm api_server module", cmd("python3 -m vllm.entrypoints.openai.api_server --model x --port 8002"), local, "127.0.0.1:8002", "its --port", "http://127.0.0.1:8002",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:8002 (its --port): the runs go to 8002."},
		{"vllm another subcommand", cmd("vllm bench serve --port 8001"), local, "", "", local, ""},
		// SGLang: python -m sglang.launch_server; 127.0.0.1:30000.
		{"sglang default", cmd("python -m sglang.launch_server --model-path x"), local, "127.0.0.1:30000", "SGLang's default", "http://127.0.0.1:30000",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on 127.0.0.1:30000 (SGLang's default): the runs go to 30000."},
		{"sglang --port", cmd("python3.11 -u -m sglang.launch_server --model-path x --port 30001"), "http://127.0.0.1:30001", "127.0.0.1:30001", "its --port", "http://127.0.0.1:30001", ""},
		{"python another module", cmd("python -m http.server --port 8090"), local, "", "", local, ""},
		// Ollama: ollama serve, OLLAMA_HOST; 127.0.0.1:11434.
		{"ollama default", cmd("ollama serve", "OLLAMA_NUM_PARALLEL=4"), "http://127.0.0.1:11434", "127.0.0.1:11434", "Ollama's default", "http://127.0.0.1:11434", ""},
		{"OLLAMA_HOST host:port", cmd("OLLAMA_HOST=127.0.0.1:11500 OLLAMA_NUM_PARALLEL=4 ollama serve"), "http://127.0.0.1:11434", "127.0.0.1:11500", "its OLLAMA_HOST", "http://127.0.0.1:11500",
			"The endpoint is 127.0.0.1:11434 but setting B's command listens on 127.0.0.1:11500 (its OLLAMA_HOST): the runs go to 11500."},
		{"OLLAMA_HOST :port", cmd("ollama serve", "OLLAMA_HOST=:11500"), "http://127.0.0.1:11500", "127.0.0.1:11500", "its OLLAMA_HOST", "http://127.0.0.1:11500", ""},
		{"OLLAMA_HOST listen-all", cmd("ollama serve", "OLLAMA_HOST=0.0.0.0"), "http://127.0.0.1:11434", "127.0.0.1:11434", "its OLLAMA_HOST=0.0.0.0, and Ollama's default port", "http://127.0.0.1:11434", ""},
		{"ollama run", cmd("ollama run llama3"), local, "", "", local, ""},
		// Through ssh: the ssh host's, the port the command's.
		{"ssh, the endpoint names the host", viaSSH("me@gpu-box", "llama-server --port 8090"), "http://192.168.1.20:8080", "192.168.1.20:8090", "its --port, through ssh", "http://192.168.1.20:8090",
			"The endpoint is 192.168.1.20:8080 but setting B's command listens on 192.168.1.20:8090 (its --port, through ssh): the runs go to 8090."},
		{"ssh, --host is the far side's", viaSSH("gpu-box", "llama-server --host 0.0.0.0 --port 8080"), "http://192.168.1.20:8080", "192.168.1.20:8080", "its --host 0.0.0.0 and --port, through ssh", "http://192.168.1.20:8080", ""},
		{"ssh, the endpoint is this machine", viaSSH("me@gpu-box", "llama-server --port 8090"), local, "gpu-box:8090", "its --port, through ssh", "http://gpu-box:8090",
			"The endpoint is 127.0.0.1:8080 but setting B's command listens on gpu-box:8090 (its --port, through ssh): the runs go to gpu-box:8090."},
		{"ssh, a tunnel's port", viaSSH("me@gpu-box", "llama-server --port 8080"), local, "127.0.0.1:8080", "its --port, through ssh", local, ""},
		{"ssh in the command", cmd("ssh -p 2222 -o BatchMode=yes me@gpu-box CUDA_VISIBLE_DEVICES=1 llama-server -m x.gguf --port 8090"), "http://gpu-box:8080", "gpu-box:8090", "its --port, through ssh", "http://gpu-box:8090",
			"The endpoint is gpu-box:8080 but setting B's command listens on gpu-box:8090 (its --port, through ssh): the runs go to 8090."},
		{"ssh in the command, one quoted word", cmd(`ssh -tt gpu-box 'env OLLAMA_HOST=0.0.0.0:11500 ollama serve'`), "http://10.0.0.5:11434", "10.0.0.5:11500", "its OLLAMA_HOST, through ssh", "http://10.0.0.5:11500",
			"The endpoint is 10.0.0.5:11434 but setting B's command listens on 10.0.0.5:11500 (its OLLAMA_HOST, through ssh): the runs go to 11500."},
		{"ssh ssh:// destination", viaSSH("ssh://me@gpu-box:2222", "vllm serve m --port 8001"), "http://127.0.0.1:8000", "gpu-box:8001", "its --port, through ssh", "http://gpu-box:8001",
			"The endpoint is 127.0.0.1:8000 but setting B's command listens on gpu-box:8001 (its --port, through ssh): the runs go to gpu-box:8001."},
		{"ssh with a local forward", cmd("ssh -L 9000:127.0.0.1:8090 gpu-box llama-server --port 8090"), local, "", "", local, ""},
		// What does not say: another program, a setting without a command.
		{"unknown program", cmd("my-server --port 8090"), local, "", "", local, ""},
		{"a model setting", setup.TuneSetting{Name: "B", How: setup.ByModel, Model: "q8"}, local, "", "", local, ""},
		{"no endpoint chosen", cmd("llama-server --port 8090"), "", "127.0.0.1:8090", "its --port", "http://127.0.0.1:8090", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ListenOf(tt.setting, tt.endpoint)
			if got.Known != (tt.addr != "") || got.Addr != tt.addr || got.Why != tt.why {
				t.Errorf("got %v %q (%s), want %q (%s)", got.Known, got.Addr, got.Why, tt.addr, tt.why)
			}
			if got.URL != tt.url {
				t.Errorf("the runs go to %q, want %q", got.URL, tt.url)
			}
			if s := got.Disagreement(); s != tt.sentence {
				t.Errorf("got sentence %q\nwant %q", s, tt.sentence)
			}
		})
	}
}

// The plan line's sentences on the servers the app starts: where each
// listens, the disagreement in one sentence, the endpoint's address for
// a command that does not say.
func TestTuneServersNote(t *testing.T) {
	t.Parallel()
	const local = "http://127.0.0.1:8080"
	cmd := func(name, line string) setup.TuneSetting {
		return setup.TuneSetting{Name: name, How: setup.ByCommand, Command: line}
	}
	model := setup.TuneSetting{Name: "q8", How: setup.ByModel, Model: "q8"}
	tests := []struct {
		name     string
		settings []setup.TuneSetting
		want     string
	}{
		{"no server started", []setup.TuneSetting{model, {Name: "q4", How: setup.ByModel, Model: "q4"}}, ""},
		{"commands that do not say", []setup.TuneSetting{cmd("A", "./serve.sh 2"), cmd("B", "./serve.sh 8")},
			"The app starts and stops the server for A and B at this endpoint's address; nothing else may answer there when it starts."},
		{"one agrees, one listens elsewhere", []setup.TuneSetting{cmd("np2", "llama-server -np 2 --port 8080"), cmd("np8", "llama-server -np 8 --port 8090")},
			"The app starts and stops the server for np2 and np8; nothing else may answer where it listens when it starts. Setting np2 listens on 127.0.0.1:8080 (its --port). " +
				"The endpoint is 127.0.0.1:8080 but setting np8's command listens on 127.0.0.1:8090 (its --port): the runs go to 8090."},
		// The real two lines that differ only in -np (seen in the app
		// against llama-server): one sentence, not the same one twice.
		{"two listening elsewhere at one address", []setup.TuneSetting{cmd("A", "llama-server -m tiny.gguf -np 1 --port 18090"), cmd("B", "llama-server -m tiny.gguf -np 2 --port 18090")},
			"The app starts and stops the server for A and B; nothing else may answer where it listens when it starts. " +
				"The endpoint is 127.0.0.1:8080 but settings A and B listen on 127.0.0.1:18090 (their --port): the runs go to 18090."},
		{"two at one address, the endpoint's", []setup.TuneSetting{cmd("A", "llama-server -np 1 --port 8080"), cmd("B", "llama-server -np 2 --port 8080"), cmd("C", "llama-server -np 4 --port 8090")},
			"The app starts and stops the server for A, B and C; nothing else may answer where it listens when it starts. Settings A and B listen on 127.0.0.1:8080 (their --port). " +
				"The endpoint is 127.0.0.1:8080 but setting C's command listens on 127.0.0.1:8090 (its --port): the runs go to 8090."},
		{"with a model and a script", []setup.TuneSetting{cmd("A", "vllm serve m"), model, cmd("C", "./serve.sh")},
			"The app starts and stops the server for A and C; nothing else may answer where it listens when it starts. " +
				"The endpoint is 127.0.0.1:8080 but setting A's command listens on 127.0.0.1:8000 (vLLM's default): the runs go to 8000. C listens at this endpoint's address."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TuneServersNote(tt.settings, local); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
