//go:build unix

package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/hw/hwtest"
	"github.com/kovara/desktop/internal/shellwords"
)

// TestStagesRecordGPUs: the three-stage plan starts like every plan, so a
// local GPU source gives it power and energy per stage, and the cards the
// way the cmp.wiki protocol reports them, in the document and its wiki
// block. (It once accepted --gpu local and recorded nothing.)
func TestStagesRecordGPUs(t *testing.T) {
	hwtest.StandInSMI(t, 250)
	_, url := startSim(t, sim.Config{TokenInterval: 5 * time.Millisecond, PrefillRate: 100000, NaturalStop: longAnswers})
	p := setup.DefaultStagesPlan()
	p.Quick, p.Users, p.Timeout, p.SpecDecode = true, 3, 30*time.Second, "none"
	res, err := RunStages(context.Background(), p, setup.Endpoint{URL: url, GPU: "local"}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	tel := res.Local.Telemetry
	if tel == nil || len(tel.Inventory) != 2 || tel.Tool != "nvidia-smi" {
		t.Fatalf("telemetry %+v (warnings %v)", tel, res.Warnings)
	}
	// The energy table names the stages as the plan does.
	if et := results.EnergyTable(res, nil); et == nil || et.Rows[0][0] != "1 user (every prompt)" || !strings.HasPrefix(et.Rows[len(et.Rows)-2][0], "3 users at once") {
		t.Errorf("energy table %+v", et)
	}
	for stage, name := range map[int]string{1: "decode", 3: "many users"} {
		lv, ok := tel.Levels[stage]
		if !ok || lv.MeanPowerW == nil || *lv.MeanPowerW < 450 || *lv.MeanPowerW > 550 || lv.EnergyJ == nil || lv.OutputTokens == 0 {
			t.Errorf("stage %d (%s): %+v, want about 500 W over both cards and its tokens", stage, name, lv)
		}
	}
	g := res.GPUs
	if g == nil || len(g.Cards) != 2 || g.Caution != "" || g.Source != results.GPUSourceLocal {
		t.Fatalf("gpus %+v", g)
	}
	rows := g.CardRows()
	if want := []string{"0", "NVIDIA GeForce RTX 3090", "Gen4 x16", "350", "250", "24576", "550.120"}; !containsAll(strings.Join(rows[0], "|"), want) ||
		!strings.Contains(strings.Join(rows[1], "|"), "Gen4 x16") {
		t.Errorf("card rows %q: the link under load is Gen4 x16 on both (card 1 idled at x4)", rows)
	}
	wiki := res.WikiBlock()
	for _, want := range []string{"|cards=2× NVIDIA GeForce RTX 3090\n", "|card_count=2\n", "|pcie_link=Gen4\n", "|pcie_width=x16\n", "|power_cap=350 W\n", "|driver=550.120\n"} {
		if !strings.Contains(wiki, want) {
			t.Errorf("wiki block lacks %q:\n%s", want, wiki)
		}
	}
	data, err := results.MarshalDocument(res)
	if err != nil {
		t.Fatal(err)
	}
	back, err := results.StagesDoc.Decode(data)
	if err != nil || back.GPUs == nil || back.Local.Telemetry == nil {
		t.Fatalf("round trip: %v", err)
	}
}

// TestSpecDecRecordsGPUs: energy per speculative-decoding level.
func TestSpecDecRecordsGPUs(t *testing.T) {
	hwtest.StandInSMI(t, 250)
	_, url := startSim(t, sim.Config{TokenInterval: 5 * time.Millisecond, PrefillRate: 100000, NaturalStop: longAnswers})
	p := setup.DefaultSpecDecPlan()
	p.Levels, p.MaxTokens, p.Requests = []int{1, 2}, 64, 4
	res, err := RunSpecDec(context.Background(), p, setup.Endpoint{URL: url, GPU: "local"}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	tel := res.Local.Telemetry
	if tel == nil {
		t.Fatalf("no telemetry (warnings %v)", res.Warnings)
	}
	for _, c := range p.Levels {
		if lv, ok := tel.Levels[c]; !ok || lv.EnergyJ == nil || lv.TokensPerJoule == nil {
			t.Errorf("level %d: %+v", c, lv)
		}
	}
}

// The cards come with a caution when they may not be the server's.
func TestStagesCardsCaution(t *testing.T) {
	t.Parallel()
	tel := &results.Telemetry{Source: results.GPUSourceLocal, Host: "localhost", Inventory: []results.GPU{{Index: 0, Name: "NVIDIA GeForce RTX 4090"}}}
	for _, tc := range []struct {
		endpoint, source, host, caution string
	}{
		{"http://127.0.0.1:8080", "local", "localhost", ""},
		{"http://localhost:8080", "local", "localhost", ""},
		{"http://[::1]:8080", "local", "localhost", ""},
		{"http://10.0.0.5:8000", "local", "localhost", "the endpoint is another machine"},
		{"http://gpubox:8000", "ssh", "gpubox", ""},
		{"http://gpubox:8000", "ssh", "me@gpubox", ""},
		{"http://10.0.0.5:8000", "ssh", "lab", "another host than the endpoint's"},
	} {
		base, err := setup.ParseBase(tc.endpoint)
		if err != nil {
			t.Fatal(err)
		}
		tel.Source, tel.Host = results.GPUSourceKind(tc.source), tc.host
		s := &stagesRun{session: &session{base: base}}
		g := s.cards(tel)
		if g == nil || (tc.caution == "") != (g.Caution == "") || !strings.Contains(g.Caution, tc.caution) {
			t.Errorf("%s read by %s on %s: %+v, want caution %q", tc.endpoint, tc.source, tc.host, g, tc.caution)
		}
	}
	tel.Source = results.GPUSourceExporter
	if g := (&stagesRun{session: &session{}}).cards(tel); g != nil {
		t.Errorf("an exporter's page gave cards %+v", g)
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// TestTuneReadsPowerLimitBack: a settings comparison on an endpoint with
// a GPU source says beside each setting the power limit its runs read
// back from the cards (two RTX 3090s capped at 350 W each), where a
// power-limit comparison shows what its commands really applied.
func TestTuneReadsPowerLimitBack(t *testing.T) {
	hwtest.StandInSMI(t, 250)
	cfg := fastSim()
	cfg.Models = []string{"m"}
	_, url := startSim(t, cfg)
	plan := setup.TunePlan{
		Settings: []setup.TuneSetting{{Name: "A", How: setup.ByModel, Model: "m"}, {Name: "B", How: setup.ByModel, Model: "m"}},
		Rounds:   2, Inner: tinyTunePlan(), NoAnswers: true,
	}
	var log tuneLog
	res, err := RunTune(context.Background(), plan, setup.Endpoint{URL: url, GPU: "local"}, log.observer())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Settings {
		if s.Server == nil || s.Server.PowerLimitW == nil || *s.Server.PowerLimitW != 700 || !strings.Contains(s.Server.Describe(), "GPU power limit 700 W") {
			t.Errorf("%s: server %+v (%q), want the 700 W read back", s.Name, s.Server, s.Server.Describe())
		}
	}
}

// TestThrottleSaid: a GPU that reports its power cap throughout (a
// stand-in nvidia-smi answering clocks_event_reasons.active 0x4) makes
// every measured level's figures a throttled card's: a problem of the
// run, named by its level; the same cards unthrottled say nothing of it.
func TestThrottleSaid(t *testing.T) {
	for _, c := range []struct {
		name    string
		reasons uint64
	}{{"power cap", 0x4}, {"none", 0}} {
		t.Run(c.name, func(t *testing.T) {
			hwtest.StandInSMIThrottled(t, 250, 0, c.reasons)
			_, url := startSim(t, sim.Config{TokenInterval: 5 * time.Millisecond, PrefillRate: 100000})
			p := smallPlan()
			p.OutputTokens = 120 // levels of several of the stand-in's 0.2 s ticks
			f, err := Run(context.Background(), p, setup.Endpoint{URL: url, GPU: "local"}, Observer{})
			if err != nil {
				t.Fatal(err)
			}
			problems, _ := results.Split(results.Warnings(f))
			for _, r := range f.Runs {
				want := fmt.Sprintf("concurrency %d: GPU", r.Concurrency)
				has := slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, want) && strings.Contains(p, "power cap") })
				if has != (c.reasons != 0) {
					t.Errorf("level %d: problems %q", r.Concurrency, problems)
				}
			}
		})
	}
}

// TestTuneSaysThrottlingApart: in a settings comparison where one
// setting's GPU slowed itself for its power cap (its command before each
// turn sets the stand-in's reasons) and the other's did not, the result
// warns before any speed is weighed.
func TestTuneSaysThrottlingApart(t *testing.T) {
	reasons := filepath.Join(t.TempDir(), "reasons")
	hwtest.StandInSMIReasonsFrom(t, 250, reasons)
	cfg := fastSim()
	cfg.Models = []string{"m"}
	_, url := startSim(t, cfg)
	set := func(name, mask string) setup.TuneSetting {
		return setup.TuneSetting{Name: name, How: setup.ByModel, Model: "m", Before: "sh -c " + shellwords.Quote("echo "+mask+" > "+reasons)}
	}
	inner := tinyTunePlan()
	inner.OutputTokens = 120 // levels of several of the stand-in's 0.2 s ticks
	plan := setup.TunePlan{
		Settings: []setup.TuneSetting{set("steady", "0x0000000000000000"), set("capped", "0x0000000000000004")},
		Rounds:   2, Inner: inner, NoAnswers: true,
	}
	var log tuneLog
	res, err := RunTune(context.Background(), plan, setup.Endpoint{URL: url, GPU: "local"}, log.observer())
	if err != nil {
		t.Fatal(err)
	}
	want := "the GPUs did not run alike: capped slowed itself for"
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.HasPrefix(w, want) && strings.Contains(w, "; steady did not slow itself — ")
	}) {
		t.Errorf("warnings %q, want %q…", res.Warnings, want)
	}
}

// TestOtherProgramSaid: another program holding a quarter of a card's
// memory beside the server is a problem of the run, naming it; a small
// one a note; and a shared report never names it.
func TestOtherProgramSaid(t *testing.T) {
	for _, c := range []struct {
		mib     float64
		problem bool
	}{{6200, true}, {300, false}} {
		hwtest.StandInSMIOtherProgram(t, 250, "trainer.py", c.mib)
		_, url := startSim(t, sim.Config{TokenInterval: 2 * time.Millisecond, PrefillRate: 100000})
		f, err := Run(context.Background(), smallPlan(), setup.Endpoint{URL: url, GPU: "local"}, Observer{})
		if err != nil {
			t.Fatal(err)
		}
		problems, notes := results.Split(results.Warnings(f))
		said := problems
		if !c.problem {
			said = notes
		}
		if !slices.ContainsFunc(said, func(s string) bool { return strings.Contains(s, "trainer.py") }) {
			t.Errorf("%.0f MiB: problems %q, notes %q; want trainer.py among the %s", c.mib, problems, notes, map[bool]string{true: "problems", false: "notes"}[c.problem])
		}
	}
}
