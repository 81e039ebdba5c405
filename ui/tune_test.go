package ui

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/sim/simtest"
	"github.com/kovara/desktop/internal/serverproc"
	"github.com/kovara/desktop/internal/serverproc/serverproctest"
	"github.com/kovara/desktop/internal/shellwords"
	"github.com/kovara/desktop/plans"
)

// tuneSimEnv makes this test binary a server a settings comparison
// starts: a simulator on ADDR that writes its pid to PIDFILE
// ("ADDR,PIDFILE").
const tuneSimEnv = "KOVARA_TEST_UI_TUNE_SIM"

func TestMain(m *testing.M) {
	serverproc.Supervise()
	simtest.StandIn(tuneSimEnv)
	os.Exit(m.Run())
}

// Closing the window mid-comparison stops it as Stop does, and the server
// the app started is gone with it; the live view said the round, the
// setting and what the server was doing, and showed its log.
func TestTuneCloseStopsItsServer(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	port := serverproctest.FreePort(t)
	dir := t.TempDir()
	h.addEndpoint("lab", "http://127.0.0.1:"+port, "")
	h.locked(func() {
		b.refreshEndpoints()
		b.selectEndpoint("lab")
		b.planSelect.SetSelected(plans.ByID(results.PlanTune).Title)
		for i, r := range b.tune.rows {
			r.howSelect.SetSelected("Command")
			r.whatEntry.SetText(simtest.StandInCommand(tuneSimEnv, port, filepath.Join(dir, fmt.Sprint(i))))
		}
		b.tune.roundsEntry.SetText("3")
		b.tune.concurrencyEntry.SetText("1")
		b.tune.requestsEntry.SetText("400") // long enough to be closed mid-run
		b.tune.lengths.inputEntry.SetText("32")
		b.tune.lengths.outputEntry.SetText("16")
		if b.runButton.Disabled() {
			t.Fatalf("Run is off: %q", b.planNote.Text)
		}
		test.Tap(b.runButton)
	})
	h.waitFor("the first run measuring", 60*time.Second, func() bool {
		return b.live != nil && strings.HasPrefix(b.live.turn.Text, "Round 1 of 3 — setting A: measuring") && b.live.serverLog != nil
	})
	h.locked(func() {
		if got := b.live.tabs.Items[len(b.live.tabs.Items)-1].Text; got != "Server log" {
			t.Errorf("the last live tab is %q", got)
		}
		h.u.requestClose()
		h.tapInOverlay("Stop and close")
	})
	h.waitFor("the window to close", 60*time.Second, func() bool { return h.u.closed })
	if !serverproctest.Gone(t, filepath.Join(dir, "0")) {
		t.Error("the server is still running after the window closed")
	}
	if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
		c.Close()
		t.Error("something still answers on the server's port")
	}
}

// A row's Test starts its command once and stops it again, saying how
// long it took; on the simulator, commands are refused.
func TestTuneRowTest(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	port := serverproctest.FreePort(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	h.addEndpoint("lab", "http://127.0.0.1:"+port, "")
	h.locked(func() {
		b.refreshEndpoints()
		b.planSelect.SetSelected(plans.ByID(results.PlanTune).Title)
		b.selectEndpoint(SimulatorName)
		r := b.tune.rows[1]
		r.howSelect.SetSelected("Command")
		r.whatEntry.SetText(simtest.StandInCommand(tuneSimEnv, port, pidfile))
		if !b.runButton.Disabled() || !strings.Contains(b.planNote.Text, "the built-in simulator is one the app runs itself") {
			t.Errorf("a command on the simulator: Run off %v, %q", b.runButton.Disabled(), b.planNote.Text)
		}
		b.selectEndpoint("lab")
		test.Tap(r.testButton)
	})
	h.waitFor("the Test to end", 60*time.Second, func() bool { return strings.Contains(b.tune.testNote.Text, "stopped again") })
	if !serverproctest.Gone(t, pidfile) {
		t.Error("the tested server is still running")
	}
}

// A setting changed by hand asks in a dialog and goes on at Continue.
func TestTuneByHandAsks(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	h.addEndpoint("box", url, "")
	h.locked(func() {
		b.refreshEndpoints()
		b.selectEndpoint("box")
		b.planSelect.SetSelected(plans.ByID(results.PlanTune).Title)
		for i, r := range b.tune.rows {
			r.howSelect.SetSelected("By hand")
			r.whatEntry.SetText(fmt.Sprintf("restart it with OLLAMA_NUM_PARALLEL=%d", 1+3*i))
		}
		b.tune.roundsEntry.SetText("1")
		b.tune.concurrencyEntry.SetText("1")
		b.tune.requestsEntry.SetText("2")
		b.tune.lengths.inputEntry.SetText("32")
		b.tune.lengths.outputEntry.SetText("8")
		b.tune.answersCheck.SetChecked(false)
		test.Tap(b.runButton)
	})
	for _, want := range []string{"OLLAMA_NUM_PARALLEL=1", "OLLAMA_NUM_PARALLEL=4"} {
		h.waitFor("the question for "+want, 60*time.Second, func() bool {
			top := h.win.Canvas().Overlays().Top()
			return top != nil && strings.Contains(test.RenderObjectToMarkup(top), want)
		})
		h.locked(func() { h.tapInOverlay("Continue") })
	}
	h.waitFor("the result", 60*time.Second, func() bool { return b.running == nil && b.shownResult })
	h.locked(func() {
		v := h.u.tuneView
		if v == nil || len(v.result.Runs) != 2 || !strings.Contains(v.headline.Text, "too few rounds") {
			t.Fatalf("the result: %+v", v)
		}
	})
}

// A row whose llama-server command gives its own --port, with the
// endpoint at another where a server already answers (#47): the line
// under the plan and the Test say, in one sentence, that the runs go to
// the command's port, and the Test starts the server there.
func TestTuneRowTestWhereItListens(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	endpoint := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	port := serverproctest.FreePort(t)
	dir := t.TempDir()
	llama := filepath.Join(dir, "llama-server") // this test binary, by that name
	if err := os.Symlink(os.Args[0], llama); err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(dir, "pid")
	command := tuneSimEnv + "=" + shellwords.Quote("127.0.0.1:"+port+","+pidfile) + " " + shellwords.Join([]string{llama, "-m", "x.gguf", "--port", port})
	sentence := "The endpoint is " + strings.TrimPrefix(endpoint, "http://") + " but setting B's command listens on 127.0.0.1:" + port + " (its --port): the runs go to " + port + "."
	h.addEndpoint("lab", endpoint, "")
	var r *tuneRow
	h.locked(func() {
		b.refreshEndpoints()
		b.selectEndpoint("lab")
		b.planSelect.SetSelected(plans.ByID(results.PlanTune).Title)
		b.tune.rows[0].howSelect.SetSelected("By hand")
		b.tune.rows[0].whatEntry.SetText("restart it with -np 2")
		r = b.tune.rows[1]
		r.howSelect.SetSelected("Command")
		r.whatEntry.SetText(command)
		// What the answers check costs, said before it runs (#48).
		if want := engine.TuneAnswersLine("A"); !strings.Contains(b.planNote.Text, want) {
			t.Errorf("the line under the plan:\n%s\nwant it to say %q", b.planNote.Text, want)
		}
		b.tune.answersCheck.SetChecked(false)
		if strings.Contains(b.planNote.Text, "token by token") {
			t.Errorf("without the answers check the line still says what it costs:\n%s", b.planNote.Text)
		}
		b.tune.answersCheck.SetChecked(true)
		if !strings.Contains(b.planNote.Text, sentence) {
			t.Errorf("the line under the plan:\n%s\nwant it to say %q", b.planNote.Text, sentence)
		}
		test.Tap(r.testButton)
	})
	h.waitFor("the Test to end", 60*time.Second, func() bool { return !r.testButton.Disabled() })
	h.locked(func() {
		want := sentence + " B: the server answered at http://127.0.0.1:" + port + " (its --port) after "
		if got := b.tune.testNote.Text; !strings.HasPrefix(got, want) {
			t.Errorf("the Test said %q\nwant it to begin %q", got, want)
		}
	})
	if !serverproctest.Gone(t, pidfile) {
		t.Error("the tested server is still running")
	}
}
