package results

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var englishPrinter = message.NewPrinter(language.English)

// SchemaJSON is the JSON Schema (draft 2020-12) of the whole results file.
// engine/results/schema.json is the canonical copy; docs/results.schema.json
// must be byte-identical (a test checks this).
//
//go:embed schema.json
var SchemaJSON []byte

// schemaURL is only a name for the embedded schema inside the compiler; no
// network or file access is ever made.
const schemaURL = "urn:kovara:benchmark-results:1"

// maxDepth bounds the nesting of any file we read. The format itself needs
// fewer than ten levels; the bound keeps a hostile file from exhausting the
// stack.
const maxDepth = 256

var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON))
	if err != nil {
		return nil, fmt.Errorf("results schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("results schema: %w", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("results schema: %w", err)
	}
	return sch, nil
})

// Violation is one way in which a file breaks the format.
type Violation struct {
	// Pointer is the JSON pointer (RFC 6901) of the offending value; ""
	// is the whole file.
	Pointer string
	// Message says what is wrong, in plain words.
	Message string
}

func (v Violation) String() string {
	if v.Pointer == "" {
		return "at the top level: " + v.Message
	}
	return "at " + v.Pointer + ": " + v.Message
}

// ValidationError lists every violation found in a file. Validate, Decode
// and Marshal return it when the JSON is well formed but breaks the schema.
type ValidationError struct {
	Violations []Violation
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	if len(e.Violations) == 1 {
		b.WriteString("not a valid kovara-benchmark-results file: ")
		b.WriteString(e.Violations[0].String())
		return b.String()
	}
	fmt.Fprintf(&b, "not a valid kovara-benchmark-results file (%d problems):", len(e.Violations))
	for _, v := range e.Violations {
		b.WriteString("\n  - ")
		b.WriteString(v.String())
	}
	return b.String()
}

// Validate checks raw JSON against the results schema. A malformed document
// gives a plain error; a well-formed one that breaks the schema gives a
// *ValidationError naming each violation by its JSON pointer. Object keys
// that appear twice in one object are violations too, because readers
// disagree about which copy counts.
func Validate(data []byte) error {
	_, err := validate(data)
	return err
}

// validate parses data and checks it. The parsed document (maps, slices,
// json.Number, strings, bools, nil) comes back whenever data is well-formed
// JSON, with a *ValidationError beside it if the schema is broken.
func validate(data []byte) (any, error) {
	doc, dups, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	sch, err := compiledSchema()
	if err != nil {
		return nil, err
	}
	violations := dups
	if err := sch.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, err
		}
		violations = append(violations, flatten(ve)...)
	}
	if len(violations) > 0 {
		return doc, &ValidationError{Violations: sortViolations(violations)}
	}
	return doc, nil
}

// parseJSON reads one JSON value the way the schema validator expects it
// (numbers as json.Number), then scans the bytes once more for nesting
// deeper than maxDepth and for keys repeated within one object. Like
// encoding/json, the last copy of a repeated key wins in the value.
func parseJSON(data []byte) (any, []Violation, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, nil, fmt.Errorf("not valid JSON: %v (at byte %d)", se, se.Offset)
		}
		if err == io.EOF {
			return nil, nil, errors.New("not valid JSON: the file is empty")
		}
		return nil, nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("not valid JSON: more data follows the first JSON value")
	}
	dups, err := scanKeys(data)
	if err != nil {
		return nil, nil, fmt.Errorf("not valid JSON: %w", err)
	}
	return v, dups, nil
}

// scanKeys walks well-formed JSON (parseJSON has checked it) without
// building values: it bounds the nesting and reports repeated keys.
func scanKeys(data []byte) ([]Violation, error) {
	type frame struct {
		object bool
		keys   map[string]bool
		key    string // objects: the key being read
		index  int    // arrays: the element being read
	}
	var (
		stack     []frame
		dups      []Violation
		expectKey bool
	)
	where := func() string { // the pointer of the innermost container
		toks := make([]string, 0, len(stack))
		for _, f := range stack[:len(stack)-1] {
			if f.object {
				toks = append(toks, f.key)
			} else {
				toks = append(toks, strconv.Itoa(f.index))
			}
		}
		return pointer(toks)
	}
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '{', '[':
			if len(stack) >= maxDepth {
				return nil, fmt.Errorf("nested more than %d levels deep", maxDepth)
			}
			stack = append(stack, frame{object: c == '{'})
			expectKey = c == '{'
		case '}', ']':
			stack = stack[:len(stack)-1]
			expectKey = false
		case ',':
			top := &stack[len(stack)-1]
			if top.object {
				expectKey = true
			} else {
				top.index++
			}
		case '"':
			start, escaped := i, false
			for i++; data[i] != '"'; i++ {
				if data[i] == '\\' {
					escaped = true
					i++
				}
			}
			if !expectKey {
				continue
			}
			expectKey = false
			raw := data[start : i+1]
			key := string(raw[1 : len(raw)-1])
			if escaped || !utf8.ValidString(key) {
				if err := json.Unmarshal(raw, &key); err != nil {
					return nil, err
				}
			}
			top := &stack[len(stack)-1]
			if top.keys == nil {
				top.keys = map[string]bool{}
			}
			if top.keys[key] {
				dups = append(dups, Violation{
					Pointer: where(),
					Message: fmt.Sprintf("field %q appears more than once", key),
				})
			}
			top.keys[key] = true
			top.key = key
		}
	}
	return dups, nil
}

// pointer renders path tokens as an RFC 6901 JSON pointer.
func pointer(path []string) string {
	var b strings.Builder
	for _, tok := range path {
		b.WriteByte('/')
		tok = strings.ReplaceAll(tok, "~", "~0")
		b.WriteString(strings.ReplaceAll(tok, "/", "~1"))
	}
	return b.String()
}

// flatten turns the validator's error tree into one violation per failed
// leaf check, worded for people rather than schema authors.
func flatten(e *jsonschema.ValidationError) []Violation {
	if len(e.Causes) > 0 {
		var out []Violation
		for _, c := range e.Causes {
			out = append(out, flatten(c)...)
		}
		return out
	}
	ptr := pointer(e.InstanceLocation)
	one := func(msg string) []Violation { return []Violation{{Pointer: ptr, Message: msg}} }
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		out := make([]Violation, 0, len(k.Missing))
		for _, m := range k.Missing {
			out = append(out, Violation{Pointer: ptr, Message: fmt.Sprintf("missing field %q", m)})
		}
		return out
	case *kind.AdditionalProperties:
		out := make([]Violation, 0, len(k.Properties))
		for _, p := range k.Properties {
			out = append(out, Violation{Pointer: ptr, Message: unknownFieldMessage(p)})
		}
		return out
	case *kind.Type:
		return one(fmt.Sprintf("is %s, should be %s", withArticle(k.Got), wantTypes(k.Want)))
	case *kind.Const:
		return one("should be " + display(k.Want))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = display(w)
		}
		return one("should be one of " + strings.Join(want, ", "))
	case *kind.Format:
		if k.Want == "date-time" {
			return one(fmt.Sprintf("%s is not an RFC 3339 date and time such as 2026-10-29T12:00:00Z", display(k.Got)))
		}
		return one(fmt.Sprintf("%s is not a valid %s", display(k.Got), k.Want))
	case *kind.Minimum:
		// The distribution's dependentSchemas are the only place where a
		// minimum ties two fields together; say which tail caused it.
		switch {
		case strings.Contains(e.SchemaURL, "/dependentSchemas/p95"):
			return one(fmt.Sprintf("p95 needs at least 20 samples, but n is %s; leave p95 out", k.Got.RatString()))
		case strings.Contains(e.SchemaURL, "/dependentSchemas/p99"):
			return one(fmt.Sprintf("p99 needs at least 100 samples, but n is %s; leave p99 out", k.Got.RatString()))
		}
		return one(fmt.Sprintf("is %s, should be at least %s", k.Got.RatString(), k.Want.RatString()))
	case *kind.MinLength:
		if k.Want == 1 {
			return one("should not be empty")
		}
		return one(fmt.Sprintf("should be at least %d characters long", k.Want))
	case *kind.FalseSchema:
		return one("is not allowed here")
	}
	return one(e.ErrorKind.LocalizedString(englishPrinter))
}

func unknownFieldMessage(key string) string {
	return fmt.Sprintf("unknown field %q", key)
}

func withArticle(t string) string {
	switch t {
	case "null":
		return "null"
	case "integer", "object", "array":
		return "an " + t
	}
	return "a " + t
}

func wantTypes(want []string) string {
	parts := make([]string, 0, len(want))
	null := false
	for _, w := range want {
		if w == "null" {
			null = true
			continue
		}
		parts = append(parts, withArticle(w))
	}
	if null {
		parts = append(parts, "null") // "an object or null" reads better
	}
	return strings.Join(parts, " or ")
}

func display(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const limit = 80
	if s := string(b); len(s) > limit {
		return s[:limit] + "…"
	}
	return string(b)
}

// sortViolations orders violations by where they are in the file (array
// indexes compared as numbers) and drops exact repeats.
func sortViolations(vs []Violation) []Violation {
	sort.SliceStable(vs, func(i, j int) bool {
		if c := comparePointers(vs[i].Pointer, vs[j].Pointer); c != 0 {
			return c < 0
		}
		return vs[i].Message < vs[j].Message
	})
	out := vs[:0]
	for i, v := range vs {
		if i > 0 && v == vs[i-1] {
			continue
		}
		out = append(out, v)
	}
	return out
}

func comparePointers(a, b string) int {
	at, bt := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(at) && i < len(bt); i++ {
		if at[i] == bt[i] {
			continue
		}
		an, aerr := strconv.Atoi(at[i])
		bn, berr := strconv.Atoi(bt[i])
		if aerr == nil && berr == nil {
			if an < bn {
				return -1
			}
			return 1
		}
		return strings.Compare(at[i], bt[i])
	}
	return len(at) - len(bt)
}
