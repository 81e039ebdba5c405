package plans

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// planWord names a plan kind, a plan's document format or kind
// (results.CapacityDoc), a plan's own phase or a plan's document type:
// what a switch over the plans would case on.
var planWord = regexp.MustCompile(`^((Plan|plan)(Kovara|Stages|SpecDec|Capacity|Context|Tune)|Format(Stages|SpecDec|Capacity|Context|Tune)|(Stages|SpecDec|Capacity|Context|Tune)Doc|Phase(Decode|Prefill|Users|SpecDec|ContextCold|ContextFollowUp))$`)

// planDocType is one of this package's document types, as a type switch
// would case on it.
var planDocType = regexp.MustCompile(`^(Kovara|Stages|SpecDec|Capacity|Context|Tune)$`)

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
			for _, c := range x.Body.List {
				if mentionsPlan(c.(*ast.CaseClause).List...) {
					out = append(out, x)
					break
				}
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
	switch format {
	case results.CapacityDoc.Format:
	}
}`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(planSwitches(f)); got != 4 {
		t.Errorf("found %d, want the two switches on a plan's name and format, the type switch and the chain", got)
	}
}
