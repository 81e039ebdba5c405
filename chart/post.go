package chart

import (
	"strings"

	"github.com/kovara/desktop/engine/results"
)

// The size every chart leaves the app at (the app's Save PNG, the CLI's
// --png): 16:9 at 1200 pixels wide, which a forum post, a GitHub issue or
// a chat shows whole without scaling it down, with text and lines half as
// large again as on a screen so they read there. A saved chart never
// depends on how large the window was.
const (
	PostWidth, PostHeight = 1200, 675
	PostScale             = 1.5
)

// Post is spec as a file shows it outside the app: at PostWidth ×
// PostHeight in the light palette (dark text on white, which reads on a
// forum's page whatever the app's theme), its subtitle kept.
func Post(spec Spec) Spec {
	spec.Width, spec.Height, spec.Scale, spec.Palette = PostWidth, PostHeight, PostScale, Light()
	return spec
}

// PostTimeline is a timeline as Post makes a chart.
func PostTimeline(spec TimelineSpec) TimelineSpec {
	spec.Width, spec.Height, spec.Scale, spec.Palette = PostWidth, PostHeight, PostScale, Light()
	return spec
}

// RunName names a run where it is seen outside the app: its label (the
// name the person gave it in History), its model and its engine with its
// version, those of the three it has, joined by " · ".
func RunName(label, model, engine string) string {
	model = results.ModelName(model) // never the folder it lies in
	var parts []string
	for _, p := range []string{label, model, engine} {
		if p = strings.TrimSpace(p); p != "" && !containsFold(parts, p) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " · ")
}

// containsFold reports whether parts holds p, whatever the case (a
// label that is the model's name is said once).
func containsFold(parts []string, p string) bool {
	for _, q := range parts {
		if strings.EqualFold(q, p) {
			return true
		}
	}
	return false
}

// EngineOf is a Kovara result's engine and version as people name it
// ("llama.cpp b6190", "vLLM 0.10.1"): the manifest's where the run has
// one, else what the endpoint said it runs; "" when neither says.
func EngineOf(f *results.File) string {
	for _, r := range f.Runs {
		if r.Engine != nil && *r.Engine != "" {
			e := results.FamilyName(*r.Engine)
			if r.EngineVersion != nil && *r.EngineVersion != "" {
				e += " " + *r.EngineVersion
			}
			return e
		}
	}
	if d := f.Local.Detection; d != nil && d.Family != "" {
		return strings.TrimSpace(results.FamilyName(d.Family) + " " + d.Version)
	}
	return ""
}

// ModelOf is the model a Kovara result measured ("" when no level
// finished and none was cut short).
func ModelOf(f *results.File) string {
	if len(f.Runs) > 0 {
		return f.Runs[0].ModelID
	}
	if r := f.Local.PartialRun; r != nil {
		return r.ModelID
	}
	return ""
}

// RunOf names a Kovara result (RunName) with the label it has in
// History ("" for none, as the CLI's runs), said to be simulated when it
// was made against the built-in simulator (which answers as an engine
// would, and a posted chart must not pass for that engine's figures).
func RunOf(f *results.File, label string) string {
	return Simulated(RunName(label, ModelOf(f), EngineOf(f)), f.Local.Simulated)
}

// Simulated is a run's name, said to be simulated when it was.
func Simulated(name string, simulated bool) string {
	if !simulated {
		return name
	}
	return name + " · simulated"
}

// EngineName is an engine as History's summary holds it ("vllm 0.10.1",
// the family's id and its version) said as people write it ("vLLM
// 0.10.1").
func EngineName(engine string) string {
	family, version, _ := strings.Cut(strings.TrimSpace(engine), " ")
	return strings.TrimSpace(results.FamilyName(family) + " " + version)
}
