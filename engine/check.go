package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/hw"
)

// EndpointReport is what the endpoint screen's Test shows: the served
// models, the engine behind them, and what the compat probe found.
type EndpointReport struct {
	Models      []Model
	Model       string // the model probed
	Detection   results.Detection
	Compat      results.Compat
	ServerModel string
	Warnings    []string
	// Speed is what the speed test's streams measured after the probe
	// (measureSpeed), nil when they could not say (EstimatePlan reads it).
	Speed *TestedSpeed
}

// Check runs the method's first two steps (model list and compat probe)
// without measuring anything. With several models served and none chosen
// it probes the first, so the user still sees what the server accepts.
func Check(ctx context.Context, ep setup.Endpoint, model string) (*EndpointReport, error) {
	sess, err := newSession(ep, Observer{})
	if err != nil {
		return nil, err
	}
	// The method's first two steps, as a run with the default plan takes
	// them.
	plan := setup.DefaultPlan()
	plan.Model = model
	r := &runner{session: sess, plan: plan}
	r.file = r.newFile()
	if err := r.session.check(ctx, model, true); err != nil {
		return nil, err
	}
	rep := &EndpointReport{Model: r.model, Detection: *r.detection}
	for _, id := range r.served {
		m := Model{ID: id}
		if id == r.model {
			m.OwnedBy, m.ContextLength = rep.Detection.OwnedBy, rep.Detection.ContextLength
		}
		rep.Models = append(rep.Models, m)
	}
	if err := r.probe(ctx); err != nil {
		return rep, err
	}
	// The probe loaded the model: Ollama can say its context now.
	_ = r.learnContext(ctx, 0, 0, r.probeOut.ttft)
	rep.Detection = *r.detection
	rep.Compat = *r.file.Local.Compat
	rep.ServerModel = r.srvModel
	rep.Warnings = r.warnings
	if sp, ok := r.measureSpeed(ctx); ok {
		rep.Speed = &sp
	}
	return rep, nil
}

func modelIDs(models []Model) []string {
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = m.ID
	}
	return ids
}

// Lines says in words what a Test found: on failure the reason first, then
// whatever was learned before it.
func (r *EndpointReport) Lines(err error) []string {
	var out []string
	if err != nil {
		out = append(out, "Failed: "+err.Error())
	}
	if r == nil {
		return out
	}
	if n := len(r.Models); n > 0 {
		ids := make([]string, n)
		for i, m := range r.Models {
			ids[i] = m.ID
		}
		word := "models"
		if n == 1 {
			word = "model"
		}
		out = append(out, fmt.Sprintf("Serving %d %s: %s", n, word, strings.Join(ids, ", ")))
	}
	d := r.Detection
	switch {
	case d.Family != "" && d.Version != "":
		out = append(out, fmt.Sprintf("Engine: %s %s", d.Family, d.Version))
	case d.Family != "":
		out = append(out, "Engine: "+d.Family+" (version not reported)")
	default:
		out = append(out, "Engine: not recognised")
	}
	if d.ServerHeader != "" {
		out = append(out, "Server header: "+d.ServerHeader)
	}
	if d.ContextLength > 0 {
		line := fmt.Sprintf("Context length: %d tokens", d.ContextLength)
		if d.ContextSource != "" {
			line += " (" + d.ContextSource + ")"
		}
		out = append(out, line)
	}
	switch {
	case d.ParallelSlots > 0:
		out = append(out, fmt.Sprintf("Requests served at once: %d (%s)", d.ParallelSlots, d.ParallelSource))
	case d.Family == results.FamilyOllama:
		// Ollama does not say; its default is one.
		out = append(out, "Requests served at once: not reported (Ollama's default is 1 unless OLLAMA_NUM_PARALLEL is set); a run finds it from its own levels")
	}
	if err != nil || r.Compat.Attempts == 0 {
		return out
	}
	c := r.Compat
	line := "Streaming chat on " + r.Model + ": accepted"
	switch {
	case c.IgnoreEOS && d.Family == results.FamilyOllama:
		// Seen on Ollama 0.24.0: the field is taken and ignored.
		line += "; ignore_eos accepted but ignored (Ollama): answers stop at the model's end of sequence, so their lengths vary"
	case c.IgnoreEOS:
		line += "; ignore_eos accepted (fixed-length answers)"
	default:
		line += "; ignore_eos refused (answers may stop early)"
	}
	out = append(out, line)
	if c.Usage {
		out = append(out, "Token usage: reported, so prompts are calibrated and tokens counted by the server")
	} else {
		out = append(out, "Token usage: not reported, so tokens are counted as stream chunks")
	}
	if r.ServerModel != "" && r.ServerModel != r.Model {
		out = append(out, "The server answers as "+r.ServerModel)
	}
	if t, _ := r.Detection.PlacementWords(); t != "" {
		out = append(out, "Where the model runs: "+t)
	}
	return append(out, r.speedLine())
}

// speedLine says the tested speed and how long the default plan takes at
// it, so a slow server's owner knows before a run.
func (r *EndpointReport) speedLine() string {
	if r.Speed == nil {
		return "Speed: not measured (the short test stream failed or gave fewer than two tokens), so how long a plan takes is not estimated"
	}
	d := setup.DefaultPlan()
	return fmt.Sprintf("Speed: %s; the default plan (%s) takes %s at this speed",
		r.Speed, PlanSize(d), FormatDuration(EstimatePlan(d, *r.Speed, EstimateSlots(&r.Detection))))
}

// TestEndpoint is the endpoint Test that the Endpoints screen and
// kovara-bench check both show, in the same words: what Check found, then
// whether the server's /metrics answers with queue gauges, then what the
// endpoint's GPU telemetry source sees. err is Check's (nil when the
// server took a streaming chat request).
func TestEndpoint(ctx context.Context, ep setup.Endpoint) ([]string, error) {
	lines, _, err := TestEndpointReport(ctx, ep)
	return lines, err
}

// TestEndpointReport is TestEndpoint with what Check found (nil when the
// check failed before the model list), for a caller that keeps it: the
// app remembers each endpoint's context length.
func TestEndpointReport(ctx context.Context, ep setup.Endpoint) ([]string, *EndpointReport, error) {
	rep, err := Check(ctx, ep, "")
	lines := rep.Lines(err)
	if err == nil {
		lines = append(lines, metricsLine(ctx, ep))
	}
	if ep.GPU != "" {
		lines = append(lines, gpuLine(ctx, ep.GPU))
	}
	if ep.Wall != "" {
		lines = append(lines, wallLine(ctx, ep.Wall, ep.WallToken))
	}
	return lines, rep, err
}

// wallLine says what the endpoint's wall plug reads now, its family
// found from what it answers: "Wall power: Shelly (Gen2 or later) at
// 192.168.1.40: 84.2 W now (switch:0)".
func wallLine(ctx context.Context, wall, token string) string {
	w, err := hw.ParseWall(wall, token)
	if err == nil {
		var r hw.WallReading
		if r, err = w.DetectWall(ctx); err == nil {
			return "Wall power: " + r.String(w.Family, w.Host())
		}
	}
	return "Wall power: " + scrub(err.Error(), token)
}

// metricsLine says whether the server publishes the queue gauges the live
// view charts.
func metricsLine(ctx context.Context, ep setup.Endpoint) string {
	m, err := ReadServerMetrics(ctx, ep)
	if err != nil || m.Family == "" {
		return "Server metrics: no /metrics with queue gauges (the live view shows the client's numbers only)"
	}
	line := "Server metrics: " + results.FamilyName(m.Family) + " /metrics answers"
	if m.Running != nil && m.Waiting != nil {
		line += fmt.Sprintf(" (%.0f running, %.0f waiting now)", *m.Running, *m.Waiting)
	}
	return line
}

// gpuLine says what the endpoint's GPU telemetry source sees.
func gpuLine(ctx context.Context, source string) string {
	src, err := hw.ParseSource(source)
	if err != nil || src == nil {
		return "GPU telemetry: " + fmt.Sprint(err)
	}
	ictx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	inv, err := src.Inventory(ictx)
	if err != nil {
		return "GPU telemetry (" + src.String() + "): " + err.Error()
	}
	return "GPUs (" + src.String() + "): " + hw.Summary(inv)
}
