package engine

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/sim"
)

// The truth test runs the simulator in its own process, as a real server
// is: in one process the client's and the server's goroutines share one
// scheduler, and a level's opening burst on one side delays the other in
// ways no real deployment has.

const simProcEnv = "KOVARA_TEST_SIM_PROCESS"

// TestSimProcess is not a test: it is the simulator's body when this test
// binary is re-run as a child process.
func TestSimProcess(t *testing.T) {
	if os.Getenv(simProcEnv) != "1" {
		t.Skip("helper process for the truth tests")
	}
	var pc simProcConfig
	if err := json.Unmarshal([]byte(os.Getenv(simProcEnv+"_CONFIG")), &pc); err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{
		Personality: pc.Personality, TokenInterval: pc.TokenInterval, PrefillRate: pc.PrefillRate,
		BatchSlowdown: pc.BatchSlowdown, BatchCapacity: pc.BatchCapacity, RecordTruth: true,
		Nagle: pc.Nagle, HeadersFirst: pc.HeadersFirst,
	}
	srv, url, err := sim.Start(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("URL " + url)
	io.Copy(io.Discard, os.Stdin) // until the parent closes our stdin
	srv.Close()
}

// simProcConfig is the part of sim.Config a child process can be given.
type simProcConfig struct {
	Personality   sim.Personality
	TokenInterval time.Duration
	PrefillRate   float64
	BatchSlowdown float64
	BatchCapacity int
	Nagle         bool
	HeadersFirst  bool
}

// startSimProcess runs the simulator in a child process and returns its
// base URL.
func startSimProcess(t *testing.T, cfg simProcConfig) string {
	t.Helper()
	c, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSimProcess$", "-test.v")
	cmd.Env = append(os.Environ(), simProcEnv+"=1", simProcEnv+"_CONFIG="+string(c))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "URL "); ok {
			go io.Copy(io.Discard, out)
			return u
		}
	}
	t.Fatalf("the simulator process did not start: %v", sc.Err())
	return ""
}

// fetchTimings reads the child simulator's ground truth.
func fetchTimings(t *testing.T, url string) map[int64]sim.Timing {
	t.Helper()
	m, err := sim.FetchTimings(url)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
