package storage

// The manifest checker: it walks the YAML tree, knows every key and its
// type, and collects every problem with its line number (docs/manifest.md).

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kovara/desktop/engine/setup"
)

// Known keys, in the order the docs list them.
var (
	topKeys         = []string{"name", "revision", "model", "engine", "hardware", "precision", "parallelism", "profiles", "serve"}
	modelKeys       = []string{"id", "revision"}
	engineKeys      = []string{"name", "version", "image"}
	hardwareKeys    = []string{"accelerator", "gpu_count"}
	parallelismKeys = []string{"tensor", "pipeline"}
	profileKeys     = []string{"input_tokens", "output_tokens", "concurrency", "requests", "warmup"}
)

// keyHomes says where a key that is known somewhere else belongs, for the
// "it belongs under ..." hint.
var keyHomes = map[string]string{
	"id":            "model:",
	"version":       "engine:",
	"image":         "engine:",
	"accelerator":   "hardware:",
	"gpu_count":     "hardware:",
	"tensor":        "parallelism:",
	"pipeline":      "parallelism:",
	"input_tokens":  "a profile under profiles:",
	"output_tokens": "a profile under profiles:",
	"concurrency":   "a profile under profiles:",
	"requests":      "a profile under profiles:",
	"warmup":        "a profile under profiles:",
}

// keySynonyms are names people reach for from other tools.
var keySynonyms = map[string]string{
	"gpus":                   "gpu_count",
	"num_gpus":               "gpu_count",
	"gpu":                    "accelerator",
	"tp":                     "tensor",
	"tensor_parallel":        "tensor",
	"tensor_parallel_size":   "tensor",
	"pp":                     "pipeline",
	"pipeline_parallel":      "pipeline",
	"pipeline_parallel_size": "pipeline",
	"dtype":                  "precision",
	"quantization":           "precision",
	"levels":                 "concurrency",
	"max_tokens":             "output_tokens",
	"prompt_tokens":          "input_tokens",
	"num_requests":           "requests",
	"warmup_requests":        "warmup",
	"command":                "serve",
	"profile":                "profiles",
	"model_id":               "id",
}

var (
	profileNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	revisionRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)
	decimalRE     = regexp.MustCompile(`^[-+]?[0-9]+$`)
	// derivedRevisionRE is the shape of a hash-derived revision. A file
	// cannot declare its own (the hash covers the revision: line), so a
	// declared one of this shape could only be mistaken for another file's.
	derivedRevisionRE = regexp.MustCompile(`^r[0-9a-f]{12}$`)
)

// A file with thousands of mistakes is the wrong file: the error lists the
// first maxProblemsShown (by line) and counts the rest.
const (
	maxProblemsShown = 100
	maxProblemsKept  = 1000 // beyond this, problems are only counted
)

type manifestParser struct {
	problems []Problem
	dropped  int
}

func (p *manifestParser) add(line int, key, format string, args ...any) {
	if len(p.problems) >= maxProblemsKept {
		p.dropped++
		return
	}
	p.problems = append(p.problems, Problem{Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (p *manifestParser) err(path string) error {
	sort.SliceStable(p.problems, func(i, j int) bool { return p.problems[i].Line < p.problems[j].Line })
	if extra := len(p.problems) - maxProblemsShown + p.dropped; extra > 0 {
		p.problems = append(p.problems[:maxProblemsShown:maxProblemsShown], Problem{
			Msg: fmt.Sprintf("%d more problems not shown; is this a kovara.yaml manifest?", extra),
		})
	}
	return &ManifestError{Path: path, Problems: p.problems}
}

// checkText refuses what is not plain UTF-8 text before YAML sees it, so
// the line is exact (the YAML reader names no line for these).
func (p *manifestParser) checkText(text []byte) bool {
	if len(text) >= 2 && ((text[0] == 0xFF && text[1] == 0xFE) || (text[0] == 0xFE && text[1] == 0xFF)) {
		p.add(1, "", "the file is UTF-16 text; save it as UTF-8")
		return false
	}
	line := 1
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRune(text[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			p.add(line, "", "the file is not valid UTF-8 text (byte 0x%02X); save it as UTF-8", text[i])
			return false
		case r == '\n':
			line++
		case r == '\t':
		case r < 0x20 || (r >= 0x7F && r <= 0x9F):
			p.add(line, "", "the file contains a control character (U+%04X); a manifest is plain text", r)
			return false
		case r == 0x2028 || r == 0x2029:
			p.add(line, "", "the file contains a Unicode line or paragraph separator (U+%04X); use ordinary line breaks", r)
			return false
		}
		i += size
	}
	return true
}

// pairs walks a mapping's key/value pairs, reporting keys that are not
// plain names, merge keys, duplicates and unknown keys (with a
// suggestion), and calls visit for each known key once.
func (p *manifestParser) pairs(n *yamlNode, path string, known []string, visit func(key string, k, v *yamlNode)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.content); i += 2 {
		k, v := n.content[i], n.content[i+1]
		name, ok := p.keyName(k, path)
		if !ok {
			continue
		}
		full := joinKey(path, name)
		if first, dup := seen[name]; dup {
			p.add(k.line, full, "duplicate key (first set on line %d)", first)
			continue
		}
		seen[name] = k.line
		if known != nil && !slices.Contains(known, name) {
			p.add(k.line, full, "unknown key%s", suggestKey(name, known))
			continue
		}
		visit(name, k, v)
	}
}

// keyName returns a mapping key's text, refusing keys that are not plain
// scalars.
func (p *manifestParser) keyName(k *yamlNode, path string) (string, bool) {
	switch {
	case k.kind == yamlAlias:
		p.add(k.line, path, "an alias (*%s) cannot be a key; write the key out", k.value)
		return "", false
	case k.kind != yamlScalar:
		p.add(k.line, path, "a key must be a plain name, not %s", describeNode(k))
		return "", false
	case k.tag == "!!merge":
		p.add(k.line, joinKey(path, k.value), "merge keys (<<) are not supported; write each key out")
		return "", false
	}
	return k.value, true
}

func joinKey(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// suggestKey builds the " (did you mean ...?)" tail for an unknown key, or
// "" when nothing is close.
func suggestKey(name string, known []string) string {
	lower := strings.ToLower(name)
	if s, ok := keySynonyms[lower]; ok && slices.Contains(known, s) {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	if best := closest(lower, known); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	if home, ok := keyHomes[lower]; ok {
		return fmt.Sprintf(" (%s belongs under %s)", lower, home)
	}
	if s, ok := keySynonyms[lower]; ok {
		if home, ok := keyHomes[s]; ok {
			return fmt.Sprintf(" (did you mean %q? it belongs under %s)", s, home)
		}
	}
	return fmt.Sprintf(" (known keys here: %s)", strings.Join(known, ", "))
}

// closest returns the known name within a small edit distance of name, or "".
func closest(name string, known []string) string {
	best, bestD := "", 0
	for _, k := range known {
		d := editDistance(name, k)
		limit := 2
		if len(k) <= 4 {
			limit = 1
		}
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = k, d
		}
	}
	return best
}

// closestName is closest for profile names, which keep their case: it
// compares lower-cased and returns the name as the manifest spells it.
func closestName(name string, names []string) string {
	lower := make([]string, len(names))
	for i, n := range names {
		lower[i] = strings.ToLower(n)
	}
	if best := closest(strings.ToLower(name), lower); best != "" {
		return names[slices.Index(lower, best)]
	}
	return ""
}

// editDistance counts the single-character insertions, deletions,
// substitutions and swaps of neighbours that turn a into b (optimal string
// alignment), in runes. Inputs longer than 64 runes are simply far from
// every key.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 1 << 30
	}
	// d[i][j] is the distance between ra[:i] and rb[:j].
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// describeNode names what a node is, for "expected X, got Y" messages.
func describeNode(n *yamlNode) string {
	switch n.kind {
	case yamlMapping:
		return "a mapping"
	case yamlSequence:
		return "a list"
	case yamlAlias:
		return "an alias (*" + n.value + ")"
	}
	switch n.tag {
	case "!!null":
		return "an empty value"
	case "!!bool":
		return "the boolean " + n.value
	case "!!int", "!!float":
		return "the number " + n.value
	case "!!str":
		return strconv.Quote(n.value)
	}
	return fmt.Sprintf("a %s value", n.tag)
}

// mappingOf checks that v is a mapping, reporting what it is otherwise.
func (p *manifestParser) mappingOf(v *yamlNode, key, what string) bool {
	if v.kind == yamlMapping {
		return true
	}
	p.add(v.line, key, "expected %s, got %s", what, describeNode(v))
	return false
}

// text reads a string value. Numbers and dates written without quotes are
// taken exactly as written (version: 0.10 stays "0.10"). Empty values,
// booleans, lists and mappings are refused. Only multiline values may hold
// line breaks.
func (p *manifestParser) text(v *yamlNode, key string, multiline bool) (string, bool) {
	if v.kind != yamlScalar {
		p.add(v.line, key, "expected text, got %s", describeNode(v))
		return "", false
	}
	switch v.tag {
	case "!!str", "!!int", "!!float", "!!timestamp":
	case "!!null":
		p.add(v.line, key, "has no value; write one or remove the key")
		return "", false
	case "!!bool":
		p.add(v.line, key, "expected text, got the boolean %s; put it in quotes if you mean the word", v.value)
		return "", false
	default:
		p.add(v.line, key, "the tag %s is not supported here; write plain text", v.tag)
		return "", false
	}
	s := v.value
	switch {
	case strings.TrimSpace(s) == "":
		p.add(v.line, key, "is empty; write a value or remove the key")
		return "", false
	case !multiline && strings.ContainsAny(s, "\n\r"):
		p.add(v.line, key, "must be on one line")
		return "", false
	case !multiline && strings.TrimSpace(s) != s:
		p.add(v.line, key, "has spaces at its start or end; remove them")
		return "", false
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			p.add(v.line, key, "contains a control character (U+%04X)", r)
			return "", false
		}
	}
	return s, true
}

// whole reads a whole number of at least lowest. Only plain decimal is
// accepted: 010, 0x10 and 1_000 mean different things to different YAML
// readers, so they are refused rather than guessed.
func (p *manifestParser) whole(v *yamlNode, key string, lowest int, unit string) (int, bool) {
	if v.kind != yamlScalar {
		p.add(v.line, key, "expected a whole number, got %s", describeNode(v))
		return 0, false
	}
	switch v.tag {
	case "!!int":
	case "!!null":
		p.add(v.line, key, "has no value; write a whole number or remove the key")
		return 0, false
	case "!!str":
		if decimalRE.MatchString(strings.TrimSpace(v.value)) {
			p.add(v.line, key, "expected a whole number, got the text %q; remove the quotes", v.value)
		} else {
			p.add(v.line, key, "expected a whole number, got %q", v.value)
		}
		return 0, false
	default:
		p.add(v.line, key, "expected a whole number, got %s", describeNode(v))
		return 0, false
	}
	digits := strings.TrimPrefix(strings.TrimPrefix(v.value, "+"), "-")
	if !decimalRE.MatchString(v.value) || (len(digits) > 1 && digits[0] == '0') {
		p.add(v.line, key, "write %s in plain decimal digits (no leading zeros, 0x, 0o or _)", v.value)
		return 0, false
	}
	n, err := strconv.ParseInt(v.value, 10, 64)
	if err != nil || n > maxManifestInt {
		p.add(v.line, key, "%s is too large (the most allowed is %d)", v.value, maxManifestInt)
		return 0, false
	}
	if n < int64(lowest) {
		if lowest == 0 {
			p.add(v.line, key, "cannot be negative (got %d)", n)
		} else {
			p.add(v.line, key, "must be at least %d%s (got %d)", lowest, unit, n)
		}
		return 0, false
	}
	return int(n), true
}

func intPtr(n int) *int { return &n }

// noAlias refuses alias values: every value is written where it is used,
// so what a reader sees is exactly what the hash covers.
func (p *manifestParser) noAlias(v *yamlNode, key string) bool {
	if v.kind == yamlAlias {
		p.add(v.line, key, "aliases (*%s) are not supported in a manifest; write the value out", v.value)
		return false
	}
	return true
}

func (p *manifestParser) top(root *yamlNode, m *Manifest) {
	hasModel := false // model: given, even if wrong: then its own error says so
	var parallelismLine int
	p.pairs(root, "", topKeys, func(name string, k, v *yamlNode) {
		if !p.noAlias(v, name) {
			hasModel = hasModel || name == "model"
			return
		}
		switch name {
		case "name":
			m.Name, _ = p.text(v, name, false)
		case "revision":
			if s, ok := p.text(v, name, false); ok {
				switch {
				case !revisionRE.MatchString(s):
					p.add(v.line, name, "%q is not a usable revision: use 1 to 64 letters, digits, '.', '_', '+' or '-', starting with a letter or digit", s)
				case derivedRevisionRE.MatchString(s):
					p.add(v.line, name, "%q has the form of a revision derived from a content hash (r and 12 hex digits), which is kept for manifests without revision:; choose another form or remove the key", s)
				default:
					m.Revision, m.RevisionDeclared = s, true
				}
			}
		case "model":
			hasModel = true
			p.model(k, v, m)
		case "engine":
			if p.mappingOf(v, name, "a mapping with name:, version: and image:") {
				p.pairs(v, name, engineKeys, func(f string, _, fv *yamlNode) {
					key := joinKey(name, f)
					if !p.noAlias(fv, key) {
						return
					}
					s, _ := p.text(fv, key, false)
					switch f {
					case "name":
						m.Engine.Name = s
					case "version":
						m.Engine.Version = s
					case "image":
						m.Engine.Image = s
					}
				})
			}
		case "hardware":
			if p.mappingOf(v, name, "a mapping with accelerator: and gpu_count:") {
				p.pairs(v, name, hardwareKeys, func(f string, _, fv *yamlNode) {
					key := joinKey(name, f)
					if !p.noAlias(fv, key) {
						return
					}
					switch f {
					case "accelerator":
						m.Hardware.Accelerator, _ = p.text(fv, key, false)
					case "gpu_count":
						if n, ok := p.whole(fv, key, 1, " GPU"); ok {
							m.Hardware.GPUCount = intPtr(n)
						}
					}
				})
			}
		case "precision":
			m.Precision, _ = p.text(v, name, false)
		case "parallelism":
			parallelismLine = k.line
			if p.mappingOf(v, name, "a mapping with tensor: and pipeline:") {
				p.pairs(v, name, parallelismKeys, func(f string, _, fv *yamlNode) {
					key := joinKey(name, f)
					if !p.noAlias(fv, key) {
						return
					}
					n, ok := p.whole(fv, key, 1, "")
					if !ok {
						return
					}
					if f == "tensor" {
						m.Parallelism.Tensor = intPtr(n)
					} else {
						m.Parallelism.Pipeline = intPtr(n)
					}
				})
			}
		case "profiles":
			p.profiles(v, m)
		case "serve":
			m.Serve, _ = p.text(v, name, true)
		}
	})

	if !hasModel {
		p.add(1, "model.id", "missing; a manifest must name the model the endpoint serves (model: {id: ...})")
	}
	if g := m.Hardware.GPUCount; g != nil && (m.Parallelism.Tensor != nil || m.Parallelism.Pipeline != nil) {
		t, pp := 1, 1
		if m.Parallelism.Tensor != nil {
			t = *m.Parallelism.Tensor
		}
		if m.Parallelism.Pipeline != nil {
			pp = *m.Parallelism.Pipeline
		}
		if int64(t)*int64(pp) > int64(*g) {
			p.add(parallelismLine, "parallelism", "tensor %d × pipeline %d needs %d GPUs, but hardware.gpu_count is %d", t, pp, int64(t)*int64(pp), *g)
		}
	}
}

func (p *manifestParser) model(k, v *yamlNode, m *Manifest) {
	if v.kind == yamlScalar && (v.tag == "!!str" || v.tag == "!!int" || v.tag == "!!float") {
		p.add(v.line, "model", "expected a mapping with id: (and revision:), got %s; write model: {id: %s}", describeNode(v), v.value)
		return
	}
	if !p.mappingOf(v, "model", "a mapping with id: and revision:") {
		return
	}
	hasID := false
	p.pairs(v, "model", modelKeys, func(f string, _, fv *yamlNode) {
		key := joinKey("model", f)
		if f == "id" {
			hasID = true
		}
		if !p.noAlias(fv, key) {
			return
		}
		s, _ := p.text(fv, key, false)
		if f == "id" {
			m.Model.ID = s
		} else {
			m.Model.Revision = s
		}
	})
	if !hasID {
		p.add(k.line, "model.id", "missing; a manifest must name the model the endpoint serves")
	}
}

func (p *manifestParser) profiles(v *yamlNode, m *Manifest) {
	if !p.mappingOf(v, "profiles", "a mapping of named profiles, e.g. profiles: {default: {input_tokens: 1024}}") {
		return
	}
	if len(v.content) == 0 {
		p.add(v.line, "profiles", "has no profiles; define at least one or remove the key")
		return
	}
	m.Profiles = map[string]ManifestProfile{}
	p.pairs(v, "profiles", nil, func(name string, k, pv *yamlNode) {
		key := joinKey("profiles", name)
		if !profileNameRE.MatchString(name) {
			p.add(k.line, key, "%q is not a usable profile name: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
			return
		}
		if !p.noAlias(pv, key) {
			return
		}
		if slices.Contains(profileKeys, name) && pv.kind != yamlMapping {
			p.add(k.line, key, "%s belongs inside a named profile: profiles: {default: {%s: ...}}", name, name)
			return
		}
		if pv.kind == yamlScalar && pv.tag == "!!null" || pv.kind == yamlMapping && len(pv.content) == 0 {
			p.add(pv.line, key, "the profile sets nothing; give at least one of %s", strings.Join(profileKeys, ", "))
			return
		}
		if !p.mappingOf(pv, key, "a mapping of profile settings ("+strings.Join(profileKeys, ", ")+")") {
			return
		}
		prof, ok := p.profile(pv, key)
		if ok {
			m.Profiles[name] = prof
		}
	})
}

func (p *manifestParser) profile(v *yamlNode, path string) (ManifestProfile, bool) {
	var prof ManifestProfile
	before := len(p.problems)
	var concLine, reqLine int
	p.pairs(v, path, profileKeys, func(f string, k, fv *yamlNode) {
		key := joinKey(path, f)
		if !p.noAlias(fv, key) {
			return
		}
		switch f {
		case "input_tokens":
			if n, ok := p.whole(fv, key, 1, " token"); ok {
				prof.InputTokens = intPtr(n)
			}
		case "output_tokens":
			if n, ok := p.whole(fv, key, 1, " token"); ok {
				prof.OutputTokens = intPtr(n)
			}
		case "requests":
			reqLine = k.line
			if n, ok := p.whole(fv, key, 1, " request per level"); ok {
				prof.Requests = intPtr(n)
			}
		case "warmup":
			if n, ok := p.whole(fv, key, 0, ""); ok {
				prof.Warmup = intPtr(n)
			}
		case "concurrency":
			concLine = k.line
			prof.Concurrency = p.levels(fv, key)
		}
	})
	if len(p.problems) > before {
		return prof, false
	}
	// Applied to the method defaults, the profile must give a plan that
	// can run: every in-flight slot needs at least one request per level.
	levels := prof.Concurrency
	if levels == nil {
		levels = setup.DefaultConcurrency()
	}
	highest := setup.MinRequests(levels)
	switch {
	case prof.Requests != nil && *prof.Requests < highest && prof.Concurrency != nil:
		p.add(reqLine, joinKey(path, "requests"), "%d requests per level is fewer than the highest concurrency level %d; every in-flight slot needs at least one request, so use %d or more", *prof.Requests, highest, highest)
	case prof.Requests != nil && *prof.Requests < highest:
		p.add(reqLine, joinKey(path, "requests"), "%d requests per level is fewer than the default highest concurrency level %d; use %d or more, or set concurrency: in the profile", *prof.Requests, highest, highest)
	case prof.Requests == nil && highest > setup.DefaultRequests:
		p.add(concLine, joinKey(path, "concurrency"), "level %d needs at least %d requests per level, but the profile does not set requests and the method default is %d; add requests: %d or more", highest, highest, setup.DefaultRequests, highest)
	}
	return prof, len(p.problems) == before
}

// levels reads a concurrency list: one or more distinct whole numbers of
// at least 1.
func (p *manifestParser) levels(v *yamlNode, key string) []int {
	if v.kind != yamlSequence {
		if v.kind == yamlScalar && v.tag == "!!int" {
			p.add(v.line, key, "expected a list of levels, got the number %s; write [%s]", v.value, v.value)
		} else {
			p.add(v.line, key, "expected a list of levels such as [1, 8, 32], got %s", describeNode(v))
		}
		return nil
	}
	if len(v.content) == 0 {
		p.add(v.line, key, "the list is empty; give at least one level, such as [1, 8, 32]")
		return nil
	}
	out := make([]int, 0, len(v.content))
	firstAt := map[int]int{}
	ok := true
	for i, item := range v.content {
		ikey := fmt.Sprintf("%s[%d]", key, i)
		if !p.noAlias(item, ikey) {
			ok = false
			continue
		}
		n, good := p.whole(item, ikey, 1, " request in flight")
		if !good {
			ok = false
			continue
		}
		if j, dup := firstAt[n]; dup {
			p.add(item.line, ikey, "level %d is already listed (%s[%d])", n, key, j)
			ok = false
			continue
		}
		firstAt[n] = i
		out = append(out, n)
	}
	if !ok {
		return nil
	}
	return out
}
