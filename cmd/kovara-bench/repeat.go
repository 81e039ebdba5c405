package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// printSpread shows how far apart a repeated plan's runs came out, per
// level and metric (compare.GroupSpread), and says it in a sentence.
func printSpread(w io.Writer, files []*results.File) {
	rows := compare.GroupSpread(files)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, compare.SpreadSentence(rows))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "conc\tmetric\tmean\tlowest\thighest\tspread\t")
	for _, r := range rows {
		label := r.Metric.Label
		if r.Metric.Unit != "" {
			label += " (" + r.Metric.Unit + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t\n", r.Concurrency, label,
			compare.FormatValue(r.Metric, r.Mean), compare.FormatValue(r.Metric, r.Min),
			compare.FormatValue(r.Metric, r.Max), compare.FormatPercent(r.Spread))
	}
	tw.Flush()
}

// runLike runs again like a run (a results file, or a library id): the
// plan of its records (engine.PlanLike), with --model, --timeout and
// --endpoint as given, then compares the two.
func runLike(f runFlags, set map[string]bool, stdout, stderr io.Writer) int {
	for _, name := range []string{"concurrency", "input-tokens", "output-tokens", "requests", "warmup", "manifest", "profile", "plan"} {
		if set[name] {
			fmt.Fprintf(stderr, "kovara-bench run: --like takes the run's own %s; leave --%s out (without --like, any plan can be given)\n", name, name)
			return exitBadInput
		}
	}
	var lib *storage.Library
	doc, err := storage.LoadArg(f.like, &lib, openLibrary)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench run: --like: %v\n", err)
		return exitBadInput
	}
	k, ok := doc.(plans.Kovara)
	if !ok {
		fmt.Fprintf(stderr, "kovara-bench run: --like: %s is one of the %s; run again like a Kovara method run (its plan and settings are given again with --plan)\n", f.like, doc.Kind().Results)
		return exitBadInput
	}
	orig := k.File
	plan, err := engine.PlanLike(orig)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench run: --like: %v\n", err)
		return exitBadInput
	}
	if set["model"] {
		plan.Model = f.model
	}
	if set["timeout"] {
		if plan.Timeout, err = engine.ParseTimeout(f.timeout); err != nil {
			fmt.Fprintf(stderr, "kovara-bench run: --%v\n", err)
			return exitBadInput
		}
	}
	if set["seed"] {
		if plan.Seed, plan.FixedSeed, err = engine.ParseSeed(f.seed); err != nil {
			fmt.Fprintf(stderr, "kovara-bench run: --%v\n", err)
			return exitBadInput
		}
	}
	ep, err := f.resolveEndpoint(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench run: %v\n", err)
		return exitBadInput
	}
	ref := &results.LikeRef{CreatedAt: orig.CreatedAt}
	if !storage.IsFile(f.like) {
		ref.ID = f.like
	}
	fmt.Fprintf(stderr, "running again like %s: %s\n", storage.ShortName(f.like), engine.DescribePlan(plan))
	f.repeat = max(f.repeat, 1)
	var got []*results.File
	code := repeatedInto(plan, ep, f, ref, &got, stdout, stderr)
	if len(got) == 0 {
		return code
	}
	fmt.Fprintln(stdout)
	files := append([]*results.File{orig}, got...)
	labels := []string{storage.ShortName(f.like)}
	for i := range got {
		labels = append(labels, fmt.Sprintf("again %d", i+1))
	}
	// The comparison's verdict lines already say whether each run
	// reproduced the first (engine/compare, the one verdict).
	printComparison(stdout, files, labels)
	return code
}
