package report

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// kindDocs is a document of every plan, in plans.All's order: the clean
// one of planstest.
func kindDocs(t *testing.T) []plans.Doc {
	t.Helper()
	var out []plans.Doc
	for _, c := range planstest.Cases() {
		if !c.Failed {
			out = append(out, c.Doc)
		}
	}
	if len(out) != len(plans.All) {
		t.Fatalf("%d clean documents for %d plans", len(out), len(plans.All))
	}
	return out
}

// TestEveryLocalTextIsDecided derives, from every document kind's Go
// type, each text its local section can hold, and wants each either
// private (beneath a key of results.PrivateKeys) or allowed out
// (planstest.SharedLocal), never both: a new text of local fails here
// until someone decides which. The keys planstest.PrivateNumbers says
// are private must be private keys too. A private key or a shared path
// that no kind holds any more fails, so neither list keeps a dead entry.
func TestEveryLocalTextIsDecided(t *testing.T) {
	t.Parallel()
	keys := results.PrivateKeys()
	used := map[string]bool{}
	for _, d := range kindDocs(t) {
		for _, text := range planstest.LocalTexts(d) {
			var private, shared []string
			for _, k := range keys {
				if planstest.Blanks(k.Path, text) {
					private = append(private, k.Path)
				}
			}
			for p := range planstest.SharedLocal {
				if planstest.Covers(p, text) {
					shared = append(shared, p)
				}
			}
			for _, p := range append(private, shared...) {
				used[p] = true
			}
			switch {
			case len(private) == 0 && len(shared) == 0:
				t.Errorf("%s: %s is a text of local that is neither private (results.PrivateKeys) nor allowed out (planstest.SharedLocal): decide which", d.Kind().ID, text)
			case len(private) > 0 && len(shared) > 0:
				t.Errorf("%s: %s is private (%s) and allowed out (%s) at once", d.Kind().ID, text, private, shared)
			}
		}
		for _, k := range planstest.KeysOf(d) {
			used[k.Path] = true // a key holding no text (token ids) is used by its kind
		}
	}
	for p := range planstest.PrivateNumbers {
		if !slices.ContainsFunc(keys, func(k results.PrivateKey) bool { return k.Path == p }) {
			t.Errorf("%s is private (planstest.PrivateNumbers) but not a key of results.PrivateKeys", p)
		}
	}
	for _, k := range keys {
		if !used[k.Path] {
			t.Errorf("the private key %s is in no document kind's local section", k.Path)
		}
	}
	for p := range planstest.SharedLocal {
		if !used[p] {
			t.Errorf("planstest.SharedLocal's %s is in no document kind's local section", p)
		}
	}
}

// TestPrivateKeysOfEveryKind: each kind's document holds the private keys
// its local section has, and every kind has the endpoint's three.
func TestPrivateKeysOfEveryKind(t *testing.T) {
	t.Parallel()
	for _, d := range kindDocs(t) {
		var got []string
		for _, k := range planstest.KeysOf(d) {
			got = append(got, k.Path)
		}
		for _, want := range []string{"local.endpoint", "local.endpoint_host", "local.served_models"} {
			if !slices.Contains(got, want) {
				t.Errorf("%s: private keys %v, want %s among them", d.Kind().ID, got, want)
			}
		}
		t.Logf("%s: %s", d.Kind().ID, strings.Join(got, " "))
	}
}

// plantedLeaks fails t for each plant found in text, by its key.
func plantedLeaks(t *testing.T, what, text string, plants []planstest.Plant) {
	t.Helper()
	for _, p := range plants {
		if strings.Contains(text, p.Value) {
			t.Errorf("%s holds %s's %s (%q)", what, p.Key, p.Path, p.Value)
		}
	}
}

// plantedDoc is d with every private key of its kind planted, failing
// when a plant did not reach the document (a key the document cannot
// hold is no test of anything).
func plantedDoc(t *testing.T, d plans.Doc) (plans.Doc, []planstest.Plant) {
	t.Helper()
	pd, plants := planstest.Planted(t, d)
	data := string(must(pd.Marshal()))
	for _, p := range plants {
		if !strings.Contains(data, p.Value) {
			t.Fatalf("%s: the plant in %s did not reach the document", d.Kind().ID, p.Path)
		}
	}
	if len(plants) == 0 {
		t.Fatalf("%s: nothing planted", d.Kind().ID)
	}
	return pd, plants
}

// TestPlantedPrivateKeysStayOut plants a distinct value in every text of
// every private key (results.PrivateKeys) of every document — each plan's
// clean and failed one and those a real llama-server gave — and finds
// none of them in anything made of it: the shareable document every
// report starts from, the Markdown, the CSV, the HTML page and every text
// drawn into its charts, a comparison's three, and the published document
// or the reasons it cannot be published (results.PublishCheck, which
// Export, `export` and `validate` write). The JSONL is every request from
// the raw samples, local and for the person's own analysis by design
// (the CLI's help says so): what it may carry is times, counts and error
// classes, never a text of local, so no plant may be in it either.
func TestPlantedPrivateKeysStayOut(t *testing.T) {
	t.Parallel()
	byKind := map[*plans.Kind][]plans.Doc{}
	plantsOf := map[*plans.Kind][]planstest.Plant{}
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			d, plants := plantedDoc(t, c.doc)
			byKind[d.Kind()] = append(byKind[d.Kind()], d)
			plantsOf[d.Kind()] = plants

			sd, err := Shareable(d)
			if err != nil {
				t.Fatal(err)
			}
			plantedLeaks(t, "the shareable document", string(must(sd.Marshal())), plants)
			r, err := Of(d)
			if err != nil {
				t.Fatal(err)
			}
			plantedLeaks(t, "the Markdown", Markdown(r), plants)
			var b bytes.Buffer
			if err := CSV(&b, r); err != nil {
				t.Fatal(err)
			}
			plantedLeaks(t, "the CSV", b.String(), plants)
			plantedLeaks(t, "the HTML", htmlText(t, []plans.Doc{d}), plants)
			b.Reset()
			switch err := JSONL(&b, d); {
			case errors.Is(err, ErrNoSamples):
			case err != nil:
				t.Fatal(err)
			default:
				plantedLeaks(t, "the JSONL", b.String(), plants)
			}
			payload, reasons := results.PublishCheck(must(d.Marshal()))
			plantedLeaks(t, "the published document", string(payload), plants)
			plantedLeaks(t, "the reasons it cannot be published", strings.Join(reasons, "\n"), plants)
		})
	}
	for _, k := range plans.All {
		docs := byKind[k]
		if len(docs) < 2 || k != plans.KovaraMethod && !k.HasComparison() {
			continue
		}
		r, err := Compared(docs[:2], nil)
		if err != nil {
			t.Fatalf("%s: %v", k.ID, err)
		}
		plantedLeaks(t, k.ID+" comparison's Markdown", Markdown(r), plantsOf[k])
		var b bytes.Buffer
		if err := CSV(&b, r); err != nil {
			t.Fatal(err)
		}
		plantedLeaks(t, k.ID+" comparison's CSV", b.String(), plantsOf[k])
		plantedLeaks(t, k.ID+" comparison's HTML", htmlText(t, docs[:2]), plantsOf[k])
	}
}

// htmlText is the HTML page of docs (its charts sketched) and every text
// its charts draw.
func htmlText(t *testing.T, docs []plans.Doc) string {
	t.Helper()
	var b bytes.Buffer
	if err := writeHTML(&b, docs, nil, sketch); err != nil {
		t.Fatal(err)
	}
	ds, err := drawingsOf(docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		b.WriteString("\n" + d.title + "\n" + d.none)
		if d.spec != nil {
			b.WriteString("\n" + specText(d.spec))
		}
		if d.timeline != nil {
			b.WriteString("\n" + d.timeline.Title + "\n" + d.timeline.Subtitle)
		}
	}
	return b.String()
}

// TestEachPrivateKeyPublishedAlone plants one private key at a time in
// every document and runs the publish check on it: where the document
// can be published (the real llama-server's Kovara runs, any key but the
// shard's), the published document is written, and holds no plant; where
// it cannot, the reasons hold none. One key at a time, so that no other
// key's plant stops the document from being published.
func TestEachPrivateKeyPublishedAlone(t *testing.T) {
	t.Parallel()
	published := 0
	for _, c := range goldenCases(t) {
		d := c.doc
		for _, k := range planstest.KeysOf(d) {
			pd, plants := planstest.PlantedIn(t, d, []string{k.Path})
			payload, reasons := results.PublishCheck(must(pd.Marshal()))
			if payload != nil {
				published++
			}
			plantedLeaks(t, d.Kind().ID+" "+k.Path+": the published document", string(payload), plants)
			plantedLeaks(t, d.Kind().ID+" "+k.Path+": the reasons", strings.Join(reasons, "\n"), plants)
		}
	}
	if published == 0 {
		t.Error("no planted document was published: the check of the published document checked nothing")
	}
}
