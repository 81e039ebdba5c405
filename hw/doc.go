// Package hw reads GPU inventory and power telemetry while a benchmark runs,
// and turns power into energy per level.
//
// # Sources
//
// A GPU source is chosen per endpoint from one string (see ParseSource):
//
//	""                                  no telemetry (ParseSource returns nil, nil)
//	"local"                             nvidia-smi on this machine
//	"ssh://user@host[:port]"            nvidia-smi on host, through the system ssh
//	"http://host:9400/metrics"          a Prometheus GPU exporter (dcgm-exporter or
//	"https://host:9400/metrics"         utkuozdemir/nvidia_gpu_exporter)
//
// Any of them may end in "?gpus=0,2" to keep only those GPUs, by nvidia-smi
// index (PCI bus order, which is not always CUDA's order). On an exporter
// address the gpus parameter is removed before the page is fetched; other
// query parameters are kept. Without it every GPU is kept.
//
// SSH runs `ssh -o BatchMode=yes -o ConnectTimeout=5 [-p port] [user@]host
// nvidia-smi …`, so the user's keys, agent and ~/.ssh/config apply and ssh
// never stops to ask for a password. A password in the address is refused.
//
// # What is never read
//
// Serial numbers and UUIDs are never queried from nvidia-smi. Exporter pages
// carry them as labels; they are used only to join series of one page
// together and are dropped before anything leaves the parser.
//
// # Sampling
//
// Source.Start runs one long-lived `nvidia-smi --query-gpu=… -lms N` per
// source and reads its lines as they arrive (an exporter is fetched once per
// interval instead). Lines printed for one loop of nvidia-smi share one time
// offset (a "tick"). Readings nvidia-smi cannot give ([N/A], [Not
// Supported], …) are missing, never zero. Every failure — tool missing, SSH
// refused, nvidia-smi silent for 5 intervals (plus a grace period before its
// first line, for the SSH handshake), an exporter without a good answer for
// 5 intervals plus one fetch timeout, garbage, an early exit — becomes one
// sentence in Sampler.Warnings and sampling stops for good; the benchmark is
// never held up. Stop, or cancelling the context, kills the child's whole
// process group and waits for it. A few unreadable lines among good ones
// are skipped and reported once.
//
// # Wiring
//
//	src, err := hw.ParseSource(endpoint.GPU)        // nil, nil: no telemetry
//	inv, err := src.Inventory(ctx)                  // err: a warning, carry on
//	smp, err := src.Start(ctx, time.Second)         // before the first level
//	… for each level: start := time.Now(); run it; end := time.Now()
//	smp.Stop()                                      // after the last level
//	tel := hw.NewTelemetry(src, inv, smp, windows, invWarning)
//
// # Energy
//
// See Energy for the exact arithmetic: per-GPU power is a piecewise-linear
// curve through its readings, held flat before the first and after the last;
// energy is the trapezoidal integral of the summed curve over the level's
// window, with the window edges interpolated.
package hw
