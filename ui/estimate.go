package ui

import (
	"encoding/json"
	"fmt"
	"time"

	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/setup"
)

// prefSpeedPrefix keys what each endpoint's latest Test measured of its
// speed, for the plan estimate under the form.
const prefSpeedPrefix = "endpoint.speed."

// longPlan is how long a plan may take before the form offers a quick
// check instead.
const longPlan = 15 * time.Minute

// quickRequests is the requests per level of a quick check: enough for
// a median and a rough tail at each level, at least one per user.
const quickRequests = 20

// testedSpeed is what an endpoint's Test measured of its speed, the
// address it was measured at and the model.
type testedSpeed struct {
	URL   string             `json:"url"`
	Model string             `json:"model,omitempty"`
	Speed engine.TestedSpeed `json:"speed"`
}

// rememberSpeed keeps what ep's Test measured of model's speed; a Test
// that measured none forgets an older one.
func (u *App) rememberSpeed(ep setup.Endpoint, model string, sp *engine.TestedSpeed) {
	if ep.Name == "" {
		return
	}
	if sp == nil || !sp.Usable() {
		u.fyne.Preferences().RemoveValue(prefSpeedPrefix + ep.Name)
		return
	}
	data, err := json.Marshal(testedSpeed{URL: ep.URL, Model: model, Speed: *sp})
	if err != nil {
		return
	}
	u.fyne.Preferences().SetString(prefSpeedPrefix+ep.Name, string(data))
}

// speedOf is the speed the endpoint called name was tested at, for model
// ("" for whichever it tested), or nil when none is known for its
// address as saved now.
func (u *App) speedOf(name, model string) *engine.TestedSpeed {
	raw := u.fyne.Preferences().String(prefSpeedPrefix + name)
	var ts testedSpeed
	if raw == "" || json.Unmarshal([]byte(raw), &ts) != nil || !ts.Speed.Usable() {
		return nil
	}
	if model != "" && ts.Model != "" && model != ts.Model {
		return nil
	}
	if name != SimulatorName {
		saved, ok, err := u.endpoints.Get(name)
		if err != nil || !ok || saved.URL != ts.URL {
			return nil
		}
	}
	return &ts.Speed
}

// planEstimate says under the Kovara plan how long it takes on the chosen
// endpoint at its tested speed, repeat runs of it; and offers the quick
// check (fewer requests per level) when that is long.
func (f *kovaraForm) planEstimate(p setup.KovaraPlan, repeat int) string {
	s := f.s
	f.quickButton.Hide()
	name := s.endpointSelect.Selected
	if name == "" || name == SimulatorName {
		return ""
	}
	model := s.chosenModel()
	sp := s.u.speedOf(name, model)
	if sp == nil {
		return " Test the endpoint under Endpoints to learn how long this plan takes on it."
	}
	slots := engine.EstimateSlots(s.u.checkedDetection(name, model))
	d := time.Duration(repeat) * engine.EstimatePlan(p, *sp, slots)
	note := fmt.Sprintf(" %s on this server at its tested speed (%s).", capitalize(engine.FormatDuration(d)), sp)
	if q, ok := quickPlan(p); ok && d > longPlan {
		qd := time.Duration(repeat) * engine.EstimatePlan(q, *sp, slots)
		f.quickButton.SetText(fmt.Sprintf("Quick check: %d requests per level (%s)", q.Requests, engine.FormatDuration(qd)))
		f.quickButton.Show()
		note += " That is long: a quick check sends fewer requests per level."
	}
	return note
}

// quickPlan is p as a quick check: quickRequests per level, or the
// highest level's users when more; ok is false when p is no larger.
func quickPlan(p setup.KovaraPlan) (setup.KovaraPlan, bool) {
	q := p
	q.Requests = quickRequests
	for _, c := range p.Concurrency {
		q.Requests = max(q.Requests, c)
	}
	return q, q.Requests < p.Requests
}

// newQuickButton makes the quick check's button, hidden until a plan is
// long: it sets the requests per level (quickPlan).
func (f *kovaraForm) newQuickButton() *widget.Button {
	b := widget.NewButton("Quick check", func() {
		p, err := f.plan()
		if q, ok := quickPlan(p); err == nil && ok {
			f.requestsEntry.SetText(fmt.Sprint(q.Requests))
		}
	})
	b.Hide()
	return b
}

// stageWeights weighs the plan's levels against each other for the live
// view's whole-plan bar and time left (engine.LevelWaves), on a server
// serving slots requests at once; nil when slots is not known (each level
// then counts its requests) or the form does not read.
func (f *kovaraForm) stageWeights(slots int) []float64 {
	p, err := f.plan()
	if err != nil || slots <= 0 {
		return nil
	}
	return engine.LevelWaves(p, slots)
}
