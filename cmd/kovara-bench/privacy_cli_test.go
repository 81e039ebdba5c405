package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// privacyDoc is one document the CLI's privacy tests plant in.
type privacyDoc struct {
	name string
	doc  plans.Doc
}

// privacyDocs are every plan's clean and failed document and the Kovara
// run a real llama-server gave (one that can be published, so that
// export and validate write a published document).
func privacyDocs(t *testing.T) []privacyDoc {
	out := []privacyDoc{{"llama-kovara", plans.Kovara{File: planstest.LlamaKovara(t)}}}
	for _, c := range planstest.Cases() {
		out = append(out, privacyDoc{strings.ReplaceAll(c.Name, " ", "-"), c.Doc})
	}
	return out
}

// cliLeaks fails t for each plant in what a command printed or wrote.
func cliLeaks(t *testing.T, what, text string, plants []planstest.Plant) {
	t.Helper()
	for _, p := range plants {
		if strings.Contains(text, p.Value) {
			t.Errorf("%s holds %s's %s (%q)", what, p.Key, p.Path, p.Value)
		}
	}
}

// toThePerson are the private keys validate and export say on standard
// error, to the person who runs them on their own file: the file's
// warnings are its notes (results.Warnings), as the app's result view
// shows them, before the document to publish — which holds none of them.
// Every other key stays off standard error too.
var toThePerson = []string{"local.warnings", "local.telemetry.warnings"}

// notToThePerson are plants without those of toThePerson.
func notToThePerson(plants []planstest.Plant) []planstest.Plant {
	return slices.DeleteFunc(slices.Clone(plants), func(p planstest.Plant) bool { return slices.Contains(toThePerson, p.Key) })
}

// TestPlantedPrivateKeysStayOutOfTheCLI plants a distinct value in every
// private key (results.PrivateKeys) of every plan's documents and runs
// every command that writes something of a saved document: validate,
// export (to standard output and to a file), and report in its four
// formats — and, for the plans whose runs are compared, report of two.
// None prints or writes a plant on standard output or in a file, nor on
// standard error but for the file's own warnings validate and export say
// to the person who runs them (toThePerson).
func TestPlantedPrivateKeysStayOutOfTheCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pairs := map[string][]string{}
	for _, c := range privacyDocs(t) {
		t.Run(c.name, func(t *testing.T) {
			d, plants := planstest.Planted(t, c.doc)
			path := writeDoc(t, dir, c.name+".json", d)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range plants {
				if !strings.Contains(string(data), p.Value) {
					t.Fatalf("the plant in %s did not reach the file", p.Path)
				}
			}
			if k := d.Kind(); k == plans.KovaraMethod || k.HasComparison() {
				pairs[k.ID] = append(pairs[k.ID], path)
			}
			out := filepath.Join(t.TempDir(), "published.json")
			for _, args := range [][]string{
				{"validate", path},
				{"validate", "--accept-problems", path},
				{"export", path, "-o", "-"},
				{"export", path, "--accept-problems", "-o", out},
				{"report", path, "--format", "md"},
				{"report", path, "--format", "csv"},
				{"report", path, "--format", "html"},
				{"report", path, "--format", "jsonl"},
			} {
				code, stdout, stderr := runCLI(args...)
				what := args[0]
				if what == "report" && args[3] != "jsonl" && code != exitOK {
					t.Errorf("report --format %s: exit %d: %s", args[3], code, stderr) // else it checked nothing
				}
				cliLeaks(t, what+"'s output", stdout, plants)
				if what == "report" {
					cliLeaks(t, what+"'s standard error", stderr, plants)
				} else {
					cliLeaks(t, what+"'s standard error", stderr, notToThePerson(plants))
				}
			}
			if written, err := os.ReadFile(out); err == nil {
				cliLeaks(t, "the file export wrote", string(written), plants)
			}
		})
	}
	for id, paths := range pairs {
		if len(paths) < 2 {
			continue
		}
		for _, format := range []string{"md", "csv", "html"} {
			code, stdout, stderr := runCLI("report", paths[0], paths[1], "--format", format)
			if code != exitOK {
				t.Errorf("%s: report of two --format %s: exit %d: %s", id, format, code, stderr)
			}
			var plants []planstest.Plant
			for _, c := range privacyDocs(t) {
				if c.doc.Kind().ID == id {
					_, p := planstest.Planted(t, c.doc)
					plants = append(plants, p...)
				}
			}
			cliLeaks(t, id+" comparison's "+format, stdout+stderr, plants)
		}
	}
}

// TestEachPrivateKeyExportedAlone plants one private key at a time in
// the real llama-server's Kovara run, which can be published, and exports
// it: each is written (any key but the shard's, which makes it a shard
// that is not published alone), and none holds its plant.
func TestEachPrivateKeyExportedAlone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := plans.Kovara{File: planstest.LlamaKovara(t)}
	written := 0
	for _, k := range planstest.KeysOf(d) {
		pd, plants := planstest.PlantedIn(t, d, []string{k.Path})
		path := writeDoc(t, dir, strings.NewReplacer(".", "-", "[]", "").Replace(k.Path)+".json", pd)
		code, stdout, stderr := runCLI("export", path, "--accept-problems", "-o", "-")
		if code == exitOK {
			written++
		}
		cliLeaks(t, k.Path+": export's output", stdout, plants)
		cliLeaks(t, k.Path+": export's standard error", stderr, notToThePerson(plants))
		_, stdout, stderr = runCLI("validate", path)
		cliLeaks(t, k.Path+": validate's output", stdout, plants)
		cliLeaks(t, k.Path+": validate's standard error", stderr, notToThePerson(plants))
	}
	if written == 0 {
		t.Error("nothing was exported: the check of what export writes checked nothing")
	}
}
