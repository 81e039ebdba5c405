// Command importgroups checks that every Go file given (or every file
// under the current directory) groups its imports the one way this
// project does: the standard library, then other modules, then this
// module, one group each, in that order, separated by a blank line.
// gofmt sorts within a group; goimports does not merge groups, so a file
// can drift without this check. It prints each offending file with the
// reason and exits 1 when there is any.
package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const module = "github.com/kovara/desktop"

// kind orders import paths: 0 standard library, 1 another module, 2 this
// module.
func kind(path string) int {
	switch {
	case path == module || strings.HasPrefix(path, module+"/"):
		return 2
	case strings.Contains(strings.SplitN(path, "/", 2)[0], "."):
		return 1
	}
	return 0
}

var kindNames = [3]string{"standard library", "other modules", "this module"}

// check returns why a file's imports are grouped wrongly, or "".
func check(path string) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
	if err != nil {
		return "", err
	}
	prevLine, prevKind, group := 0, -1, -1
	var seen [3]bool
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			return "", err
		}
		k, line := kind(p), fset.Position(im.Pos()).Line
		newGroup := prevLine == 0 || line > prevLine+1
		switch {
		case newGroup && seen[k]:
			return fmt.Sprintf("%s imports are split into more than one group (at %q)", kindNames[k], p), nil
		case !newGroup && k != group:
			return fmt.Sprintf("%q (%s) shares a group with %s imports", p, kindNames[k], kindNames[group]), nil
		case k < prevKind:
			return fmt.Sprintf("%q (%s) comes after %s imports", p, kindNames[k], kindNames[prevKind]), nil
		}
		if newGroup {
			group = k
		}
		seen[k] = true
		prevLine, prevKind = line, k
	}
	return "", nil
}

func main() {
	files := os.Args[1:]
	if len(files) == 0 {
		err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "importgroups:", err)
			os.Exit(2)
		}
	}
	bad := 0
	for _, p := range files {
		why, err := check(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "importgroups: %s: %v\n", p, err)
			os.Exit(2)
		}
		if why != "" {
			fmt.Printf("%s: %s\n", p, why)
			bad++
		}
	}
	if bad > 0 {
		fmt.Printf("importgroups: %d files group their imports otherwise: standard library, other modules, then %s, one group each\n", bad, module)
		os.Exit(1)
	}
}
