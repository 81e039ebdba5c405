package planstest

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// What the privacy tests of every output share (report, the CLI, the
// app): the texts a document's local section can hold, found from its Go
// type, the few of them allowed out, and the document with a distinct
// value planted in every other — in every key results.PrivateKeys marks
// private, and in any text of local it forgot. The lists of texts are
// derived, never written here: a new text added to local, or a new
// plan, is planted the moment it exists.

// SharedLocal are the texts of local allowed out of this machine (into a
// report; Export writes no local at all), each a path as LocalTexts
// writes it, covering every text beneath it. Every other text of local
// is private: it is planted, and a report's privacy test
// (TestEveryLocalTextIsDecided) wants it under a key of
// results.PrivateKeys.
var SharedLocal = map[string]string{
	"local.plan":          "the plan's id, which the report's title names",
	"local.receive_clock": "one of this app's two words for what stamped the chunks",
	"local.requested_model": "the model asked for: the model measured, which every report names " +
		"(its folder kept out, results.ModelFolder)",
	"local.started_at":          "a time, as created_at outside local",
	"local.finished_at":         "a time, as created_at outside local",
	"local.levels[].started_at": "a time, as created_at outside local",
	"local.engine_detection":    "the engine's family and version and how they were read, which the conditions name",
	"local.partial_run":         "a run record, of the published runs' shape (the publish check's)",
	// Map keys: a report blanks the values under a private key and keeps
	// its maps' keys.
	"local.levels[].errors{key}":   "an error class (http_500, timeout), which the table counts",
	"local.levels[].messages{key}": "an error class; the messages under it are private",
	"local.logs{key}":              "a setting's name, which the table says; its log lines are private",
	"local.levels[].samples":       "each request's error class and gaps, as numbers",
	// Where a figure came from: the server's metric names, this app's
	// stage names.
	"local.levels[].prompt_cache":    "the name of the server's metric a cache count came from",
	"local.levels[].by_turn[].cache": "the name of the server's metric a cache count came from",
	"local.prefix_check":             "the name of the server's metric a cache count came from",
	"local.server_metrics":           "the server's family, its metrics' names and this app's stage names",
	// Ids this app drew, a setting's name, a reproduced run's time.
	"local.group.id":  "an id this app drew",
	"local.tune":      "an id this app drew and the setting's name, which the table says",
	"local.like":      "an id this app drew and a run's created_at",
	"local.positions": "the answers set's prompt kinds (code, json), this app's words",
	"local.workload":  "the prompts' hash and shape, never a path or a word of them",
	// Which tools read the power, the cards, their clocks' reasons: what
	// the hardware table shows.
	"local.wall.family":         "the plug's family, one of this app's words",
	"local.telemetry.source":    "the kind of GPU source, one of this app's words",
	"local.telemetry.tool":      "the GPU tool's name",
	"local.telemetry.inventory": "the cards' make, driver and bus, which the hardware table shows",
	"local.telemetry.levels":    "the clock event reasons' names, which the hardware table shows",
}

// PrivateNumbers are the keys of local that hold no text and are private
// all the same, by what the numbers are. No type says so, so they are
// said here; each is planted with numbers.
var PrivateNumbers = map[string]string{
	"local.reference": "token ids, which the model's tokenizer turns back into the answers' words",
}

// DocType is the Go type of d's document (results.File,
// results.TuneResult, …): the struct d holds a pointer to whose "local"
// key is its local section.
func DocType(d plans.Doc) reflect.Type {
	t, ok := docType(reflect.TypeOf(d))
	if !ok {
		panic(fmt.Sprintf("planstest: %T holds no document with a local section", d))
	}
	return t
}

func docType(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			if _, ok := fieldByKey(f.Type.Elem(), "local"); ok {
				return f.Type.Elem(), true
			}
		}
		if f.Anonymous {
			if dt, ok := docType(f.Type); ok {
				return dt, true
			}
		}
	}
	return nil, false
}

// localType is the type of d's local section.
func localType(d plans.Doc) reflect.Type {
	f, _ := fieldByKey(DocType(d), "local")
	return f.Type
}

// LocalTexts are the paths of every text a document of d's kind can hold
// in its local section: JSON keys joined by ".", "[]" for each element
// of a list, "{}" for each value of a map and "{key}" for a map's keys
// when they are texts. A text is a string, a list or map of them, bytes
// or raw JSON, or an interface (anything).
func LocalTexts(d plans.Doc) []string {
	var out []string
	texts(localType(d), "local", map[reflect.Type]bool{}, &out)
	slices.Sort(out)
	return slices.Compact(out)
}

func texts(t reflect.Type, path string, seen map[reflect.Type]bool, out *[]string) {
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		*out = append(*out, path)
	case reflect.Pointer:
		texts(t.Elem(), path, seen, out)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			*out = append(*out, path) // bytes, raw JSON: whatever they say
			return
		}
		texts(t.Elem(), path+"[]", seen, out)
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			*out = append(*out, path+"{key}")
		}
		texts(t.Elem(), path+"{}", seen, out)
	case reflect.Struct:
		if seen[t] {
			return // a type within itself: its texts are listed once
		}
		seen[t] = true
		defer delete(seen, t)
		for _, f := range jsonFields(t) {
			texts(f.Type, join(path, f.key), seen, out)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonField is a struct field under the key encoding/json writes it by.
type jsonField struct {
	reflect.StructField
	key string
}

// jsonFields are t's fields as encoding/json writes them: by their key,
// an untagged embedded struct's fields in its place, "-" left out.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for _, ef := range jsonFields(et) {
					ef.Index = append([]int{f.Index[0]}, ef.Index...)
					out = append(out, ef)
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{f, name})
	}
	return out
}

// fieldByKey is t's field written under key.
func fieldByKey(t reflect.Type, key string) (jsonField, bool) {
	for _, f := range jsonFields(t) {
		if f.key == key {
			return f, true
		}
	}
	return jsonField{}, false
}

// Covers says the path covers the text at text: it is the text itself
// or the text is beneath it.
func Covers(path, text string) bool {
	rest, ok := strings.CutPrefix(text, path)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[' || rest[0] == '{')
}

// Blanks says the private key path blanks the text at text: covers it,
// and it is not a map's key — a report blanks the values under a private
// key and keeps its maps' keys (the error classes of
// local.levels[].messages), so those are decided apart.
func Blanks(path, text string) bool {
	return Covers(path, text) && !strings.Contains(text[len(path):], "{key}")
}

// KeysOf are the private keys (results.PrivateKeys) a document of d's
// kind has: those its type can hold.
func KeysOf(d plans.Doc) []results.PrivateKey {
	var out []results.PrivateKey
	for _, k := range results.PrivateKeys() {
		if has(localType(d), k.Path) {
			out = append(out, k)
		}
	}
	return out
}

// has says a local section of type local can hold path.
func has(local reflect.Type, path string) bool {
	v := reflect.New(local).Elem()
	return walk(v, tokens(path), func(reflect.Value) {}) == nil
}

// PrivateOf are the paths planted in a document of d's kind: its private
// keys (KeysOf), its keys of PrivateNumbers, and every text of its local
// section that is neither beneath one of those nor allowed out
// (SharedLocal) — a text results.PrivateKeys forgot is planted all the
// same, and found wherever it leaks. A map's keys are never planted (a
// report keeps them: TestEveryLocalTextIsDecided decides them).
func PrivateOf(d plans.Doc) []string {
	var out []string
	for _, k := range KeysOf(d) {
		out = append(out, k.Path)
	}
	for _, p := range slices.Sorted(maps.Keys(PrivateNumbers)) {
		if has(localType(d), p) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, text := range LocalTexts(d) {
		covered := func(p string) bool { return Covers(p, text) }
		if strings.Contains(text, "{key}") || slices.ContainsFunc(out, covered) || slices.ContainsFunc(slices.Collect(maps.Keys(SharedLocal)), covered) {
			continue
		}
		out = append(out, text)
	}
	return out
}

// A Plant is one value planted: the private key (or the private text
// no key covers) it was planted in, the text's path and the value,
// distinct from every other plant.
type Plant struct {
	Key   string // "local.commands"
	Path  string // "local.commands[].env[]"
	Value string // "planted-tune-005-local-commands-env"
}

// Planted is d with a distinct value planted in every private text of
// its local section (PrivateOf): the document as a careless or hostile
// writer could leave it. A key that holds no text (PrivateNumbers) gets
// distinct numbers. Lists and maps that were empty get one element; the
// rest of the document stays as it was. It is written and read back by
// plans.Decode, as any output reads a saved document.
func Planted(t testing.TB, d plans.Doc) (plans.Doc, []Plant) {
	t.Helper()
	return PlantedIn(t, d, PrivateOf(d))
}

// PlantedIn is Planted in the paths given only (keys of
// results.PrivateKeys, or texts as LocalTexts writes them).
func PlantedIn(t testing.TB, d plans.Doc, paths []string) (plans.Doc, []Plant) {
	t.Helper()
	data, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	doc := reflect.New(DocType(d))
	if err := json.Unmarshal(data, doc.Interface()); err != nil {
		t.Fatal(err)
	}
	f, _ := fieldByKey(DocType(d), "local")
	local := doc.Elem().FieldByIndex(f.Index)
	p := planter{kind: d.Kind().ID, number: 918_273_600}
	for _, path := range paths {
		p.key = path
		err := walk(local, tokens(path), func(v reflect.Value) { p.fill(v, path, hasText(v.Type())) })
		if err != nil {
			t.Fatalf("%s: %s: %v", d.Kind().ID, path, err)
		}
	}
	out, err := json.Marshal(doc.Interface())
	if err != nil {
		t.Fatal(err)
	}
	pd, err := plans.Decode(out)
	if err != nil {
		t.Fatalf("%s: the planted document does not read back: %v", d.Kind().ID, err)
	}
	return pd, p.plants
}

// tokens are path's steps beneath local: keys, "[]" and "{}".
func tokens(path string) []string {
	var out []string
	for _, seg := range strings.Split(strings.TrimPrefix(path, "local."), ".") {
		key := strings.TrimRight(seg, "[]{}")
		out = append(out, key)
		for rest := seg[len(key):]; rest != ""; rest = rest[2:] {
			out = append(out, rest[:2])
		}
	}
	return out
}

// walk goes from v down toks — allocating nil pointers, giving an empty
// list or map one element — and calls at on each value it reaches.
func walk(v reflect.Value, toks []string, at func(reflect.Value)) error {
	v = alloc(v)
	if len(toks) == 0 {
		at(v)
		return nil
	}
	switch tok := toks[0]; tok {
	case "[]":
		if v.Kind() != reflect.Slice {
			return fmt.Errorf("a %s is not a list", v.Type())
		}
		if v.Len() == 0 {
			v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
		}
		for i := range v.Len() {
			if err := walk(v.Index(i), toks[1:], at); err != nil {
				return err
			}
		}
	case "{}":
		if v.Kind() != reflect.Map {
			return fmt.Errorf("a %s is not a map", v.Type())
		}
		oneEntry(v)
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			if err := walk(e, toks[1:], at); err != nil {
				return err
			}
			v.SetMapIndex(k, e)
		}
	default:
		if v.Kind() != reflect.Struct {
			return fmt.Errorf("a %s has no key %q", v.Type(), tok)
		}
		f, ok := fieldByKey(v.Type(), tok)
		if !ok {
			return fmt.Errorf("a %s has no key %q", v.Type(), tok)
		}
		return walk(v.FieldByIndex(f.Index), toks[1:], at)
	}
	return nil
}

// oneEntry gives an empty map m one entry, under the zero key: its key
// says nothing, and keys stay as they are.
func oneEntry(m reflect.Value) {
	if m.IsNil() {
		m.Set(reflect.MakeMap(m.Type()))
	}
	if m.Len() == 0 {
		m.SetMapIndex(reflect.Zero(m.Type().Key()), reflect.Zero(m.Type().Elem()))
	}
}

// alloc is v's value, a nil pointer first given one.
func alloc(v reflect.Value) reflect.Value {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	return v
}

type planter struct {
	kind   string
	key    string
	number int
	plants []Plant
}

// fill plants a value in every text beneath v (or, where the key holds
// no text, in every whole number).
func (p *planter) fill(v reflect.Value, path string, text bool) {
	v = alloc(v)
	switch v.Kind() {
	case reflect.String:
		// Letters, digits and dashes only: no format escapes it, no
		// address check takes it for a host, and the number, fixed in
		// width, keeps any plant from being a part of another.
		val := fmt.Sprintf("planted-%s-%03d-%s", p.kind, len(p.plants), words(path))
		v.SetString(val)
		p.plants = append(p.plants, Plant{Key: p.key, Path: path, Value: val})
	case reflect.Int, reflect.Int64, reflect.Int32:
		if !text {
			p.number++
			v.SetInt(int64(p.number))
			p.plants = append(p.plants, Plant{Key: p.key, Path: path, Value: fmt.Sprint(p.number)})
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			val := fmt.Sprintf(`"planted-%s-%03d-%s"`, p.kind, len(p.plants), words(path)) // raw JSON, bytes
			v.SetBytes([]byte(val))
			p.plants = append(p.plants, Plant{Key: p.key, Path: path, Value: strings.Trim(val, `"`)})
			return
		}
		if v.Len() == 0 {
			v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
		}
		for i := range v.Len() {
			p.fill(v.Index(i), path+"[]", text)
		}
	case reflect.Map:
		oneEntry(v)
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			p.fill(e, path+"{}", text)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		for _, f := range jsonFields(v.Type()) {
			p.fill(v.FieldByIndex(f.Index), join(path, f.key), text)
		}
	case reflect.Interface:
		val := fmt.Sprintf("planted-%s-%03d-%s", p.kind, len(p.plants), words(path))
		v.Set(reflect.ValueOf(val))
		p.plants = append(p.plants, Plant{Key: p.key, Path: path, Value: val})
	}
}

// words is path in letters, digits and dashes.
func words(path string) string {
	f := strings.FieldsFunc(path, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	})
	return strings.Join(f, "-")
}

// hasText says t holds a text somewhere.
func hasText(t reflect.Type) bool {
	var out []string
	texts(t, "", map[reflect.Type]bool{}, &out)
	return len(out) > 0
}
