package hw

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kovara/desktop/internal/clip"
	"github.com/kovara/desktop/internal/prom"
	"github.com/kovara/desktop/telemetry"
)

// exporterSource fetches a Prometheus GPU exporter's page.
type exporterSource struct {
	url     string // what is fetched; may hold a user and password
	host    string // host[:port] only, for labels and sentences
	gpus    []int
	client  *http.Client
	timeout time.Duration // every fetch
	maxBody int64
}

func newExporterSource(u, host string, gpus []int) *exporterSource {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2
	return &exporterSource{
		url: u, host: host, gpus: gpus,
		client:  &http.Client{Transport: tr},
		timeout: 5 * time.Second,
		maxBody: 8 << 20,
	}
}

func (e *exporterSource) Kind() telemetry.GPUSourceKind { return telemetry.GPUSourceExporter }
func (e *exporterSource) Host() string                  { return e.host }
func (e *exporterSource) GPUs() []int                   { return append([]int(nil), e.gpus...) }

func (e *exporterSource) String() string {
	s := "the GPU exporter at " + e.host
	if e.gpus != nil {
		s += " (" + gpuListWords(e.gpus) + ")"
	}
	return s
}

func (e *exporterSource) where() string { return "the GPU exporter at " + e.host }

// exporterGPU is one card as an exporter page shows it.
type exporterGPU struct {
	info    telemetry.GPU
	reading Sample
}

// Inventory fetches the page once.
func (e *exporterSource) Inventory(ctx context.Context) ([]telemetry.GPU, error) {
	gs, err := e.fetch(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errors.New(e.where() + " " + err.Error())
	}
	out := make([]telemetry.GPU, len(gs))
	for i, g := range gs {
		out[i] = g.info
	}
	if err := checkSubset(e.gpus, out, e.where()); err != nil {
		return nil, err
	}
	return keepSelected(e.gpus, out), nil
}

// Start fetches the page every interval.
func (e *exporterSource) Start(ctx context.Context, interval time.Duration) (*Sampler, error) {
	interval, err := checkInterval(interval)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	smp := newSampler(interval, e.gpus, e.where(), cancel)
	smp.wg.Add(1)
	limit := hangIntervals*interval + e.timeout // silence, or failed fetches, for this long
	go smp.watch(sctx, limit, limit, func(waited time.Duration, _ bool, problem string) string {
		msg := fmt.Sprintf("%s gave no readings for %s", smp.what, seconds(waited))
		if problem != "" {
			msg += " (last try: it " + problem + ")"
		}
		return msg
	})
	go func() {
		defer smp.finish()
		defer e.client.CloseIdleConnections()
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			e.poll(sctx, smp)
			select {
			case <-sctx.Done():
				return
			case <-tk.C:
			}
		}
	}()
	return smp, nil
}

func (e *exporterSource) poll(ctx context.Context, smp *Sampler) {
	gs, err := e.fetch(ctx)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		smp.noteProblem(err.Error())
		return
	}
	readings := make([]Sample, len(gs))
	for i, g := range gs {
		readings[i] = g.reading
	}
	smp.addTick(time.Now(), readings)
}

// fetch GETs and parses the page within e.timeout. Its errors are the end
// of a sentence that starts with "the GPU exporter at host".
func (e *exporterSource) fetch(ctx context.Context) ([]exporterGPU, error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url, nil)
	if err != nil {
		return nil, errors.New("has an address we cannot use")
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=0.9,*/*;q=0.1")
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, errors.New(netProblem(ctx, err, e.timeout))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("answered HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, e.maxBody+1))
	if err != nil {
		return nil, errors.New(netProblem(ctx, err, e.timeout))
	}
	if int64(len(body)) > e.maxBody {
		return nil, fmt.Errorf("sent a page larger than %d MiB", e.maxBody>>20)
	}
	return parseExporterPage(body)
}

// netProblem says in words why a request failed, without the URL (which
// may carry a password).
func netProblem(ctx context.Context, err error, timeout time.Duration) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return "did not answer within " + seconds(timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused the connection (is the exporter running, and is the port right?)"
	case errors.As(err, &dnsErr):
		return "could not be found (its host name does not resolve)"
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return "has a TLS certificate this machine does not trust"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return "could not be reached (" + clip.Line(err.Error(), 160) + ")"
}

// parseExporterPage reads a dcgm-exporter, nvidia_gpu_exporter, AMD
// device-metrics-exporter, macmon serve or all-smi api page, chosen by its
// families.
// Its errors finish a sentence that starts with "the GPU exporter at host".
func parseExporterPage(body []byte) ([]exporterGPU, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		// all-smi writes HELP and TYPE again before each series of a
		// family, which the strict parser refuses: read it without them.
		if once, changed := withoutHelpAndType(body); changed {
			p = expfmt.NewTextParser(model.UTF8Validation)
			fams, err = p.TextToMetricFamilies(bytes.NewReader(once))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sent a page that is not Prometheus metrics text (%s)", clip.Line(err.Error(), 160))
	}
	var gs []exporterGPU
	switch {
	case hasFamilyPrefix(fams, "DCGM_FI_"):
		gs = parseDCGM(fams)
	case hasFamilyPrefix(fams, "nvidia_smi_"):
		gs = parseNvidiaSMIExporter(fams)
	case hasFamilyPrefix(fams, "macmon_"):
		gs = parseMacmonExporter(fams)
	case hasFamilyPrefix(fams, "all_smi_"):
		gs = parseAllSMIExporter(fams)
	case isAMDExporter(fams):
		gs = parseAMDExporter(fams)
	default:
		return nil, errors.New("shows no GPU metrics we know (DCGM_FI_DEV_* from dcgm-exporter, nvidia_smi_* from nvidia_gpu_exporter, gpu_* from AMD's device-metrics-exporter, macmon_* from macmon serve or all_smi_* from all-smi api)")
	}
	if len(gs) == 0 {
		return nil, errors.New("lists no GPUs")
	}
	return gs, nil
}

func hasFamilyPrefix(fams map[string]*dto.MetricFamily, prefix string) bool {
	for name := range fams {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// metricValue is a metric's value (prom.Value); a negative reading of
// power, energy, memory or utilisation counts as missing too.
func metricValue(m *dto.Metric) (float64, bool) {
	v, ok := prom.Value(m)
	if !ok || v < 0 {
		return 0, false
	}
	return v, true
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// reading gathers one metric of one GPU. dcgm-exporter may show a metric
// once for the whole GPU and once per MIG instance (label GPU_I_ID): the
// whole-GPU series wins; without it the instances are summed (memory) or
// their largest value is taken.
type reading struct {
	whole    float64
	hasWhole bool
	parts    map[string]float64
}

func (r *reading) add(v float64, instance string) {
	if instance == "" {
		if !r.hasWhole || v > r.whole {
			r.whole, r.hasWhole = v, true
		}
		return
	}
	if r.parts == nil {
		r.parts = map[string]float64{}
	}
	if old, ok := r.parts[instance]; !ok || v > old {
		r.parts[instance] = v
	}
}

func (r *reading) value(sum bool) opt {
	if r == nil {
		return opt{}
	}
	if r.hasWhole {
		return opt{r.whole, true}
	}
	if len(r.parts) == 0 {
		return opt{}
	}
	var out float64
	first := true
	for _, v := range r.parts {
		switch {
		case sum:
			out += v
		case first || v > out:
			out = v
		}
		first = false
	}
	return opt{out, true}
}

// gpuBuild collects one GPU's labels and readings while a page is parsed.
type gpuBuild struct {
	index    int
	hasIndex bool
	name     string
	bus      string
	driver   string
	vals     map[string]*reading
}

func (g *gpuBuild) add(metric string, v float64, instance string) {
	if g.vals == nil {
		g.vals = map[string]*reading{}
	}
	r := g.vals[metric]
	if r == nil {
		r = &reading{}
		g.vals[metric] = r
	}
	r.add(v, instance)
}

// opt is a reading that may be missing.
type opt struct {
	v  float64
	ok bool
}

func (o opt) div(by float64) opt { return opt{o.v / by, o.ok} }

// percent turns a 0–1 ratio into a percentage without float dust.
func (o opt) percent() opt { return opt{roundTo(o.v*100, 6), o.ok} }

func (g *gpuBuild) get(metric string) opt { return g.vals[metric].value(false) }

func (g *gpuBuild) sum(metric string) opt { return g.vals[metric].value(true) }

func (g *gpuBuild) firstOf(metrics ...string) opt {
	for _, m := range metrics {
		if o := g.get(m); o.ok {
			return o
		}
	}
	return opt{}
}

func setFloat(dst *float64, bits *Field, f Field, o opt) {
	if o.ok {
		*dst = o.v
		*bits |= f
	}
}

func setInt(dst *int, bits *Field, f Field, o opt) {
	if o.ok && o.v == math.Trunc(o.v) && o.v < 1<<10 {
		*dst = int(o.v)
		*bits |= f
	}
}

func floatPtr(o opt) *float64 {
	if !o.ok {
		return nil
	}
	return &o.v
}

func intPtr(o opt) *int {
	if !o.ok || o.v != math.Trunc(o.v) || o.v >= 1<<10 {
		return nil
	}
	n := int(o.v)
	return &n
}

// dcgmWanted are the dcgm-exporter fields read; everything else is ignored.
var dcgmWanted = map[string]bool{
	"DCGM_FI_DEV_POWER_USAGE": true, "DCGM_FI_DEV_GPU_UTIL": true,
	"DCGM_FI_DEV_FB_USED": true, "DCGM_FI_DEV_FB_FREE": true, "DCGM_FI_DEV_FB_RESERVED": true, "DCGM_FI_DEV_FB_TOTAL": true,
	"DCGM_FI_DEV_SM_CLOCK": true, "DCGM_FI_DEV_GPU_TEMP": true,
	"DCGM_FI_DEV_PCIE_LINK_GEN": true, "DCGM_FI_DEV_PCIE_LINK_WIDTH": true,
	"DCGM_FI_DEV_PCIE_MAX_LINK_GEN": true, "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH": true,
	"DCGM_FI_DEV_POWER_MGMT_LIMIT": true, "DCGM_FI_DEV_ENFORCED_POWER_LIMIT": true,
}

// parseDCGM reads dcgm-exporter's DCGM_FI_DEV_* series, keyed by the gpu
// label (nvidia-smi's index). Units: W, %, MiB, MHz, °C.
func parseDCGM(fams map[string]*dto.MetricFamily) []exporterGPU {
	byIndex := map[int]*gpuBuild{}
	for name, fam := range fams {
		if !strings.HasPrefix(name, "DCGM_FI_") {
			continue
		}
		for _, m := range fam.GetMetric() {
			idx, ok := smiInt(label(m, "gpu"))
			if !ok {
				continue
			}
			g := byIndex[idx]
			if g == nil {
				g = &gpuBuild{index: idx, hasIndex: true}
				byIndex[idx] = g
			}
			if g.name == "" {
				g.name = label(m, "modelName")
			}
			if g.bus == "" {
				g.bus = label(m, "pci_bus_id")
			}
			if g.driver == "" {
				g.driver = label(m, "DCGM_FI_DRIVER_VERSION")
			}
			if !dcgmWanted[name] {
				continue
			}
			if v, ok := metricValue(m); ok {
				g.add(name, v, label(m, "GPU_I_ID"))
			}
		}
	}
	var out []exporterGPU
	for _, idx := range sortedKeys(byIndex) {
		g := byIndex[idx]
		info := telemetry.GPU{Index: idx, Name: g.name, DriverVersion: g.driver}
		if g.bus != "" {
			info.PCIBusID = normBus(g.bus)
		}
		if total := g.get("DCGM_FI_DEV_FB_TOTAL"); total.ok {
			info.MemoryTotalMiB = floatPtr(total)
		} else if used, free := g.sum("DCGM_FI_DEV_FB_USED"), g.sum("DCGM_FI_DEV_FB_FREE"); used.ok && free.ok {
			info.MemoryTotalMiB = floatPtr(opt{used.v + free.v + g.sum("DCGM_FI_DEV_FB_RESERVED").v, true})
		}
		info.PCIeGenCurrent = intPtr(g.get("DCGM_FI_DEV_PCIE_LINK_GEN"))
		info.PCIeWidthCurrent = intPtr(g.get("DCGM_FI_DEV_PCIE_LINK_WIDTH"))
		info.PCIeGenMax = intPtr(g.get("DCGM_FI_DEV_PCIE_MAX_LINK_GEN"))
		info.PCIeWidthMax = intPtr(g.get("DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH"))
		info.PowerLimitW = floatPtr(g.firstOf("DCGM_FI_DEV_POWER_MGMT_LIMIT", "DCGM_FI_DEV_ENFORCED_POWER_LIMIT"))

		r := Sample{GPU: idx}
		setFloat(&r.PowerW, &r.Valid, FieldPower, g.get("DCGM_FI_DEV_POWER_USAGE"))
		setFloat(&r.UtilPct, &r.Valid, FieldUtil, g.get("DCGM_FI_DEV_GPU_UTIL"))
		setFloat(&r.MemUsedMiB, &r.Valid, FieldMemUsed, g.sum("DCGM_FI_DEV_FB_USED"))
		setFloat(&r.SMClockMHz, &r.Valid, FieldSMClock, g.get("DCGM_FI_DEV_SM_CLOCK"))
		setFloat(&r.TempC, &r.Valid, FieldTemp, g.get("DCGM_FI_DEV_GPU_TEMP"))
		setInt(&r.PCIeGen, &r.Valid, FieldPCIeGen, g.get("DCGM_FI_DEV_PCIE_LINK_GEN"))
		setInt(&r.PCIeWidth, &r.Valid, FieldPCIeWidth, g.get("DCGM_FI_DEV_PCIE_LINK_WIDTH"))
		out = append(out, exporterGPU{info: info, reading: r})
	}
	return out
}

// parseNvidiaSMIExporter reads utkuozdemir/nvidia_gpu_exporter's
// nvidia_smi_* series. Every series carries the GPU's uuid label; it is
// only used here to join the series and is never kept. Units are converted
// back to nvidia-smi's: bytes → MiB, Hz → MHz, ratio → %.
func parseNvidiaSMIExporter(fams map[string]*dto.MetricFamily) []exporterGPU {
	byID := map[string]*gpuBuild{}
	get := func(m *dto.Metric) *gpuBuild {
		id := label(m, "uuid")
		if id == "" {
			return nil
		}
		g := byID[id]
		if g == nil {
			g = &gpuBuild{}
			byID[id] = g
		}
		return g
	}
	for _, m := range fams["nvidia_smi_gpu_info"].GetMetric() {
		g := get(m)
		if g == nil {
			continue
		}
		g.name, g.driver = label(m, "name"), label(m, "driver_version")
		g.bus = label(m, "pci_bus_id")
		if idx, ok := smiInt(label(m, "index")); ok {
			g.index, g.hasIndex = idx, true
		}
	}
	for _, name := range []string{
		"nvidia_smi_index", "nvidia_smi_power_draw_watts", "nvidia_smi_utilization_gpu_ratio",
		"nvidia_smi_memory_used_bytes", "nvidia_smi_memory_total_bytes", "nvidia_smi_clocks_current_sm_clock_hz",
		"nvidia_smi_temperature_gpu", "nvidia_smi_pcie_link_gen_current", "nvidia_smi_pcie_link_width_current",
		"nvidia_smi_pcie_link_gen_max", "nvidia_smi_pcie_link_width_max", "nvidia_smi_power_limit_watts",
		"nvidia_smi_enforced_power_limit_watts", "nvidia_smi_pci_device_id",
	} {
		for _, m := range fams[name].GetMetric() {
			if g := get(m); g != nil {
				if v, ok := metricValue(m); ok {
					g.add(name, v, "")
				}
			}
		}
	}
	builds := make([]*gpuBuild, 0, len(byID))
	for _, g := range byID {
		if !g.hasIndex {
			if o := g.get("nvidia_smi_index"); o.ok && o.v == math.Trunc(o.v) && o.v < 1<<16 {
				g.index, g.hasIndex = int(o.v), true
			}
		}
		builds = append(builds, g)
	}
	// Without an index anywhere, number the cards in PCI bus order, which
	// is nvidia-smi's own order.
	slices.SortFunc(builds, func(a, b *gpuBuild) int { return strings.Compare(normBus(a.bus), normBus(b.bus)) })
	for i, g := range builds {
		if !g.hasIndex {
			g.index = i
		}
	}
	slices.SortStableFunc(builds, func(a, b *gpuBuild) int { return a.index - b.index })
	builds = slices.CompactFunc(builds, func(a, b *gpuBuild) bool { return a.index == b.index })

	const mib = 1 << 20
	var out []exporterGPU
	for _, g := range builds {
		info := telemetry.GPU{Index: g.index, Name: g.name, DriverVersion: g.driver}
		if g.bus != "" {
			info.PCIBusID = normBus(g.bus)
		}
		if o := g.get("nvidia_smi_pci_device_id"); o.ok && o.v == math.Trunc(o.v) && o.v < 1<<32 {
			if id := deviceIDFromNumber(uint32(o.v)); id != "" {
				info.PCIDeviceID, info.PCIDeviceIDFrom = id, "nvidia-smi"
			}
		}
		info.MemoryTotalMiB = floatPtr(g.get("nvidia_smi_memory_total_bytes").div(mib))
		info.PCIeGenCurrent = intPtr(g.get("nvidia_smi_pcie_link_gen_current"))
		info.PCIeWidthCurrent = intPtr(g.get("nvidia_smi_pcie_link_width_current"))
		info.PCIeGenMax = intPtr(g.get("nvidia_smi_pcie_link_gen_max"))
		info.PCIeWidthMax = intPtr(g.get("nvidia_smi_pcie_link_width_max"))
		info.PowerLimitW = floatPtr(g.firstOf("nvidia_smi_power_limit_watts", "nvidia_smi_enforced_power_limit_watts"))

		r := Sample{GPU: g.index}
		setFloat(&r.PowerW, &r.Valid, FieldPower, g.get("nvidia_smi_power_draw_watts"))
		setFloat(&r.UtilPct, &r.Valid, FieldUtil, g.get("nvidia_smi_utilization_gpu_ratio").percent())
		setFloat(&r.MemUsedMiB, &r.Valid, FieldMemUsed, g.get("nvidia_smi_memory_used_bytes").div(mib))
		setFloat(&r.SMClockMHz, &r.Valid, FieldSMClock, g.get("nvidia_smi_clocks_current_sm_clock_hz").div(1e6))
		setFloat(&r.TempC, &r.Valid, FieldTemp, g.get("nvidia_smi_temperature_gpu"))
		setInt(&r.PCIeGen, &r.Valid, FieldPCIeGen, g.get("nvidia_smi_pcie_link_gen_current"))
		setInt(&r.PCIeWidth, &r.Valid, FieldPCIeWidth, g.get("nvidia_smi_pcie_link_width_current"))
		out = append(out, exporterGPU{info: info, reading: r})
	}
	return out
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// roundTo rounds v to the given number of decimals (for compact JSON).
func roundTo(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}
