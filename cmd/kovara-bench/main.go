// Command kovara-bench is the headless Kovara benchmark: the same engine as
// the desktop app, no cgo, for display-less servers reached over SSH.
package main

import (
	"os"

	"github.com/kovara/desktop/internal/serverproc"
)

func main() {
	serverproc.Supervise() // this process may be a started server's supervisor
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr))
}
