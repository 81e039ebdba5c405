package main

import (
	"flag"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/plans"
)

// planCommands are the commands that run plans.
var planCommands = []planCommand{runCommand, demoCommand, tuneCommand, answersCommand}

// flagNames are the names of the flags fs defines.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
	return names
}

// TestEveryPlanHasItsFlags: every registered plan has its planCLIs entry
// naming the flags it takes, each defined once by runFlags.define, and
// every command that runs the plan takes them. Every plan runs from run
// --plan (and demo --plan), tune and answers as well, so theirs are no
// exception: their own commands take their entry's flags too. A flag
// define defines that no command takes, or an entry for a plan that is
// not registered, fails it as well.
func TestEveryPlanHasItsFlags(t *testing.T) {
	t.Parallel()
	var f runFlags
	all := flag.NewFlagSet("all", flag.ContinueOnError)
	f.define(all)
	defined := flagNames(all)
	for _, k := range plans.All {
		c, ok := planCLIs[k.ID]
		if !ok || len(c.flags) == 0 {
			t.Errorf("%s: entry %v with %d flags; want one naming the flags the plan takes", k.ID, ok, len(c.flags))
		}
		for _, n := range c.flags {
			if !slices.Contains(defined, n) {
				t.Errorf("%s: --%s is not defined by runFlags.define", k.ID, n)
			}
			if slices.Contains(everyPlanFlags, n) {
				t.Errorf("%s: --%s is every plan's, and listed would be refused with the others", k.ID, n)
			}
		}
	}
	for id := range planCLIs {
		if plans.ByID(id) == nil {
			t.Errorf("planCLIs has an entry for %q, which is no registered plan", id)
		}
	}
	taken := map[string]bool{}
	for _, c := range planCommands {
		if !slices.ContainsFunc(c.plans, func(id string) bool { return planCLIs[id].build != nil || id == plans.KovaraMethod.ID }) {
			t.Errorf("%s runs no plan", c.name)
		}
		var cf runFlags
		got := flagNames(c.flagSet(&cf))
		for _, id := range c.plans {
			for _, n := range planCLIs[id].flags {
				if !slices.Contains(got, n) && !slices.Contains(c.without, n) {
					t.Errorf("%s runs --plan %s but does not take its --%s", c.name, id, n)
				}
			}
		}
		for _, n := range got {
			taken[n] = true
		}
	}
	for _, n := range defined {
		if !taken[n] {
			t.Errorf("--%s is defined but no command takes it", n)
		}
	}
}

// flagLine matches a flag's first line in help (flag.PrintDefaults).
var flagLine = regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)

// helpOf is a command's -h, and the names of the flags it lists.
func helpOf(t *testing.T, args ...string) (string, []string) {
	t.Helper()
	code, stdout, stderr := runCLI(append(args, "--help")...)
	if code != exitOK || stdout != "" {
		t.Fatalf("%q --help: exit %d, stdout %q", args, code, stdout)
	}
	var names []string
	for _, m := range flagLine.FindAllStringSubmatch(stderr, -1) {
		names = append(names, m[1])
	}
	return stderr, names
}

// TestHelpShowsOnlyItsFlags: a command's help lists the flags it takes
// and names none of another plan's or command's, anywhere in it.
func TestHelpShowsOnlyItsFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args   []string
		want   []string // listed as flags
		absent []string // named nowhere
	}{
		{[]string{"tune"}, []string{"setting", "model-setting", "hand-setting", "rounds", "no-answers", "concurrency", "trace", "endpoint", "timeout", "o"},
			[]string{"-depths", "-shard", "-arrival", "-answer-prompts", "-against", "-manifest", "-repeat", "-seed", "-quick", "-plan"}},
		{[]string{"answers"}, []string{"against", "against-model", "answer-prompts", "positions", "top", "endpoint", "model", "timeout"},
			[]string{"-setting", "-rounds", "-depths", "-shard", "-arrival", "-concurrency", "-trace", "-plan"}},
		{[]string{"validate"}, []string{"accept-problems"},
			[]string{"-endpoint", "-concurrency", "-depths", "-setting", "-against", "-plan"}},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			help, got := helpOf(t, tt.args...)
			for _, n := range tt.want {
				if !slices.Contains(got, n) {
					t.Errorf("does not list -%s:\n%s", n, help)
				}
			}
			for _, n := range tt.absent {
				if strings.Contains(help, n) {
					t.Errorf("names %s:\n%s", n, help)
				}
			}
		})
	}
	// Whatever the lists above leave out: neither one-plan command lists
	// a flag only other plans take.
	for _, c := range []planCommand{tuneCommand, answersCommand} {
		help, got := helpOf(t, c.name)
		for _, n := range got {
			if ids := plansTaking(n); len(ids) > 0 && !slices.Contains(ids, c.plans[0]) {
				t.Errorf("%s --help lists -%s, a flag of --plan %s:\n%s", c.name, n, strings.Join(ids, ", "), help)
			}
		}
	}
}

// TestRunHelpGroupsFlagsByPlan: run's and demo's help lists each plan's
// flags under its heading (a flag an earlier plan shares named there),
// so a reader sees which plan takes which.
func TestRunHelpGroupsFlagsByPlan(t *testing.T) {
	t.Parallel()
	for _, c := range []planCommand{runCommand, demoCommand} {
		help, _ := helpOf(t, c.name)
		sections := map[string]string{}
		for _, s := range strings.Split(help, "\nFlags of --plan ")[1:] {
			id, _, _ := strings.Cut(s, " ")
			sections[id] = s
		}
		for _, k := range plans.All {
			s, ok := sections[k.ID]
			if !ok {
				t.Errorf("%s --help has no heading for --plan %s:\n%s", c.name, k.ID, help)
				continue
			}
			var got []string
			for _, m := range flagLine.FindAllStringSubmatch(s, -1) {
				got = append(got, m[1])
			}
			if _, also, ok := strings.Cut(s, "\n  also "); ok {
				also, _, _ = strings.Cut(also, ", described above")
				for _, n := range strings.Split(also, ", ") {
					got = append(got, strings.TrimPrefix(n, "-"))
				}
			}
			slices.Sort(got)
			want := c.flagsOf(k.ID)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s --help, --plan %s: lists %q, want %q", c.name, k.ID, got, want)
			}
		}
	}
}

// TestFlagOfAnotherCommandRefused: a flag a command does not take gets
// the flag package's error (and exit 2); a one-plan command then says
// which plans take it.
func TestFlagOfAnotherCommandRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"answers", "--endpoint", "http://127.0.0.1:1", "--concurrency", "4"},
			[]string{"flag provided but not defined: -concurrency", "kovara-bench answers: --concurrency applies to --plan kovara or specdec or tune, not to --plan answers"}},
		{[]string{"tune", "--endpoint", "http://127.0.0.1:1", "--depths", "1k"},
			[]string{"flag provided but not defined: -depths", "kovara-bench tune: --depths applies to --plan context, not to --plan tune"}},
		{[]string{"tune", "--repeat", "2"}, []string{"flag provided but not defined: -repeat"}},
		{[]string{"tune", "--plan", "rate"}, []string{"flag provided but not defined: -plan"}},
		{[]string{"demo", "--manifest", "kovara.yaml"}, []string{"flag provided but not defined: -manifest"}},
		{[]string{"validate", "--endpoint", "http://127.0.0.1:1"}, []string{"flag provided but not defined: -endpoint"}},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(tt.args...)
		if code != exitBadInput || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q; want 2 and nothing run", tt.args, code, stdout)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: stderr does not say %q:\n%s", tt.args, w, stderr)
			}
		}
	}
}

// TestDocumentedCommandLinesParse: the command lines README.md and docs/
// give (placeholders filled in) parse with their command's flags and pass
// the plan's flag check.
func TestDocumentedCommandLinesParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		where string
		cmd   planCommand
		args  []string
	}{
		{"README.md", runCommand, []string{"--endpoint", "http://192.168.1.10:8000"}},
		{"README.md", runCommand, []string{"--like", "RUN"}},
		{"README.md", runCommand, []string{"--wall", "http://plug"}},
		{"README.md", runCommand, []string{"--plan", "rate", "--trace", "FILE"}},
		{"README.md", tuneCommand, []string{"--endpoint", "http://127.0.0.1:8080", "--setting", "np2=llama-server -m q4.gguf -np 2 --port 8080", "--setting", "np8=llama-server -m q4.gguf -np 8 --port 8080"}},
		{"README.md", tuneCommand, []string{"FILE.yaml"}},
		{"README.md", tuneCommand, []string{"--endpoint", "URL", "--trace", "FILE"}},
		{"README.md", answersCommand, []string{"--endpoint", "http://127.0.0.1:8080", "--against", "http://127.0.0.1:8081"}},
		{"README.md", demoCommand, nil},
		{"docs/plans.md", runCommand, []string{"--plan", "capacity", "--endpoint", "http://127.0.0.1:8080"}},
		{"docs/plans.md", runCommand, []string{"--plan", "context", "--endpoint", "http://127.0.0.1:8082"}},
		{"docs/plans.md", runCommand, []string{"--plan", "rate", "--endpoint", "http://127.0.0.1:18090", "--rate", "sweep", "--requests", "32"}},
		{"docs/plans.md", runCommand, []string{"--plan", "rate", "--rate", "2", "--requests", "20", "--shared-prefix", "2000", "--max-in-flight", "4", "--input-tokens", "64", "--output-tokens", "64"}},
		{"docs/plans.md", runCommand, []string{"--concurrency", "1,4", "--requests", "12", "--shared-prefix", "2000", "--turns", "3", "--input-tokens", "64", "--output-tokens", "64"}},
		{"docs/plans.md", runCommand, []string{"--plan", "kovara", "--shared-prefix", "2000", "--prefix-groups", "2", "--turns", "3"}},
		{"docs/plans.md", runCommand, []string{"--plan", "rate", "--trace", "FILE", "--speed", "2", "--from", "09:00", "--to", "12:00"}},
		{"docs/plans.md", tuneCommand, []string{"--endpoint", "http://127.0.0.1:18085", "--setting", "np1=llama-server -m tiny.gguf -c 24576 -np 1 --port 18085", "--setting", "np2=llama-server -np 2",
			"--trace", "real-trace.jsonl", "--rounds", "3", "--no-answers"}},
		{"docs/plans.md", tuneCommand, []string{"--endpoint", "URL", "--setting", "a=x", "--setting", "b=y", "--model-setting", "c=MODEL", "--hand-setting", "d=WHAT", "--rounds", "5",
			"--concurrency", "1,4", "--requests", "8", "--input-tokens", "64", "--output-tokens", "8", "--warmup", "1", "--timeout", "60", "--model", "m", "--start-timeout", "2m", "--no-answers", "--yes"}},
		{"docs/plans.md", answersCommand, []string{"--endpoint", "A", "--model", "M", "--against", "B", "--against-model", "N", "--positions", "32", "--answer-prompts", "5", "--top", "20", "--timeout", "120", "-o", "FILE"}},
		{"docs/plans.md", runCommand, []string{"--plan", "stages", "--endpoint", "URL", "--quick", "--users", "4", "--thinking", "off", "--spec-decode", "TEXT", "--note", "TEXT", "--timeout", "60", "-o", "FILE"}},
		{"docs/plans.md", runCommand, []string{"--plan", "specdec", "--endpoint", "URL", "--concurrency", "1,4,16", "--requests", "8", "--output-tokens", "512", "--spec-decode", "TEXT", "-o", "FILE"}},
		{"docs/plans.md", runCommand, []string{"--plan", "capacity", "--endpoint", "URL", "--slo-user-tps", "20", "--slo-ttft-p95", "2000", "--max-concurrency", "256", "--input-tokens", "1024",
			"--output-tokens", "256", "--warmup", "4", "--seed", "7", "--timeout", "60", "-o", "FILE"}},
		{"docs/plans.md", runCommand, []string{"--plan", "context", "--endpoint", "URL", "--depths", "1k,8k,32k", "--output-tokens", "128", "--repeats", "3", "--users", "1", "--seed", "7", "--timeout", "60", "-o", "FILE"}},
		{"docs/plans.md", runCommand, []string{"--plan", "rate", "--endpoint", "URL", "--rate", "1,2,4", "--arrival", "gamma", "--burstiness", "1", "--max-in-flight", "64", "--requests", "64", "--sweep-max", "512",
			"--input-tokens", "256", "--output-tokens", "128", "--slo-ttft-p95", "800", "--slo-tpot", "40", "--slo-user-tps", "20", "--seed", "7", "--timeout", "60", "-o", "FILE"}},
		{"docs/plans.md", runCommand, []string{"--endpoint", "URL", "--concurrency", "1,4", "--repeat", "3"}},
		{"docs/plans.md", runCommand, []string{"--endpoint", "URL", "--like", "RUN", "--model", "M", "--timeout", "60", "--repeat", "2"}},
		{"docs/plans.md", demoCommand, []string{"--plan", "capacity"}},
		{"docs/plans.md", demoCommand, []string{"--plan", "tune"}},
		{"docs/performance.md", runCommand, []string{"--endpoint", "URL", "--concurrency", "8", "--requests", "64", "--output-tokens", "256", "--warmup", "0", "--quiet", "-o", "out.json"}},
		{"docs/distributed.md", runCommand, []string{"--endpoint", "http://192.168.1.10:8000", "--concurrency", "32,64,128", "--shard", "1/3", "--start-at", "2026-12-02T10:00:00Z", "--level-every", "3m", "-o", "shard-1.json"}},
		{"docs/method.md", answersCommand, []string{"--endpoint", "A", "--against", "B"}},
	}
	for _, tt := range tests {
		var f runFlags
		_, set, code, ok := tt.cmd.parse(&f, tt.args, io.Discard)
		if !ok {
			t.Errorf("%s: %s %q does not parse (exit %d)", tt.where, tt.cmd.name, tt.args, code)
			continue
		}
		if err := checkPlanFlags(f.planName, set); err != nil {
			t.Errorf("%s: %s %q: %v", tt.where, tt.cmd.name, tt.args, err)
		}
	}
}
