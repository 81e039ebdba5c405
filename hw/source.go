package hw

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kovara/desktop/internal/clip"
	"github.com/kovara/desktop/telemetry"
)

// Source is one place GPU readings come from.
type Source interface {
	// Kind is local, ssh or exporter.
	Kind() telemetry.GPUSourceKind
	// Host names the machine without user, password or path: "localhost",
	// "lab-box", "lab-box:2222", "10.0.0.5:9400". Safe for the UI and for
	// the results file's local section.
	Host() string
	// GPUs is the chosen subset of nvidia-smi indices, sorted; nil means all.
	GPUs() []int
	// String describes the source in words, without credentials.
	String() string
	// Inventory lists the (chosen) GPUs once. Its error is a sentence fit
	// for the UI and for local.warnings.
	Inventory(ctx context.Context) ([]telemetry.GPU, error)
	// Start begins sampling every interval (0 means 1 s) until Stop or ctx
	// is cancelled. An error means nothing was started (e.g. nvidia-smi or
	// ssh is not installed); failures after that are Sampler warnings.
	Start(ctx context.Context, interval time.Duration) (*Sampler, error)
}

// DefaultInterval is the sampling interval used when Start is given 0.
const DefaultInterval = time.Second

// MinInterval is the shortest sampling interval Start accepts.
const MinInterval = 20 * time.Millisecond

const sourceForms = "use local, ssh://user@host[:port] or an exporter's http://host:9400/metrics, optionally followed by ?gpus=0,2"

// toolWords lists what ?tool= takes.
const toolWords = "nvidia-smi, amd-smi, amdgpu, macmon, xpu-smi or powermetrics"

// ParseSource reads a GPU source string (see the package documentation).
// "" and "none" mean no telemetry and give a nil Source and a nil error.
// Errors are sentences that never repeat a password.
func ParseSource(s string) (Source, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "none") {
		return nil, nil
	}
	base, rawQuery, _ := strings.Cut(s, "?")
	if strings.EqualFold(base, "local") {
		gpus, rest, err := splitGPUQuery(rawQuery)
		if err != nil {
			return nil, err
		}
		tool, rest, err := splitToolQuery(rest)
		if err != nil {
			return nil, err
		}
		if rest != "" {
			return nil, fmt.Errorf("the local GPU source takes only ?gpus=… and ?tool=…, not ?%s", rest)
		}
		return machineSource(shell{}, gpus, tool), nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return nil, errors.New("the GPU source is not one we understand: " + sourceForms)
	}
	switch strings.ToLower(u.Scheme) {
	case "ssh":
		return parseSSH(u)
	case "http", "https":
		return parseExporter(u)
	default:
		return nil, fmt.Errorf("the GPU source's scheme %q is not one we understand: %s", u.Scheme, sourceForms)
	}
}

func parseSSH(u *url.URL) (Source, error) {
	if _, has := u.User.Password(); has {
		return nil, errors.New("the SSH GPU source must not contain a password: kovara uses your SSH keys or agent (BatchMode), so write ssh://user@host")
	}
	host := u.Hostname()
	if host == "" {
		return nil, errors.New("the SSH GPU source needs a host, like ssh://user@host")
	}
	user := u.User.Username()
	if !safeSSHWord(host) || (user != "" && !safeSSHWord(user)) {
		return nil, errors.New("the SSH GPU source's user or host contains characters ssh would misread")
	}
	port := u.Port()
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("the SSH GPU source's port %q is not a number from 1 to 65535", port)
		}
	}
	if u.Path != "" && u.Path != "/" || u.Opaque != "" {
		return nil, errors.New("the SSH GPU source takes no path: write ssh://user@host[:port]")
	}
	gpus, rest, err := splitGPUQuery(u.RawQuery)
	if err != nil {
		return nil, err
	}
	tool, rest, err := splitToolQuery(rest)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, fmt.Errorf("the SSH GPU source takes only ?gpus=… and ?tool=…, not ?%s", rest)
	}
	dest := host
	if user != "" {
		dest = user + "@" + host
	}
	label := host
	if port != "" {
		label = net.JoinHostPort(host, port)
	}
	return machineSource(shell{sshDest: dest, sshPort: port, host: label}, gpus, tool), nil
}

// machineSource reads tool on sh's machine, or, with no tool named, the
// first one that machine turns out to have (autoSource).
func machineSource(sh shell, gpus []int, tool string) Source {
	if tool == "" {
		return newAutoSource(sh, gpus)
	}
	return watchingHost(newToolSource(tool, sh, gpus))
}

// splitToolQuery takes the tool parameter out of a raw query.
func splitToolQuery(raw string) (tool, rest string, err error) {
	var keep []string
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		key, val, _ := strings.Cut(part, "=")
		if k, _ := url.QueryUnescape(key); k != "tool" {
			keep = append(keep, part)
			continue
		}
		if tool != "" {
			return "", "", errors.New("give ?tool= once, like ?tool=amd-smi")
		}
		v, _ := url.QueryUnescape(val)
		v = strings.ToLower(strings.TrimSpace(v))
		if !slices.Contains(toolChoices, v) {
			return "", "", fmt.Errorf("the GPU tool %q is not one we read: give %s, or leave ?tool= out to find it", clip.Line(v, 40), toolWords)
		}
		tool = v
	}
	return tool, strings.Join(keep, "&"), nil
}

// safeSSHWord refuses what ssh could take for an option or what a shell
// would split.
func safeSSHWord(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("'\"`$;&|<>()\\", r) {
			return false
		}
	}
	return true
}

func parseExporter(u *url.URL) (Source, error) {
	if u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("the GPU exporter address needs a host, like http://host:9400/metrics")
	}
	gpus, rest, err := splitGPUQuery(u.RawQuery)
	if err != nil {
		return nil, err
	}
	fetch := *u
	fetch.Scheme = strings.ToLower(u.Scheme)
	fetch.RawQuery = rest
	fetch.Fragment, fetch.RawFragment = "", ""
	if fetch.Path == "" || fetch.Path == "/" {
		fetch.Path, fetch.RawPath = "/metrics", ""
	}
	return newExporterSource(fetch.String(), u.Host, gpus), nil
}

// splitGPUQuery takes the gpus parameter out of a raw query and gives back
// the rest unchanged (in its original order and encoding).
func splitGPUQuery(raw string) (gpus []int, rest string, err error) {
	if raw == "" {
		return nil, "", nil
	}
	var keep []string
	found := false
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		key, val, _ := strings.Cut(part, "=")
		if k, _ := url.QueryUnescape(key); k != "gpus" {
			keep = append(keep, part)
			continue
		}
		if found {
			return nil, "", errors.New("give ?gpus= once, like ?gpus=0,2")
		}
		found = true
		v, err := url.QueryUnescape(val)
		if err != nil {
			return nil, "", fmt.Errorf("the GPU list %q is not readable: give GPU indices separated by commas, like ?gpus=0,2", val)
		}
		gpus, err = parseGPUList(v)
		if err != nil {
			return nil, "", err
		}
	}
	return gpus, strings.Join(keep, "&"), nil
}

// parseGPUList reads "0,2" (spaces allowed) into sorted distinct indices;
// "all" means every GPU (nil).
func parseGPUList(v string) ([]int, error) {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "all") {
		return nil, nil
	}
	if v == "" {
		return nil, errors.New("the GPU list is empty: give GPU indices separated by commas, like ?gpus=0,2")
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || n > 1023 || !isDigits(f) {
			return nil, fmt.Errorf("the GPU list %q is not readable: give GPU indices (0, 1, …) separated by commas, like ?gpus=0,2", v)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// selected reports whether GPU index i is in the subset (nil = all).
func selected(gpus []int, i int) bool {
	if gpus == nil {
		return true
	}
	_, ok := slices.BinarySearch(gpus, i)
	return ok
}

func gpuListWords(gpus []int) string {
	parts := make([]string, len(gpus))
	for i, g := range gpus {
		parts[i] = strconv.Itoa(g)
	}
	if len(gpus) == 1 {
		return "GPU " + parts[0]
	}
	return "GPUs " + strings.Join(parts, ", ")
}

// checkSubset says which chosen GPUs the machine does not have.
func checkSubset(gpus []int, found []telemetry.GPU, where string) error {
	if gpus == nil {
		return nil
	}
	have := make([]int, 0, len(found))
	for _, g := range found {
		have = append(have, g.Index)
	}
	var missing []int
	for _, g := range gpus {
		if !slices.Contains(have, g) {
			missing = append(missing, g)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(have)
	hasWords := "no GPUs"
	if len(have) > 0 {
		hasWords = gpuListWords(have)
	}
	return fmt.Errorf("%s has no %s (it has %s); fix ?gpus= in the GPU source", where, gpuListWords(missing), hasWords)
}

func keepSelected(gpus []int, all []telemetry.GPU) []telemetry.GPU {
	if gpus == nil {
		return all
	}
	out := all[:0:0]
	for _, g := range all {
		if selected(gpus, g.Index) {
			out = append(out, g)
		}
	}
	return out
}

func checkInterval(interval time.Duration) (time.Duration, error) {
	if interval == 0 {
		return DefaultInterval, nil
	}
	if interval < MinInterval {
		return 0, fmt.Errorf("the GPU sampling interval %s is shorter than the %s minimum", interval, MinInterval)
	}
	return interval, nil
}
