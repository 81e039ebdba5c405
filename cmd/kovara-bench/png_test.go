package main

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
)

// resultChartFiles are the file names --png writes: the result charts the
// app shows, named as its Save PNG names them.
func resultChartFiles(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, s := range chart.ResultCharts(&results.File{}, chart.Light()) {
		names = append(names, chart.FileName(s.Title))
	}
	if len(names) < 2 {
		t.Fatalf("the result has %d charts, want throughput and TTFT", len(names))
	}
	return names
}

// dirNames lists a folder's files, sorted; none when it does not exist.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func near(a, b color.Color, tol int) bool {
	na := color.NRGBAModel.Convert(a).(color.NRGBA)
	nb := color.NRGBAModel.Convert(b).(color.NRGBA)
	d := func(x, y uint8) int { return max(int(x)-int(y), int(y)-int(x)) }
	return d(na.R, nb.R) <= tol && d(na.G, nb.G) <= tol && d(na.B, nb.B) <= tol
}

// checkChartPNG decodes a written chart and checks that it is a drawn
// chart of the forum size: the light background, text, and a curve in the
// first series colour.
func checkChartPNG(t *testing.T, path string) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", path, err)
	}
	if got, want := img.Bounds().Size(), image.Pt(pngWidth, pngHeight); got != want {
		t.Errorf("%s: %v pixels, want %v", path, got, want)
	}
	light := chart.Light()
	if got := img.At(0, 0); !near(got, light.Background, 0) {
		t.Errorf("%s: corner %v, want the light background %v", path, got, light.Background)
	}
	var ink, curve int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := img.At(x, y)
			if !near(c, light.Background, 8) {
				ink++
			}
			if near(c, light.Series[0], 12) {
				curve++
			}
		}
	}
	if ink < b.Dx()*b.Dy()/100 {
		t.Errorf("%s: %d pixels other than the background; the chart is blank", path, ink)
	}
	if curve < 500 {
		t.Errorf("%s: %d pixels in the first series colour; no curve drawn", path, curve)
	}
}

// run and demo write the result's charts into the --png folder (made
// with its parents), say where, and nothing else goes there.
func TestPNGChartsWritten(t *testing.T) {
	t.Parallel()
	want := resultChartFiles(t)
	url := startSim(t, fast())
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"run", []string{"run", "--endpoint", url}},
		{"demo", []string{"demo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "forum", "charts")
			args := append(append(tc.args, "--png", dir, "--quiet"), smallFlags...)
			code, _, stderr := runCLI(args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got := dirNames(t, dir); !slices.Equal(got, want) {
				t.Fatalf("%s holds %q, want %q", dir, got, want)
			}
			for _, name := range want {
				path := filepath.Join(dir, name)
				if line := "chart written to " + path + "\n"; !strings.Contains(stderr, line) {
					t.Errorf("stderr does not say %q:\n%s", line, stderr)
				}
				checkChartPNG(t, path)
			}
		})
	}
}

// A run of one level has no curve: each chart says so, nothing is
// written, and the run itself still succeeds.
func TestPNGOneLevel(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "charts")
	code, _, stderr := runCLI("demo", "--png", dir, "--quiet", "--concurrency", "1", "--requests", "4", "--warmup", "0", "--input-tokens", "64", "--output-tokens", "8")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("%s holds %q after one level, want nothing", dir, got)
	}
	for _, name := range resultChartFiles(t) {
		if line := filepath.Join(dir, name) + " not written: " + chart.NoCurve + "\n"; !strings.Contains(stderr, line) {
			t.Errorf("stderr does not say %q:\n%s", line, stderr)
		}
	}
}

// --png is the Kovara method's: the other plans refuse it before they
// start, in one sentence, and make no folder; so does a --png without a
// folder, and a folder that cannot be made is said before the run.
func TestPNGRefused(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "charts")
	blocker := filepath.Join(tmp, "a-file")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--plan", "stages", "--png", dir, "--endpoint", "http://127.0.0.1:1"},
			"kovara-bench run: --png applies to --plan kovara, not to --plan stages\n"},
		{[]string{"run", "--plan", "specdec", "--png", dir, "--endpoint", "http://127.0.0.1:1"},
			"kovara-bench run: --png applies to --plan kovara, not to --plan specdec\n"},
		{[]string{"run", "--plan", "capacity", "--png", dir, "--endpoint", "http://127.0.0.1:1"},
			"kovara-bench run: --png applies to --plan kovara, not to --plan capacity\n"},
		{[]string{"demo", "--plan", "stages", "--quick", "--png", dir},
			"kovara-bench demo: --png applies to --plan kovara, not to --plan stages\n"},
		{[]string{"demo", "--png", ""},
			"kovara-bench demo: --png needs a folder to write the charts into, e.g. --png charts\n"},
		{[]string{"demo", "--png", filepath.Join(blocker, "charts")},
			"kovara-bench: --png: the folder for the charts cannot be made: "},
	} {
		code, stdout, stderr := runCLI(tc.args...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
		if stdout != "" {
			t.Errorf("%q: something ran:\n%s", tc.args, stdout)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%q: %s exists (%v); a refused --png makes no folder", tc.args, dir, err)
		}
	}
}

// The CLI draws its charts with the chart package and no Fyne: nothing it
// imports is Fyne's or the app's (docs/architecture.md), so it builds
// without cgo (buildBinary) and runs on a server with no display.
func TestCLIImportsNoFyne(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if !slices.Contains(pkgs, "github.com/kovara/desktop/chart") {
		t.Fatalf("the CLI does not import the chart package; go list said:\n%s", out)
	}
	for _, p := range pkgs {
		if strings.HasPrefix(p, "fyne.io/") || p == "github.com/kovara/desktop/ui" {
			t.Errorf("the CLI imports %s", p)
		}
	}
}
