package plans

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The plans' names as a switch over them would spell them, derived from
// the registry (planNames), so a plan registered later is guarded too:
// planWord names a plan kind, a plan's document format or kind
// (results.CapacityDoc), a plan's own phase; planDocType is one of this
// package's document types, as a type switch would case on it.
var planWord, planDocType = planPatterns()

// planPatterns builds planWord and planDocType from the registry and
// engine/results' source (resultsNames).
func planPatterns() (*regexp.Regexp, *regexp.Regexp) {
	names, docIdents, err := resultsNames()
	if err != nil {
		panic(err)
	}
	any := "(" + strings.Join(names, "|") + ")"
	word := regexp.MustCompile(`^((Plan|plan)` + any + `|` + strings.Join(docIdents, "|") + `|Phase(Decode|Prefill|Users|SpecDec|ContextCold|ContextFollowUp))$`)
	return word, regexp.MustCompile(`^` + any + `$`)
}

// planNames are the Go names of every plan in All ("Rate", "SpecDec"):
// the results.Plan… constant whose value is the kind's ID, with "Plan"
// cut. A kind without one is an error: the guard would not see it.
func planNames() ([]string, error) {
	names, _, err := resultsNames()
	return names, err
}

// resultsNames reads engine/results' source for the plans' names (see
// planNames) and the names of their documents' formats and kinds there
// (FormatRate, RateDoc): the constants whose value is a format of this
// app's documents, and the DocKind variables.
func resultsNames() (names, docIdents []string, err error) {
	ids := map[string]bool{}
	for _, k := range All {
		ids[k.ID] = true
	}
	dir := filepath.Join("..", "engine", "results")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST && g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				for i, n := range v.Names {
					if i >= len(v.Values) {
						continue
					}
					value := v.Values[i]
					// A document kind is declared through a call
					// that registers it (localOnlyKind(DocKind[…]{…})).
					if call, ok := value.(*ast.CallExpr); ok && len(call.Args) == 1 {
						value = call.Args[0]
					}
					switch val := value.(type) {
					case *ast.BasicLit:
						str, err := strconv.Unquote(val.Value)
						switch {
						case err != nil || val.Kind != token.STRING:
						case strings.HasPrefix(n.Name, "Plan") && ids[str]:
							names = append(names, strings.TrimPrefix(n.Name, "Plan"))
							delete(ids, str)
						case strings.HasPrefix(n.Name, "Format") && strings.HasPrefix(str, "kovara-desktop-"):
							docIdents = append(docIdents, n.Name)
						}
					case *ast.CompositeLit:
						if ix, ok := val.Type.(*ast.IndexExpr); ok {
							if id, ok := ix.X.(*ast.Ident); ok && id.Name == "DocKind" {
								docIdents = append(docIdents, n.Name)
							}
						}
					}
				}
			}
		}

	}
	if len(ids) > 0 {
		return nil, nil, fmt.Errorf("plans %v have no results.Plan… constant: the guard against switches over the plans cannot name them", slices.Sorted(maps.Keys(ids)))
	}
	slices.Sort(names)
	slices.Sort(docIdents)
	return names, docIdents, nil
}

// TestPlanNamesAreTheRegistrys: every plan in All is named, Rate too
// (a switch on results.PlanRate once passed a hand-written list).
func TestPlanNamesAreTheRegistrys(t *testing.T) {
	names, err := planNames()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(All) || !slices.Contains(names, "Rate") || !slices.Contains(names, "Answers") {
		t.Errorf("names %q for %d plans", names, len(All))
	}
	for _, w := range []string{"PlanRate", "planAnswers", "FormatRate", "RateDoc", "PlanSpecDec", "FormatStages", "TuneDoc"} {
		if !planWord.MatchString(w) {
			t.Errorf("%s is not taken for a plan's name", w)
		}
	}
	if planWord.MatchString("FormatKovara") { // a trace's format, not a plan's document
		t.Error("FormatKovara is taken for a plan's document format")
	}
	if !planDocType.MatchString("Rate") || planDocType.MatchString("Ratee") {
		t.Error("the document types are not the plans'")
	}
}

// TestNoSwitchOverThePlans walks every Go file of the module but this
// package's and its tests, and fails on a switch with a case over the
// plans, or an if–else chain that tells two plans apart: what a plan is
// and does is registered once here (a Kind and its Doc), and the CLI and
// the app loop over All or look a plan up in a table keyed by its ID.
func TestNoSwitchOverThePlans(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	walked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "plans" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		walked++
		for _, v := range planSwitches(f) {
			t.Errorf("%s:%d: %s", rel, fset.Position(v.Pos()).Line, describe(v))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if walked < 100 {
		t.Fatalf("walked %d Go files from %s: not the module", walked, root)
	}
}

// planSwitches are f's switches over the plans and its if–else chains
// telling two plans apart.
func planSwitches(f *ast.File) []ast.Node {
	var out []ast.Node
	chained := map[*ast.IfStmt]bool{} // the else-ifs of a chain already looked at
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SwitchStmt:
			// A switch on a value with a plan among its cases is over the
			// plans; a switch of conditions is when two of them name one
			// (one alone is a guard, as an if is).
			need, n := 1, 0
			if x.Tag == nil {
				need = 2
			}
			for _, c := range x.Body.List {
				if mentionsPlan(c.(*ast.CaseClause).List...) {
					n++
				}
			}
			if n >= need {
				out = append(out, x)
			}
		case *ast.TypeSwitchStmt:
			for _, c := range x.Body.List {
				for _, e := range c.(*ast.CaseClause).List {
					if sel, ok := e.(*ast.SelectorExpr); ok && planDocType.MatchString(sel.Sel.Name) {
						if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "plans" {
							out = append(out, x)
						}
					}
				}
			}
		case *ast.IfStmt:
			if chained[x] {
				return true
			}
			n := 0
			for s := x; s != nil; {
				if mentionsPlan(s.Cond) {
					n++
				}
				next, _ := s.Else.(*ast.IfStmt)
				if next != nil {
					chained[next] = true
				}
				s = next
			}
			if n >= 2 {
				out = append(out, x)
			}
		}
		return true
	})
	return out
}

// mentionsPlan says whether any of es names a plan (planWord).
func mentionsPlan(es ...ast.Expr) bool {
	found := false
	for _, e := range es {
		ast.Inspect(e, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && planWord.MatchString(id.Name) {
				found = true
			}
			return !found
		})
	}
	return found
}

func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.IfStmt:
		return "an if–else chain tells plans apart: give the plans' Kind or Doc what differs, or look it up by plan ID"
	}
	return "a switch over the plans: give the plans' Kind or Doc what differs, or look it up by plan ID"
}

// TestTheWalkFindsSwitches holds the walk to what it must catch.
func TestTheWalkFindsSwitches(t *testing.T) {
	src := `package x
func a(p string) {
	switch p {
	case results.PlanStages:
	}
	switch d.(type) {
	case plans.Capacity:
	}
	if p == planKovara {
	} else if p == planContext {
	}
	if p == planKovara { // one plan alone is no chain
	}
	switch {
	case p == "x":
	}
	switch {
	case set["plan"] && p != planAnswers: // one plan alone is a guard
	case p == "":
	}
	switch {
	case p == planRate:
	case p == planTune:
	}
	switch format {
	case results.CapacityDoc.Format:
	}
}`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(planSwitches(f)); got != 5 {
		t.Errorf("found %d, want the two switches on a plan's name and format, the type switch, the chain and the switch of two plans' conditions", got)
	}
}
