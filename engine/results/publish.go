package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Published is exactly what publishing sends and what Export saves: the
// results file without its local section. The run records are kept as
// they are written in the file; nothing of local (the endpoint's address,
// host and name, the served models, the server's error messages) is in it.
// It is itself a valid results file, so it can be validated and imported
// (docs/results-format.md, "Publishing").
type Published struct {
	Format        string            `json:"format"`
	FormatVersion int               `json:"format_version"`
	Complete      bool              `json:"complete"`
	CreatedAt     string            `json:"created_at"`
	Manifest      *ManifestRef      `json:"manifest"`
	Runs          []json.RawMessage `json:"runs"`
}

// manifestConditions are the run fields a manifest supplies; a protocol
// test has no manifest, so they must be null there.
var manifestConditions = []string{"model_revision", "engine", "engine_version", "accelerator", "gpu_count", "precision", "profile"}

// PublishCheck decides whether a results file may be published. It returns
// the pretty-printed published document (Published: the file without
// local) when it may, or every reason it may not, each a short sentence;
// never both. Export, `kovara-bench export` and `kovara-bench validate`
// all write or print exactly these bytes.
//
// endpointHosts are host names (or "host:port", or URLs) of the endpoint the
// runs were measured on; the hosts named by the file's own
// local.endpoint_host and local.endpoint are added to them. None of them,
// and nothing else that looks like an address (see addressIn), may appear
// in a run record.
//
// The run records are checked as raw JSON, key by key in file order, so a
// key the Go types do not know is named rather than silently dropped.
func PublishCheck(data []byte, endpointHosts ...string) (payload []byte, reasons []string) {
	if len(data) > MaxFileSize {
		return nil, []string{sizeError(len(data)).Error() + "."}
	}
	if why := localOnlyReason(data); why != "" {
		return nil, []string{why}
	}
	var r reasonList
	doc, err := validate(data)
	var ve *ValidationError
	switch {
	case errors.As(err, &ve):
		for _, v := range ve.Violations {
			r.add(v.String() + ".")
		}
	case err != nil:
		return nil, []string{"The file cannot be read: " + err.Error() + "."}
	}
	top, _ := doc.(map[string]any)

	if c, ok := top["complete"].(bool); ok && !c {
		r.add("The run was interrupted before every level finished (complete is false); only complete files can be published.")
	}
	local, _ := top["local"].(map[string]any)
	if sim, ok := local["simulated"].(bool); ok && sim {
		r.add("These results come from the built-in simulator; simulator runs can never be published.")
	}
	if w, ok := local["workload"]; ok && w != nil {
		r.add(WorkloadUnpublishable)
	}

	hosts := make([]string, 0, len(endpointHosts)+2)
	for _, h := range endpointHosts {
		hosts = appendHost(hosts, h)
	}
	if s, ok := local["endpoint_host"].(string); ok {
		hosts = appendHost(hosts, s)
	}
	if s, ok := local["endpoint"].(string); ok {
		hosts = appendHost(hosts, s)
	}

	var ref *ManifestRef
	manifest, hasManifest := top["manifest"].(map[string]any)
	if hasManifest {
		ref = &ManifestRef{}
		ref.Revision, _ = manifest["revision"].(string)
		ref.ContentHash, _ = manifest["content_hash"].(string)
		for _, f := range []struct{ ptr, v string }{{"/manifest/revision", ref.Revision}, {"/manifest/content_hash", ref.ContentHash}} {
			if what, m, found := addressIn(f.v, hosts, false); found {
				r.add(addressReason(f.ptr, "", m, what))
			}
		}
	}

	runs, runsOK := rawRuns(data)
	if !runsOK {
		if _, isArr := top["runs"].([]any); isArr {
			r.add("The runs could not be read.")
		}
	} else if len(runs) == 0 {
		r.add("The file holds no run records; there is nothing to publish.")
	}
	parsedRuns, _ := top["runs"].([]any)
	for i, raw := range runs {
		// A model's path is published as its name (ModelName); a path
		// left anywhere else is refused below, by the field.
		raw = publishedModel(raw)
		runs[i] = raw
		base := "/runs/" + strconv.Itoa(i)
		if i < len(parsedRuns) {
			checkKind(&r, base, parsedRuns[i], hasManifest, ref != nil && ref.Revision != "")
		}
		if !utf8.Valid(raw) {
			r.add(fmt.Sprintf("at %s: the record is not valid UTF-8 text.", base))
		}
		runHosts := hosts
		if i < len(parsedRuns) {
			runHosts = privateHosts(hosts, parsedRuns[i])
		}
		w := runWalker{dec: json.NewDecoder(bytes.NewReader(raw)), hosts: runHosts, r: &r}
		w.dec.UseNumber()
		if err := w.walk([]string{"runs", strconv.Itoa(i)}, "", runShape(), true); err != nil {
			r.add(fmt.Sprintf("at %s: the record could not be read (%v).", base, err))
		}
	}

	if len(r.list) > 0 {
		return nil, r.list
	}
	created, _ := top["created_at"].(string)
	out, err := encodeIndented(Published{
		Format: Format, FormatVersion: FormatVersion, Complete: true, CreatedAt: created,
		Manifest: ref, Runs: runs,
	})
	if err == nil {
		// What is published must be a results file by itself.
		err = Validate(out)
	}
	if err != nil {
		return nil, []string{"The document to publish could not be built: " + err.Error() + "."}
	}
	return out, nil
}

func appendHost(hosts []string, h string) []string {
	h = normalizeHost(h)
	if h == "" {
		return hosts
	}
	for _, x := range hosts {
		if x == h {
			return hosts
		}
	}
	return append(hosts, h)
}

// publicNames are names of inference servers. People often call the
// machine or container that runs one after it (http://vllm:8000 in a
// compose file), and such a host name tells nothing about them.
var publicNames = map[string]bool{
	"vllm": true, "sglang": true, "ollama": true, "llama-server": true, "llamacpp": true,
	"llama.cpp": true, "tabbyapi": true, "lmstudio": true, "lm-studio": true, "koboldcpp": true,
	"tgi": true, "text-generation-inference": true, "aphrodite": true, "trtllm": true,
	"tensorrt-llm": true, "localai": true, "litellm": true, "exllamav2": true,
}

// privateHosts drops the endpoint host names that would only repeat what
// the run publishes anyway: an inference server's name, or a name that
// appears as a whole word in the run's model id or engine (a box called
// "qwen3-8b" serving Qwen/Qwen3-8B). Without this, a host named after its
// engine would make every run of that engine unpublishable.
func privateHosts(hosts []string, v any) []string {
	run, _ := v.(map[string]any)
	var public []string
	for _, field := range []string{"model_id", "engine"} {
		if s, ok := run[field].(string); ok {
			public = append(public, strings.ToLower(s))
		}
	}
	out := make([]string, 0, len(hosts))
next:
	for _, h := range hosts {
		if publicNames[h] {
			continue
		}
		for _, p := range public {
			if _, ok := findWord(p, p, h); ok {
				continue next
			}
		}
		out = append(out, h)
	}
	return out
}

// checkKind holds a run's kind against the file's manifest: a hardware run
// is published under a manifest revision; a protocol test has no manifest
// and states none of the conditions a manifest supplies.
func checkKind(r *reasonList, base string, v any, hasManifest, hasRevision bool) {
	run, ok := v.(map[string]any)
	if !ok {
		return
	}
	switch run["run_kind"] {
	case RunKindHardware:
		if !hasRevision {
			r.add(fmt.Sprintf("at %s: a hardware run needs the manifest revision it was made under, and the file names none.", base))
		}
	case RunKindProtocol:
		if hasManifest {
			r.add(fmt.Sprintf("at %s: a protocol test (a run with no kovara.yaml stating its hardware) is made without a manifest, but the file names one.", base))
		}
		for _, k := range manifestConditions {
			if val, present := run[k]; present && val != nil {
				r.add(fmt.Sprintf("at %s/%s: a protocol test (a run with no kovara.yaml stating its hardware) cannot state %s; only a manifest supplies it.", base, k, k))
			}
		}
	}
}

// rawRuns returns the elements of the top-level "runs" array exactly as
// written. Keys are matched exactly (encoding/json would also take "Runs").
func rawRuns(data []byte) ([]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var runs json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if t == "runs" {
			runs = v
		}
	}
	if runs == nil {
		return nil, false
	}
	var out []json.RawMessage
	if err := json.Unmarshal(runs, &out); err != nil {
		return nil, false
	}
	return out, true
}

type reasonList struct {
	list []string
	seen map[string]bool
}

func (r *reasonList) add(s string) {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if r.seen[s] {
		return
	}
	r.seen[s] = true
	r.list = append(r.list, s)
}

// runWalker reads one run record token by token.
type runWalker struct {
	dec   *json.Decoder
	hosts []string
	r     *reasonList
	depth int
}

// walk reads one value at path. key is the name of the field holding it
// ("" for array elements and the record itself); s is the shape the Go
// types give it (nil when unknown or a scalar); known says whether the
// keys of an object here can be checked against s.
func (w *runWalker) walk(path []string, key string, s *shape, known bool) error {
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > maxDepth {
		return fmt.Errorf("nested more than %d levels deep", maxDepth)
	}
	tok, err := w.dec.Token()
	if err != nil {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			checkKeys := known && s != nil && s.fields != nil
			for w.dec.More() {
				kt, err := w.dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				var sub *shape
				subKnown := false
				if checkKeys {
					if child, ok := s.fields[k]; ok {
						sub, subKnown = child, true
					} else {
						w.r.add(Violation{Pointer: pointer(path), Message: unknownFieldMessage(k)}.String() + ".")
					}
				}
				if !subKnown {
					// A known key is a fixed word; any other key is
					// text someone wrote and is scanned like a value.
					if what, m, found := addressIn(k, w.hosts, false); found {
						w.r.add(addressReason(pointer(path), k, m, what))
					}
				}
				if err := w.walk(append(path[:len(path):len(path)], k), k, sub, subKnown); err != nil {
					return err
				}
			}
			_, err := w.dec.Token()
			return err
		case '[':
			var elem *shape
			if s != nil {
				elem = s.elem
			}
			for i := 0; w.dec.More(); i++ {
				if err := w.walk(append(path[:len(path):len(path)], strconv.Itoa(i)), "", elem, known); err != nil {
					return err
				}
			}
			_, err := w.dec.Token()
			return err
		}
	case string:
		versionField := strings.HasSuffix(key, "version") || key == "python"
		if what, m, found := addressIn(t, w.hosts, versionField); found {
			w.r.add(addressReason(pointer(path), "", m, what))
		} else if m, found := PathIn(t); found {
			w.r.add(pathReason(pointer(path), m))
		}
	}
	return nil
}

func addressReason(ptr, key, match, what string) string {
	const limit = 60
	if utf8.RuneCountInString(match) > limit {
		match = string([]rune(match)[:limit]) + "…"
	}
	if key != "" {
		return fmt.Sprintf("at %s: the field name %q contains %q, which looks like %s; addresses and host names are never published.", ptr, key, match, what)
	}
	return fmt.Sprintf("at %s: %q looks like %s; addresses and host names are never published.", ptr, match, what)
}

// modelFields are a run record's fields that name the model.
var modelFields = map[string]bool{"model_id": true, "server_model": true}

// publishedModel is a run record with its model fields, at any depth, as
// ModelName says them, every other byte as written. A record that cannot
// be read is returned as it is: the walk says why.
func publishedModel(raw json.RawMessage) json.RawMessage {
	var edits []splice
	if !modelEdits(raw, 0, &edits) || len(edits) == 0 {
		return raw
	}
	out := make([]byte, 0, len(raw))
	at := 0
	for _, e := range edits {
		out = append(out, raw[at:e.from]...)
		out = append(out, e.with...)
		at = e.to
	}
	return append(out, raw[at:]...)
}

// splice replaces raw[from:to] with with.
type splice struct {
	from, to int
	with     []byte
}

// modelEdits adds, in order, the edits that publish v's model fields by
// their names; v lies at base in the whole record. It reports false when
// v cannot be read.
func modelEdits(v json.RawMessage, base int, edits *[]splice) bool {
	trimmed := bytes.TrimLeft(v, " \t\r\n")
	base += len(v) - len(trimmed)
	v = trimmed
	if len(v) == 0 || v[0] != '{' && v[0] != '[' {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	if _, err := dec.Token(); err != nil {
		return false
	}
	object := v[0] == '{'
	for dec.More() {
		key := ""
		if object {
			kt, err := dec.Token()
			if err != nil {
				return false
			}
			key, _ = kt.(string)
		}
		var sub json.RawMessage
		if err := dec.Decode(&sub); err != nil {
			return false
		}
		end := int(dec.InputOffset())
		from := base + end - len(sub)
		var id string
		switch {
		case modelFields[key] && json.Unmarshal(sub, &id) == nil:
			if name := ModelName(id); name != id {
				with, err := json.Marshal(name)
				if err != nil {
					return false
				}
				*edits = append(*edits, splice{from, base + end, with})
			}
		case !modelEdits(sub, from, edits):
			return false
		}
	}
	return true
}
