// Command kovara-desktop is the Kovara Desktop app: benchmark your own OpenAI-compatible LLM server by point and click.
package main

import (
	"flag"
	"fmt"
	"log"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"github.com/kovara/desktop/assets"
	"github.com/kovara/desktop/internal/serverproc"
	"github.com/kovara/desktop/ui"
)

func main() {
	serverproc.Supervise() // this process may be a started server's supervisor
	demo := flag.Bool("demo", false, "open on the built-in simulator and start the default benchmark")
	flag.Parse()
	a := app.NewWithID("dev.kovara.desktop")
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.Icon))
	a.Settings().SetTheme(ui.Theme())
	u, err := ui.New(a, ui.Options{Demo: *demo, OnResult: func() { fmt.Println("kovara-desktop: result shown") }})
	if err != nil {
		log.Fatalf("kovara-desktop: %v", err)
	}
	u.Window().ShowAndRun()
}
