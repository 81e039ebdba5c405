package serverproc

import (
	"errors"
	"os/exec"
	"time"
)

// Starting servers needs a process group the supervisor can end and a
// parent-death notice; this app does it on Linux and macOS only.
var errNotHere = errors.New("the app starts servers on Linux and macOS; on Windows start the server by hand and use a setting changed by hand")

func launch([]string, []string, time.Duration) (*Server, error) { return nil, errNotHere }

func (s *Server) terminate() {}

func (s *Server) kill() {}

func onceAttr(*exec.Cmd) {}

func supervise([]string) int { return 2 }
