//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/hw/hwtest"
)

// --gpu local is used by every plan: the three-stage and speculative-
// decoding plans record power and energy per stage or level, and the
// three-stage table and wiki block show the cards. (--plan stages once
// accepted --gpu and recorded nothing.) Not parallel: the stand-in
// nvidia-smi is put on the PATH.
func TestEveryPlanRecordsGPUs(t *testing.T) {
	hwtest.StandInSMI(t, 250)
	url := startSim(t, sim.Config{TokenInterval: 5 * time.Millisecond, PrefillRate: 1e5, NaturalStop: func(int64) int { return 1 << 20 },
		SpecDecode: &sim.SpecDecode{DraftTokens: 2, Acceptance: 0.6}})
	dir := t.TempDir()

	out := filepath.Join(dir, "stages.json")
	code, stdout, stderr := runCLI("run", "--plan", "stages", "--quick", "--users", "3", "--gpu", "local", "--endpoint", url, "-o", out, "--quiet")
	if code != exitOK {
		t.Fatalf("stages: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"GPUs read on this machine:", "NVIDIA GeForce RTX 3090", "Gen4 x16", "|cards=2× NVIDIA GeForce RTX 3090\n", "|power_cap=350 W\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stages output lacks %q:\n%s", want, stdout)
		}
	}
	data, _ := os.ReadFile(out)
	st, err := results.StagesDoc.Decode(data)
	if err != nil || st.Local.Telemetry == nil {
		t.Fatalf("stages document: %v", err)
	}
	if lv, ok := st.Local.Telemetry.Levels[1]; !ok || lv.EnergyJ == nil || *lv.MeanPowerW < 450 {
		t.Errorf("stage 1 energy %+v: want about 500 W over both cards", lv)
	}

	out = filepath.Join(dir, "specdec.json")
	if code, _, stderr := runCLI("run", "--plan", "specdec", "--concurrency", "1,2", "--requests", "4", "--output-tokens", "64", "--gpu", "local", "--endpoint", url, "-o", out, "--quiet"); code != exitOK {
		t.Fatalf("specdec: exit %d: %s", code, stderr)
	}
	data, _ = os.ReadFile(out)
	sd, err := results.SpecDecDoc.Decode(data)
	if err != nil || sd.Local.Telemetry == nil {
		t.Fatalf("specdec document: %v", err)
	}
	for _, c := range []int{1, 2} {
		if lv, ok := sd.Local.Telemetry.Levels[c]; !ok || lv.EnergyJ == nil || lv.TokensPerJoule == nil {
			t.Errorf("level %d energy %+v", c, lv)
		}
	}
}
