package archtest

import (
	"bufio"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/kovara/desktop/"

// rule is one line of the block: a package's imports exactly, or
// anything of the module but some.
type rule struct {
	exact []string // nil with anyBut
	any   bool
	but   []string
}

// TestImportRulesAreTheCodes: every package of the module is in
// docs/architecture.md's imports block, and imports exactly the module's
// packages its line names (or none of those an "any but" line
// excludes): the prose above the block and the graph cannot drift apart
// without this failing.
func TestImportRulesAreTheCodes(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	rules := readRules(t, filepath.Join(root, "docs", "architecture.md"))
	pkgs := modulePackages(t, root)
	if len(pkgs) < 20 {
		t.Fatalf("found %d packages under %s: not the module", len(pkgs), root)
	}
	for _, p := range pkgs {
		r, ok := rules[p]
		if !ok {
			t.Errorf("%s is not in docs/architecture.md's imports block", p)
			continue
		}
		got := importsOf(t, filepath.Join(root, p))
		switch {
		case r.any:
			for _, b := range r.but {
				if slices.Contains(got, b) {
					t.Errorf("%s imports %s, which its line excludes", p, b)
				}
			}
		case !slices.Equal(got, r.exact):
			t.Errorf("%s imports %q; docs/architecture.md says %q", p, got, r.exact)
		}
	}
	for p := range rules {
		if !slices.Contains(pkgs, p) {
			t.Errorf("docs/architecture.md's imports block names %s, which is not a package of the module", p)
		}
	}
}

// readRules reads the ```imports block.
func readRules(t *testing.T, path string) map[string]rule {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules := map[string]rule{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "```imports":
			in = true
			continue
		case !in:
			continue
		case line == "```":
			return rules
		}
		pkg, rhs, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("%s: %q is not PACKAGE: IMPORTS", path, line)
		}
		words := strings.Fields(rhs)
		var r rule
		switch {
		case len(words) == 1 && words[0] == "none":
			r.exact = []string{}
		case len(words) >= 1 && words[0] == "any":
			r.any = true
			if len(words) > 1 {
				if words[1] != "but" {
					t.Fatalf("%s: %q: write any, or any but PACKAGES", path, line)
				}
				r.but = words[2:]
			}
		default:
			r.exact = slices.Sorted(slices.Values(words))
		}
		rules[strings.TrimSpace(pkg)] = r
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("%s has no closed ```imports block", path)
	return nil
}

// modulePackages are the module's directories holding a package (a
// non-test Go file), as paths from the root.
func modulePackages(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".go") && !strings.HasSuffix(d.Name(), "_test.go") {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			if rel != "." && !slices.Contains(out, filepath.ToSlash(rel)) {
				out = append(out, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// importsOf are the module's packages dir imports outside its tests,
// sorted, for every platform it builds on (build constraints ignored).
func importsOf(t *testing.T, dir string) []string {
	t.Helper()
	ctx := build.Default
	ctx.UseAllFiles = false
	var all []string
	for _, goos := range []string{"linux", "darwin", "windows"} {
		ctx.GOOS = goos
		p, err := ctx.ImportDir(dir, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				continue
			}
			t.Fatal(err)
		}
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, module); ok && !slices.Contains(all, rel) {
				all = append(all, rel)
			}
		}
	}
	slices.Sort(all)
	if all == nil {
		all = []string{}
	}
	return all
}

// TestHardwareBelowTheEngine: hw reads the hardware and nothing of the
// engine — not even the results format, whose hardware part lives in
// telemetry, below both (issue #52: hw importing engine/results was the
// one import in the tree that ran back up a layer). What `go list -deps
// ./hw` names, module packages followed import by import.
func TestHardwareBelowTheEngine(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(p string)
	walk = func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		for _, imp := range importsOf(t, filepath.Join(root, p)) {
			walk(imp)
		}
	}
	walk("hw")
	for p := range seen {
		if strings.HasPrefix(p, "engine") || p == "plans" || p == "storage" {
			t.Errorf("hw depends on %s: what both need belongs below both", p)
		}
	}
	if !seen["telemetry"] {
		t.Errorf("hw's dependencies %v do not reach telemetry: the walk is not following imports", seen)
	}
}
