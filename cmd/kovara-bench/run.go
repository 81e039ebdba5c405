package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/hw"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// runFlags are the flags of the commands that run plans: run, demo, tune
// and answers (planCommand), each taking its own of them.
type runFlags struct {
	endpoint     string
	model        string
	concurrency  string
	inputTokens  int
	outputTokens int
	requests     int
	warmup       int
	seed         string
	timeout      string
	silence      string
	apiKeyEnv    string
	output       string
	insecure     bool
	quiet        bool
	manifest     string
	profile      string
	gpu          string
	wall         string
	png          string
	repeat       int
	like         string
	planFlags    // --plan, --quick, --users and the other plans' settings (plans.go)
	priceFlags   // --price-kwh, --currency (price.go)
	shardFlags   // --shard, --start-at, --level-every (shard.go)
}

// define defines on fs every flag of f, each once with its one default
// and usage: the catalogue each command takes its own flags from
// (planCommand.flagSet), by name.
func (f *runFlags) define(fs *flag.FlagSet) {
	d := setup.DefaultPlan()
	// The server (endpointFlags).
	fs.StringVar(&f.endpoint, "endpoint", "", "a saved endpoint's name, or the server's address, e.g. http://192.168.1.10:8000 (with or without /v1)")
	fs.StringVar(&f.model, "model", "", "model to request (default: the only model served)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "KOVARA_API_KEY", "environment variable that holds the API key")
	fs.BoolVar(&f.insecure, "insecure", false, "accept a self-signed or otherwise unverified https certificate")
	fs.StringVar(&f.silence, "silence", "10", "seconds requests in flight may go without a byte from the server before the run asks whether it is still there; one that is not ends the run, finished levels kept (0: say it, never end)")
	fs.StringVar(&f.gpu, "gpu", "", "GPU telemetry: local, ssh://user@host or http://host:9400/metrics (a saved endpoint's own source otherwise)")
	fs.StringVar(&f.wall, "wall", "", wallUsage)
	f.priceFlags.register(fs)
	// Run's own.
	fs.IntVar(&f.repeat, "repeat", 1, "run the plan this many times in a row, fresh prompts each time, kept as one group (the way to A/B a setting: the spread between the runs is the noise)")
	fs.StringVar(&f.like, "like", "", "run again like this run (a results file or a library id): its model, lengths, levels, requests, warmup and timeout, then compare the two")
	f.shardFlags.register(fs)
	// Every plan's (everyPlanFlags).
	fs.StringVar(&f.timeout, "timeout", "120", "per-request timeout in seconds (or a duration like 90s)")
	fs.StringVar(&f.output, "o", "", "also write a copy of the results file here (runs are always saved in the library)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	// The plans' own (planCLIs), and --plan.
	fs.StringVar(&f.manifest, "manifest", "", "kovara.yaml describing what the endpoint runs (makes a hardware run)")
	fs.StringVar(&f.profile, "profile", "", "the manifest profile to run (default: its only one, or 'default')")
	fs.StringVar(&f.concurrency, "concurrency", engine.FormatLevels(d.Concurrency), "comma-separated concurrency levels")
	fs.IntVar(&f.inputTokens, "input-tokens", d.InputTokens, "prompt length in tokens")
	fs.IntVar(&f.outputTokens, "output-tokens", d.OutputTokens, "completion length in tokens (max_tokens)")
	fs.IntVar(&f.requests, "requests", d.Requests, "requests per concurrency level")
	fs.IntVar(&f.warmup, "warmup", d.Warmup, "unmeasured warmup requests")
	fs.StringVar(&f.seed, "seed", "", "prompt generator seed (default: a new one each run, so a repeated run meets no prompt cache; give one to reproduce a run exactly)")
	fs.StringVar(&f.png, "png", "", "also write the result's charts as PNG files (1200×675, light) into this folder, made if missing (the Kovara method only)")
	f.planFlags.register(fs)
}

// plan turns the flags into a validated plan: the method's defaults, then
// the manifest's profile, then every flag given on the command line.
func (f *runFlags) plan(set map[string]bool) (setup.KovaraPlan, error) {
	p := setup.DefaultPlan()
	var errs []error
	if f.manifest != "" {
		m, err := storage.LoadManifest(f.manifest)
		if err != nil {
			return p, err
		}
		if err := m.ApplyProfile(&p, f.profile); err != nil {
			return p, err
		}
	} else if f.profile != "" {
		return p, errors.New("--profile needs --manifest")
	}
	if set["concurrency"] || f.manifest == "" {
		levels, err := engine.ParseLevels(f.concurrency)
		if err != nil {
			errs = append(errs, fmt.Errorf("--concurrency %q: %w", f.concurrency, err))
		}
		p.Concurrency = levels
	}
	override := func(name string, dst *int, v int) {
		if set[name] || f.manifest == "" {
			*dst = v
		}
	}
	override("input-tokens", &p.InputTokens, f.inputTokens)
	override("output-tokens", &p.OutputTokens, f.outputTokens)
	override("requests", &p.Requests, f.requests)
	override("warmup", &p.Warmup, f.warmup)
	p.Model = f.model
	seed, fixed, err := engine.ParseSeed(f.seed)
	if err != nil {
		errs = append(errs, fmt.Errorf("--%w", err))
	}
	p.Seed, p.FixedSeed = seed, fixed
	to, err := engine.ParseTimeout(f.timeout)
	if err != nil {
		errs = append(errs, fmt.Errorf("--%w", err))
	}
	p.Timeout = to
	p.SLO = f.slo.given(set)
	// A shared prefix and turns; --prompts is the rate plan's (planCLIs).
	p.Workload = setup.Workload{SharedPrefix: f.workload.sharedPrefix, PrefixGroups: f.workload.groups, Turns: f.workload.turns}
	if p.SLO.TTFTMs < 0 || p.SLO.TPOTMs < 0 || p.SLO.UserTPS < 0 {
		errs = append(errs, errors.New("a service level's limits cannot be below 0 (--slo-ttft-p95, --slo-tpot, --slo-user-tps)"))
	}
	if len(errs) == 0 {
		if err := p.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return p, errors.Join(errs...)
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	var f runFlags
	_, set, code, ok := runCommand.parse(&f, args, stderr)
	if !ok {
		return code
	}
	if f.endpoint == "" {
		fmt.Fprintln(stderr, "kovara-bench run: give the server with --endpoint, e.g. --endpoint http://192.168.1.10:8000 or the name of a saved endpoint")
		return exitBadInput
	}
	if f.pngRefused("run", set, stderr) {
		return exitBadInput
	}
	if f.repeat < 1 || f.repeat > maxRepeat {
		fmt.Fprintf(stderr, "kovara-bench run: --repeat %d is not allowed: give 1 to %d runs\n", f.repeat, maxRepeat)
		return exitBadInput
	}
	if f.repeat > 1 && set["seed"] {
		fmt.Fprintln(stderr, "kovara-bench run: --repeat with --seed would send the same prompts each time, and a server's prompt cache would answer the later runs from the first: leave --seed out")
		return exitBadInput
	}
	if set["shard"] || set["start-at"] || set["level-every"] {
		return runShard(f, set, stdout, stderr)
	}
	if f.like != "" {
		return runLike(f, set, stdout, stderr)
	}
	if code, other := runOtherPlan(f, set, false, stdout, stderr); other {
		if f.repeat > 1 {
			fmt.Fprintln(stderr, "kovara-bench run: --repeat runs the Kovara method only")
			return exitBadInput
		}
		return code
	}
	plan, err := f.plan(set)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench run: %v\n", err)
		return exitBadInput
	}
	if _, err := hw.ParseSource(f.gpu); err != nil {
		fmt.Fprintf(stderr, "kovara-bench run: --gpu: %v\n", err)
		return exitBadInput
	}
	if _, err := f.price(); err != nil {
		fmt.Fprintf(stderr, "kovara-bench run: %v\n", err)
		return exitBadInput
	}
	if err := f.checkWall(); err != nil {
		fmt.Fprintf(stderr, "kovara-bench run: %v\n", err)
		return exitBadInput
	}
	ep, err := f.resolveEndpoint(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench run: %v\n", err)
		return exitBadInput
	}
	return repeated(plan, ep, f, nil, stdout, stderr)
}

// maxRepeat bounds --repeat: a group is compared run by run, and ten runs
// of a plan already take an evening.
const maxRepeat = 10

// repeated runs the plan f.repeat times (once without --repeat), each a
// run of its own in the library, tied by one group when more than one,
// and then shows the spread between them. like, when given, names the
// run every one of them reproduces. It returns the worst exit code.
func repeated(plan setup.KovaraPlan, ep setup.Endpoint, f runFlags, like *results.LikeRef, stdout, stderr io.Writer) int {
	return repeatedInto(plan, ep, f, like, nil, stdout, stderr)
}

// repeatedInto is repeated, appending the complete runs' files to got
// when it is given.
func repeatedInto(plan setup.KovaraPlan, ep setup.Endpoint, f runFlags, like *results.LikeRef, got *[]*results.File, stdout, stderr io.Writer) int {
	worst := exitOK
	var files []*results.File
	for _, place := range engine.RepeatGroup(f.repeat, time.Now()) {
		mark := runMarks{group: place, like: like}
		if place != nil {
			fmt.Fprintf(stderr, "run %d of %d\n", place.Index, place.Of)
		}
		code, file := benchmark(plan, ep, f, mark, stdout, stderr)
		worst = max(worst, code)
		if file != nil && file.Complete {
			files = append(files, file)
		}
		if code == exitInterrupted || file == nil {
			break
		}
	}
	if len(files) > 1 {
		fmt.Fprintln(stdout)
		printSpread(stdout, files)
	}
	if got != nil {
		*got = files
	}
	return worst
}

// runMarks is what a run's file records of how it was asked for: its
// place in a repeated group, the run it reproduces.
type runMarks struct {
	group *results.RunGroup
	like  *results.LikeRef
}

func (m runMarks) apply(file *results.File) {
	file.Local.Group, file.Local.Like = m.group, m.like
}

// cliModelHint is where kovara-bench takes the model when the server
// serves several (setup.Endpoint.ModelHint).
const cliModelHint = "with --model"

// resolveEndpoint finds --endpoint among the saved endpoints (with its key
// from the keyring) or reads it as an address. A key in the environment
// variable named by --api-key-env wins over the keyring.

func (f *runFlags) resolveEndpoint(stderr io.Writer) (setup.Endpoint, error) {
	ep, err := f.savedOrAddress(stderr)
	if err != nil {
		return ep, err
	}
	if f.silence != "" {
		if ep.Silence, err = engine.ParseSilence(f.silence); err != nil {
			return ep, fmt.Errorf("--%w", err)
		}
	}
	return ep, nil
}

func (f *runFlags) savedOrAddress(stderr io.Writer) (setup.Endpoint, error) {
	envKey := os.Getenv(f.apiKeyEnv)
	if dirs, err := storage.DefaultDirs(); err == nil {
		saved, ok, err := storage.OpenEndpoints(dirs.Config).Get(f.endpoint)
		if err != nil {
			fmt.Fprintf(stderr, "warning: the saved endpoints cannot be read: %v\n", err)
		}
		if ok {
			key := envKey
			if key == "" {
				k, err := saved.Key(storage.NewKeyring(5 * time.Second))
				switch {
				case err == nil:
					key = k
				case !errors.Is(err, storage.ErrNoKey):
					fmt.Fprintf(stderr, "warning: %s To send one, set it in %s.\n", storage.KeyringReadProblem(err), f.apiKeyEnv)
				}
			}
			ep := saved.WithKey(key)
			ep.KeyHint = fmt.Sprintf("in the environment variable %s (--api-key-env names another), or in the saved endpoint's keyring entry (in the app: Endpoints, select %q, type the key, Save)", f.apiKeyEnv, saved.Name)
			ep.ModelHint = cliModelHint
			ep.InsecureTLS = ep.InsecureTLS || f.insecure
			if f.gpu != "" {
				ep.GPU = f.gpu
			}
			f.withWall(&ep)
			if ep.WallToken == "" && f.wall == "" && saved.NeedsWallToken() {
				// The saved plug's token, kept in the keyring by the app.
				ep.WallToken, _ = saved.WallToken(storage.NewKeyring(5 * time.Second))
			}
			return ep, nil
		}
	}
	if _, err := setup.ParseBase(f.endpoint); err != nil {
		return setup.Endpoint{}, fmt.Errorf("%q is not a saved endpoint, and as an address: %w", f.endpoint, err)
	}
	ep := setup.Endpoint{URL: f.endpoint, InsecureTLS: f.insecure, APIKey: envKey, GPU: f.gpu, ModelHint: cliModelHint,
		KeyHint: fmt.Sprintf("in the environment variable %s (--api-key-env names another)", f.apiKeyEnv)}
	f.withWall(&ep)
	return ep, nil
}

// wallUsage is --wall's help, the same for run and check.
const wallUsage = "the smart plug on the server's power lead: http://plug for a Shelly or Tasmota, ha://host:8123/sensor.name for Home Assistant (its token in $KOVARA_WALL_TOKEN); a saved endpoint's own otherwise"

// checkWall refuses a --wall that is not a plug's address.
func (f *runFlags) checkWall() error {
	if f.wall == "" {
		return nil
	}
	if _, err := hw.ParseWall(f.wall, ""); err != nil {
		return fmt.Errorf("--wall: %w", err)
	}
	return nil
}

// withWall gives ep the --wall plug (over a saved endpoint's own), and a
// Home Assistant sensor's token from the environment (a saved
// endpoint's own plug's otherwise comes from the keyring).
func (f *runFlags) withWall(ep *setup.Endpoint) {
	if f.wall != "" {
		ep.Wall = f.wall
	}
	ep.WallToken = os.Getenv("KOVARA_WALL_TOKEN")
}

// benchmark runs a plan with Ctrl-C handling, progress and a summary, and
// writes the results file. It returns the exit code.
func benchmark(plan setup.KovaraPlan, ep setup.Endpoint, f runFlags, mark runMarks, stdout, stderr io.Writer) (int, *results.File) {
	if f.png != "" {
		// Made before the run: a folder that cannot be made is said now,
		// not after a benchmark whose charts would then be lost.
		if err := os.MkdirAll(numbered(f.png, mark.group), 0o755); err != nil {
			fmt.Fprintf(stderr, "kovara-bench: --png: the folder for the charts cannot be made: %v\n", err)
			return exitBadInput, nil
		}
	}
	ctx, stop := interruptContext()
	defer stop()

	live := engine.NewLive()
	prog := newProgress(stderr, live, f.quiet)
	obs := engine.Observer{Live: live, Log: prog.log}
	obs.Estimate = func(line string) { prog.estimate(line, mark.group) }
	if g := mark.group; g != nil {
		live.SetRepeat(g.Index, g.Of) // the whole plan is the group
	}

	// Every run goes into the local library, rewritten after each level
	// so a crash loses at most the level in progress; -o writes a copy.
	lib, libErr := openLibrary()
	if libErr != nil {
		fmt.Fprintf(stderr, "warning: the results library cannot be used (%v); the results go to a file instead\n", libErr)
	}
	var cp *storage.Checkpoint
	if lib != nil {
		cp = lib.Checkpoint()
	}
	save := func(file *results.File) error {
		mark.apply(file)
		if cp == nil {
			return nil
		}
		return cp.Save(file)
	}
	obs.Checkpoint = func(file *results.File) {
		if err := save(file); err != nil {
			prog.log("warning: could not save the finished levels: " + err.Error())
		}
	}
	prog.start()
	file, err := engine.Run(ctx, plan, ep, obs)
	prog.stop()

	code, keep := planExit(err, stderr)
	if !keep {
		return code, nil
	}
	if file == nil {
		return code, nil
	}
	mark.apply(file)
	printSummary(stdout, file)
	price, _ := f.price() // checked before the run
	printEnergy(stdout, plans.Kovara{File: file}, price)
	if line := serverLine(file.Local.ServerMetrics); line != "" {
		fmt.Fprintln(stderr, line)
	}
	if len(file.Runs) > 0 || file.Local.PartialRun != nil {
		saved := false
		if lib != nil {
			if err := save(file); err != nil {
				fmt.Fprintf(stderr, "kovara-bench: could not save into the library: %v\n", err)
			} else {
				saved = true
				fmt.Fprintf(stderr, "saved in the library as %s (%s)\n", cp.ID(), lib.Path(cp.ID()))
			}
		}
		out := numbered(f.output, file.Local.Group)
		if out == "" && !saved {
			out = defaultOutput(time.Now())
		}
		if out != "" {
			if err := writeResults(out, file); err != nil {
				fmt.Fprintf(stderr, "kovara-bench: could not write the results file: %v\n", err)
				return exitFailed, file
			}
			fmt.Fprintf(stderr, "results written to %s\n", out)
		}
	}
	if f.png != "" {
		if err := writeCharts(numbered(f.png, file.Local.Group), file, stderr); err != nil {
			fmt.Fprintf(stderr, "kovara-bench: could not write the charts: %v\n", err)
			return exitFailed, file
		}
	}
	return failedCode(code, plans.Kovara{File: file}), file
}

// numbered is where a repeated run's copy goes: -o and --png name one
// place, and each run of a group takes its own beside it (results.json →
// results-2.json, charts → charts-2), so no run overwrites another.
func numbered(path string, g *results.RunGroup) string {
	if path == "" || g == nil {
		return path
	}
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s-%d%s", strings.TrimSuffix(path, ext), g.Index, ext)
}

// pngRefused says so and reports true when --png is given without a
// folder, or to a plan whose charts are not written as files (only the
// Kovara method's are), in the words of the other plan-specific flags'
// rules (checkPlanFlags); it runs before the plan dispatch.
func (f *runFlags) pngRefused(cmd string, set map[string]bool, stderr io.Writer) bool {
	switch {
	case !set["png"]:
		return false
	case f.png == "":
		fmt.Fprintf(stderr, "kovara-bench %s: --png needs a folder to write the charts into, e.g. --png charts\n", cmd)
	default:
		return false
	}
	return true
}

// The charts --png writes: the size the app's Save PNG writes too
// (chart.Post): 16:9 at a width a forum post shows whole, with text and
// lines half as large again as on a screen so they read there.
const (
	pngWidth, pngHeight = chart.PostWidth, chart.PostHeight
	pngScale            = chart.PostScale
)

// writeCharts writes a Kovara result's charts (chart.ResultCharts, the ones
// the app's result view shows) into dir as PNG files in the light palette,
// named for their titles as the app's Save PNG names them, and says where
// each went, or why one has no curve to draw.
func writeCharts(dir string, file *results.File, stderr io.Writer) error {
	for _, spec := range chart.ResultCharts(file, chart.Light()) {
		spec.Width, spec.Height, spec.Scale = pngWidth, pngHeight, pngScale
		path := filepath.Join(dir, chart.FileName(spec.Title))
		img, err := chart.Render(spec)
		if errors.Is(err, chart.ErrTooFewPoints) {
			fmt.Fprintf(stderr, "%s not written: %s\n", path, chart.NoCurve)
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", spec.Title, err)
		}
		var buf bytes.Buffer
		if err := chart.EncodePNG(img, &buf); err != nil {
			return fmt.Errorf("%s: %w", spec.Title, err)
		}
		if err := storage.WriteFileAtomic(path, buf.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "chart written to %s\n", path)
	}
	return nil
}

// openLibrary opens the results library in the app's data folder.
func openLibrary() (*storage.Library, error) {
	dirs, err := storage.DefaultDirs()
	if err != nil {
		return nil, err
	}
	return storage.OpenLibrary(dirs.Data)
}

func defaultOutput(t time.Time) string {
	return "kovara-results-" + t.Format("20060102-150405") + ".json"
}

// writeResults writes a copy of the results file, atomically.
func writeResults(path string, f *results.File) error {
	data, err := results.Marshal(f)
	if err != nil {
		return err
	}
	return storage.WriteFileAtomic(path, data, 0o644)
}

func versionString() string { return engine.Version }
