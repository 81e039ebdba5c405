package storage

// This file is the only place in the project that imports a YAML library.
// Everything else works on yamlNode, a small tree of our own, so replacing
// gopkg.in/yaml.v3 (no longer maintained) with a maintained fork touches
// this file alone.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// yamlKind says what a yamlNode is.
type yamlKind int

const (
	yamlScalar yamlKind = iota + 1
	yamlMapping
	yamlSequence
	yamlAlias // a *name reference to an anchored node
)

// yamlNode is one node of a parsed YAML document: what the manifest parser
// needs and nothing more.
type yamlNode struct {
	kind yamlKind
	// tag is the resolved short tag of a scalar: "!!str", "!!int",
	// "!!float", "!!bool", "!!null", "!!timestamp", "!!merge" or an
	// explicit tag as written ("!custom").
	tag string
	// value is a scalar's text without quotes or escapes; for an alias,
	// the anchor's name.
	value string
	// line and column are 1-based positions of the node's first character.
	line, column int
	// content holds a mapping's keys and values alternately (key, value,
	// key, value…) or a sequence's items, in document order.
	content []*yamlNode
}

// yamlSyntaxError is a document the YAML library could not read. line is
// the line the library named, 0 when it named none.
type yamlSyntaxError struct {
	line int
	msg  string
}

func (e *yamlSyntaxError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("line %d: %s", e.line, e.msg)
	}
	return e.msg
}

// yamlErrLine matches the library's "yaml: line N: problem" messages.
var yamlErrLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// decodeYAMLNode parses data as exactly one YAML document and returns its
// root node. An empty stream (nothing but comments and blank lines) gives
// a nil node and no error. A second document is refused: a manifest is one
// document. Every failure is a *yamlSyntaxError.
func decodeYAMLNode(data []byte) (root *yamlNode, err error) {
	// The library reports problems by panicking internally and recovering;
	// a panic that escapes it anyway is a library bug, never a crash here.
	defer func() {
		if r := recover(); r != nil {
			root = nil
			err = &yamlSyntaxError{msg: fmt.Sprintf("the YAML reader failed on this file (%v)", r)}
		}
	}()

	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlError(err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, &yamlSyntaxError{line: next.Line, msg: "a second YAML document starts here (after ---); a manifest is a single document"}
	case errors.Is(err, io.EOF):
	default:
		return nil, yamlError(err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	return convertYAMLNode(doc.Content[0]), nil
}

// yamlParserProblems are the problems yaml.v3's parser (as opposed to its
// scanner) reports. For these v3.0.1 prints a 0-based line number (its
// scanner errors get +1, its parser errors do not), so one is added here.
var yamlParserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found undefined tag handle":             true,
	"found duplicate %YAML directive":        true,
	"found duplicate %TAG directive":         true,
	"found incompatible YAML document":       true,
}

// yamlError turns the library's error text into a line and a sentence.
// The library leaves the line out when the problem is on the first line
// (it prints only non-zero 0-based lines), so a scanner or parser problem
// without a line is put on line 1; other failures (an unknown anchor, for
// one) have no position and get line 0.
func yamlError(err error) *yamlSyntaxError {
	msg := err.Error()
	if m := yamlErrLine.FindStringSubmatch(msg); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			if yamlParserProblems[m[2]] {
				n++
			}
			return &yamlSyntaxError{line: n, msg: m[2]}
		}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	for _, prefix := range []string{"did not find ", "could not find ", "found ", "mapping ", "block sequence "} {
		if strings.HasPrefix(msg, prefix) {
			return &yamlSyntaxError{line: 1, msg: msg}
		}
	}
	return &yamlSyntaxError{msg: msg}
}

// convertYAMLNode copies the library's node tree into ours. Aliases are
// kept as alias nodes (not expanded), so the caller decides what to do
// with them and a document cannot make us walk an exponential tree.
func convertYAMLNode(n *yaml.Node) *yamlNode {
	out := &yamlNode{line: n.Line, column: n.Column}
	switch n.Kind {
	case yaml.MappingNode:
		out.kind = yamlMapping
	case yaml.SequenceNode:
		out.kind = yamlSequence
	case yaml.AliasNode:
		out.kind = yamlAlias
		out.value = n.Value
		return out
	case yaml.DocumentNode:
		// Not produced below the root; treat as its content.
		if len(n.Content) > 0 {
			return convertYAMLNode(n.Content[0])
		}
		out.kind = yamlScalar
		out.tag = "!!null"
		return out
	default:
		out.kind = yamlScalar
		out.tag = n.ShortTag()
		out.value = n.Value
		return out
	}
	out.content = make([]*yamlNode, 0, len(n.Content))
	for _, c := range n.Content {
		out.content = append(out.content, convertYAMLNode(c))
	}
	return out
}

// decodeYAMLStrict decodes a document into v, refusing keys v does not
// have. It is for files the app writes itself (saved endpoints), where a
// struct is the whole schema.
func decodeYAMLStrict(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &yamlSyntaxError{msg: fmt.Sprintf("the YAML reader failed on this file (%v)", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		msg := err.Error()
		if m := yamlErrLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return &yamlSyntaxError{line: line, msg: m[2]}
		}
		return &yamlSyntaxError{msg: strings.TrimPrefix(msg, "yaml: ")}
	}
	return nil
}

// encodeYAML writes v as a YAML document with two-space indents.
func encodeYAML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
