// Package hw reads GPU inventory and power telemetry while a benchmark runs,
// and turns power into energy per level.
//
// # Sources
//
// A GPU source is chosen per endpoint from one string (see ParseSource):
//
//	""                                  no telemetry (ParseSource returns nil, nil)
//	"local"                             the GPU tool found on this machine
//	"ssh://user@host[:port]"            the GPU tool found on host, through the system ssh
//	"http://host:9400/metrics"          a Prometheus GPU exporter (dcgm-exporter,
//	"https://host:9400/metrics"         utkuozdemir/nvidia_gpu_exporter, AMD's
//	                                    device-metrics-exporter, macmon serve or
//	                                    all-smi api)
//
// Any of them may end in "?gpus=0,2" to keep only those GPUs, by the tool's
// index (nvidia-smi's is PCI bus order, which is not always CUDA's order).
// On an exporter address the gpus parameter is removed before the page is
// fetched; other query parameters are kept. Without it every GPU is kept.
//
// # Which tool
//
// ParseSource runs nothing (storage and the CLI call it to check a
// string). A local or ssh source finds its tool at its first Inventory or
// Start, in this order, and keeps it: nvidia-smi, amd-smi, the amdgpu
// driver's sysfs files (/sys/class/drm/card*/device with vendor 0x1002),
// macmon, xpu-smi. Through ssh that search is one `sh -c` listing what is
// on the PATH ssh commands get there. "?tool=nvidia-smi|amd-smi|amdgpu|
// macmon|xpu-smi" skips the search; "?tool=powermetrics" is the only way
// to Apple's powermetrics, which needs root and is never searched for (it
// runs as `sudo -n powermetrics …`, so sudo never asks for a password and
// fails at once without a sudoers rule). Source.String names the tool once it
// is known ("amd-smi on lab-box through ssh"); Tool gives its name. When
// the machine has none, Inventory and Start say so in one sentence naming
// what was looked for.
//
// Each tool is one small type behind Source, read as follows (units as the
// tool gives them; Sample's are W, %, MiB, MHz, °C):
//
//	nvidia-smi  --query-gpu=… -lms N, one long-lived process (smiSource)
//	amd-smi     metric --usage --power --clock --temperature --mem-usage --throttle --json
//	            (without --throttle where amd-smi refuses it: before ROCm 6.3,
//	            a virtual machine's guest), once a tick from one shell loop on
//	            the machine (amdSMISource)
//	amdgpu      gpu_busy_percent, mem_info_*, hwmon power1_average|power1_input,
//	            temp1_input, freq1_input: read directly here, or one shell loop
//	            printing each file's name and value through ssh (amdgpuSource)
//	macmon      pipe -i MS, one JSON line a tick (macmonSource)
//	xpu-smi     dump -d -1 -m 0,1,2,3,18 -i S, CSV rows by column label (xpuSMISource)
//	powermetrics --samplers cpu_power,gpu_power,ane_power,thermal -f plist -i MS -b 1
//	            through sudo -n, one NUL-separated XML plist a tick (powermetricsSource)
//
// On an Apple Silicon Mac the one GPU's PowerW is macmon's all_power, CPU +
// GPU + Neural Engine: the model's work runs on all three, so it is what
// energy per token is worth reading from; the GPU's own figure, the CPU's
// and the ANE's are kept in the Sample beside it (GPUPowerW, CPUPowerW,
// ANEPowerW). Memory used there is the unified memory in use. powermetrics
// reads the same (combined_power, mW), with no memory or temperature, and
// its thermal_pressure above Nominal sets the sw_thermal_slowdown clock
// event bit, so a Mac's levels get throttle figures as a card's do.
// amd-smi's violation status (MI300 and later) sets the same bits: PPT the
// power cap, socket and HBM heat sw_thermal_slowdown, VR heat
// hw_thermal_slowdown, PROCHOT hw_slowdown (amdViolations says why).
// docs/gpu-sources.md says more.
//
// SSH runs `ssh -o BatchMode=yes -o ConnectTimeout=5 [-p port] [user@]host
// <command>`, so the user's keys, agent and ~/.ssh/config apply and ssh
// never stops to ask for a password. A password in the address is refused.
//
// # What is never read
//
// Serial numbers and UUIDs are never queried from nvidia-smi, amd-smi,
// macmon, xpu-smi or powermetrics. The programs on an NVIDIA card are joined to their
// GPU by PCI bus id (--query-compute-apps=gpu_bus_id,…), not gpu_uuid.
// Their names and pids are kept in local.telemetry.gpu_processes, which
// is never published; a shared report must blank the names. Exporter pages carry them as labels; they are used
// only to join series of one page together and are dropped before
// anything leaves the parser.
//
// # Sampling
//
// Source.Start runs one long-lived process per source (the tool, or our
// shell loop around it) and reads its lines as they arrive (an exporter is
// fetched, and local amdgpu files read, once per interval instead). Lines
// printed for one loop share one time offset (a "tick"). Readings a tool
// cannot give ([N/A], "N/A", [Not Supported], a sysfs file that fails to
// read, macmon's 0.0 GPU temperature) are missing, never zero. Every
// failure — tool missing, SSH refused, the tool silent for 5 intervals
// (plus a grace period before its first line, for the SSH handshake, and
// a few seconds more for amd-smi, a Python program), an exporter without a
// good answer for 5 intervals plus one fetch timeout, garbage, an early
// exit — becomes one sentence in Sampler.Warnings and sampling stops for good; the benchmark is
// never held up. Stop, or cancelling the context, kills the child's whole
// process group and waits for it. A few unreadable lines among good ones
// are skipped and reported once.
//
// # The server's machine
//
// Beside its GPU tool, a local or ssh source reads the machine's
// /proc/vmstat (pswpin, pswpout: 4 KiB pages) and /proc/meminfo
// (MemTotal, MemAvailable, SwapTotal, SwapFree) once per interval —
// locally from the files, through ssh from one `sh -c` loop ended with
// the sampler (hostmem.go) — into each level's LevelTelemetry.Host and
// Telemetry.HostMemory. A machine without /proc (a Mac) gives nothing and
// says nothing. nvidia-smi's source also lists the programs on the cards
// (--query-compute-apps) when sampling starts and when it stops
// (gpuprocs.go), into Telemetry.GPUProcesses; results judges both
// (HardwareFindings per level, RunFindings for the run).
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
