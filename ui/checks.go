package ui

import (
	"encoding/json"
	"errors"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// prefCheckPrefix keys what each endpoint's latest check found out about
// its context (the Endpoints screen's Test, or a run's endpoint check),
// so the Benchmark form can refuse a plan the server cannot hold.
const prefCheckPrefix = "endpoint.check."

// lastCheck is what an endpoint's latest check reported, the address it
// was made against and the model it checked: a check of another address
// says nothing about the endpoint as saved now, nor a check of one model
// about another's context (Ollama gives each its own).
type lastCheck struct {
	URL       string            `json:"url"`
	Model     string            `json:"model,omitempty"`
	Detection results.Detection `json:"detection"`
}

// rememberCheck keeps what a check of ep's model found (d), or, when the
// run was refused for its context, what the refusal read; a check that
// reported no context length forgets an older one. model is "" when the
// run never learned which model it asked for. The built-in simulator's
// address changes with every start, so it is kept without one.
func (u *App) rememberCheck(ep setup.Endpoint, model string, d *results.Detection, err error) {
	if ep.Name == "" {
		return
	}
	u.rememberRunCheck(ep, err) // the Endpoints list's status
	var ce *engine.ContextError
	switch {
	case errors.As(err, &ce):
		d = &results.Detection{Family: ce.Family, ContextLength: ce.Context, ContextSource: ce.Source}
	case d == nil:
		return // the check did not get as far as the detection
	}
	lc := lastCheck{URL: ep.URL, Model: model, Detection: *d}
	if ep.Name == SimulatorName {
		lc.URL = ""
	}
	data, jerr := json.Marshal(lc)
	if jerr != nil {
		return
	}
	u.fyne.Preferences().SetString(prefCheckPrefix+ep.Name, string(data))
}

// forgetCheck drops what was kept about an endpoint's checks.
func (u *App) forgetCheck(name string) {
	u.fyne.Preferences().RemoveValue(prefCheckPrefix + name)
}

// checkedDetection is what the latest check of the endpoint called name
// reported about model ("" for whichever it checked), or nil when none is
// known for its address as saved now and that model.
func (u *App) checkedDetection(name, model string) *results.Detection {
	raw := u.fyne.Preferences().String(prefCheckPrefix + name)
	if raw == "" {
		return nil
	}
	var lc lastCheck
	if json.Unmarshal([]byte(raw), &lc) != nil {
		return nil
	}
	if model != "" && lc.Model != "" && model != lc.Model {
		return nil
	}
	if name != SimulatorName {
		saved, ok, err := u.endpoints.Get(name)
		if err != nil || !ok || saved.URL != lc.URL {
			return nil
		}
	}
	return &lc.Detection
}

// contextProblem says why a plan of input and output tokens cannot run on
// model at the endpoint called name, from what its latest check
// reported, or "".
func (u *App) contextProblem(name, model string, input, output int) string {
	ce := engine.FitContext(input, output, u.checkedDetection(name, model))
	if ce == nil {
		return ""
	}
	ce.Lower = "the input or output tokens"
	if ce.Source != "" {
		ce.Source += ", at the endpoint's last check"
	} else {
		ce.Source = "at the endpoint's last check"
	}
	return "Cannot run: " + ce.Error() + "."
}

// contextPlanProblem is contextProblem for the context plan: its deepest
// depth given, with the answer and the follow-up's turn, against the
// context the endpoint's last check read (setup.ContextPlan.Fit).
func (u *App) contextPlanProblem(name, model string, p setup.ContextPlan) string {
	d := u.checkedDetection(name, model)
	if d == nil {
		return ""
	}
	at := *d
	if at.ContextSource != "" {
		at.ContextSource += ", at the endpoint's last check"
	} else {
		at.ContextSource = "at the endpoint's last check"
	}
	if err := engine.ContextFit(p, &at, "the depths or the output tokens"); err != nil {
		return "Cannot run: " + err.Error() + "."
	}
	return ""
}

// detectionOf is a run's endpoint detection, or nil without a run.
func detectionOf(f *results.File) *results.Detection {
	if f == nil {
		return nil
	}
	return f.Local.Detection
}

// requestedModel is the model a run asked for: as its file records it,
// else as its plan named it ("" for the only one served).
func requestedModel(f *results.File, planned string) string {
	if f != nil && f.Local.RequestedModel != "" {
		return f.Local.RequestedModel
	}
	return planned
}
