package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/hw"
	"github.com/kovara/desktop/plans"
)

// shardFlags are run's flags for one shard of a run measured from several
// client machines (docs/distributed.md).
type shardFlags struct {
	shard      string
	startAt    string
	levelEvery time.Duration
}

func (f *shardFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.shard, "shard", "", "run shard I of N of one run measured from N client machines, e.g. 2/4, with --start-at and --level-every; merge the N files with kovara-bench merge (docs/distributed.md)")
	fs.StringVar(&f.startAt, "start-at", "", "with --shard: when the first level begins, the same on every shard, RFC 3339 (e.g. 2026-12-02T10:00:00Z); the check, probe, calibration and warmup happen before it")
	fs.DurationVar(&f.levelEvery, "level-every", 0, "with --shard: the time each level is given, the same on every shard (e.g. 2m): level i begins at --start-at + i × this")
}

// runShard runs one shard: its share of every level at the agreed times,
// written to a file of its own (-o, else a name in this folder) for
// kovara-bench merge. A shard is no run by itself, so it does not go into
// the library.
func runShard(f runFlags, set map[string]bool, stdout, stderr io.Writer) int {
	bad := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "kovara-bench run: "+format+"\n", args...)
		return exitBadInput
	}
	switch {
	case f.shard == "":
		return bad("--start-at and --level-every belong to a shard: give --shard I/N too")
	case plans.ByID(f.planName) == nil || !plans.ByID(f.planName).Shardable:
		return bad("--shard runs the Kovara method only")
	case f.repeat > 1:
		return bad("--repeat and --shard do not go together: repeat the whole sharded run instead, with a new --start-at")
	case f.like != "":
		return bad("--like and --shard do not go together: give the run's settings as flags to every shard")
	case f.png != "":
		return bad("--png draws a run's charts, and one shard is not a run: draw them from the merged file")
	}
	if err := checkPlanFlags(f.planName, set); err != nil {
		return bad("%v", err)
	}
	sh, err := engine.NewShard(f.shard, f.startAt, f.levelEvery, time.Now())
	if err != nil {
		return bad("%v", err)
	}
	plan, err := f.plan(set)
	if err != nil {
		return bad("%v", err)
	}
	if _, err := hw.ParseSource(f.gpu); err != nil {
		return bad("--gpu: %v", err)
	}
	ep, err := f.resolveEndpoint(stderr)
	if err != nil {
		return bad("%v", err)
	}
	out := f.output
	if out == "" {
		out = fmt.Sprintf("kovara-shard-%d-of-%d-%s.json", sh.Index, sh.Of, sh.StartAt.UTC().Format("20060102-150405"))
	}

	ctx, stop := interruptContext()
	defer stop()
	live := engine.NewLive()
	prog := newProgress(stderr, live, f.quiet)
	prog.start()
	file, err := engine.RunShard(ctx, plan, ep, engine.Observer{Live: live, Log: prog.log}, sh)
	prog.stop()
	code, keep := planExit(err, stderr)
	if !keep {
		return code
	}
	if file == nil {
		return code
	}
	for _, line := range engine.ShardLines(file) {
		fmt.Fprintln(stdout, line)
	}
	if err := writeResults(out, file); err != nil {
		fmt.Fprintf(stderr, "kovara-bench: could not write the shard file: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stderr, "shard %d of %d written to %s; merge it with the other shards' files: kovara-bench merge FILE… -o merged.json\n", sh.Index, sh.Of, out)
	if code == exitOK {
		for _, r := range file.Local.Shard.Runs {
			if r.Requests > 0 && r.Metrics.RequestsOK == 0 {
				code = exitFailed
			}
		}
	}
	return code
}
