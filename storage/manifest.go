package storage

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kovara/desktop/engine/setup"
)

// MaxManifestSize is the largest manifest file accepted, in bytes. Real
// manifests are a few hundred bytes; anything near this is the wrong file.
const MaxManifestSize = 1 << 20

// maxManifestInt caps every whole number in a manifest so values mean the
// same on every platform (int may be 32 bits).
const maxManifestInt = 1<<31 - 1

// Manifest is a parsed kovara.yaml: what the benchmarked endpoint runs and
// the named profiles a benchmark may use. docs/manifest.md describes the
// format. A Manifest returned by ParseManifest or LoadManifest has passed
// every check; text fields are "" and optional numbers nil when the file
// leaves them out.
type Manifest struct {
	// Path is the file the manifest came from, as given ("" when parsed
	// from memory without a name).
	Path string
	// Name is the optional human name (name:).
	Name string
	// Revision identifies this version of the manifest: the file's own
	// revision: when it has one (RevisionDeclared), else "r" followed by
	// the first 12 hex digits of ContentHash.
	Revision         string
	RevisionDeclared bool
	// ContentHash is the lower-case hex SHA-256 of the file's bytes after
	// every line break (CR LF or a lone CR) is turned into LF.
	ContentHash string

	Model       ManifestModel
	Engine      ManifestEngine
	Hardware    ManifestHardware
	Precision   string
	Parallelism ManifestParallelism
	// Profiles maps each profile name to its settings; nil when the file
	// defines none.
	Profiles map[string]ManifestProfile
	// Serve is the command line that started the server, as written (it
	// may span lines).
	Serve string
}

// ManifestModel is the model: section. ID is always set.
type ManifestModel struct {
	ID       string
	Revision string
}

// ManifestEngine is the engine: section.
type ManifestEngine struct {
	Name    string
	Version string
	Image   string
}

// ManifestHardware is the hardware: section.
type ManifestHardware struct {
	Accelerator string
	GPUCount    *int
}

// ManifestParallelism is the parallelism: section.
type ManifestParallelism struct {
	Tensor   *int
	Pipeline *int
}

// ManifestProfile is one entry of profiles:. A nil field (or nil
// Concurrency) is one the profile leaves to the method default.
type ManifestProfile struct {
	InputTokens  *int
	OutputTokens *int
	Concurrency  []int
	Requests     *int
	Warmup       *int
}

// Problem is one thing wrong with a manifest. Line is 1-based, 0 when no
// line applies (the file as a whole). Key is the dotted path of the key
// concerned (list entries as key[i], counting from 0), "" for the file.
type Problem struct {
	Line int
	Key  string
	Msg  string
}

// ManifestError lists every problem found in a manifest, in line order.
type ManifestError struct {
	Path     string
	Problems []Problem
}

// Error renders one problem per line, compiler style:
// "kovara.yaml:7: profiles.fast.concurency: unknown key (did you mean "concurrency"?)".
func (e *ManifestError) Error() string {
	name := e.Path
	if name == "" {
		name = "manifest"
	}
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(name)
		if p.Line > 0 {
			b.WriteString(":")
			b.WriteString(strconv.Itoa(p.Line))
		}
		b.WriteString(": ")
		if p.Key != "" {
			b.WriteString(p.Key)
			b.WriteString(": ")
		}
		b.WriteString(p.Msg)
	}
	if len(e.Problems) == 0 {
		b.WriteString(name)
		b.WriteString(": invalid manifest")
	}
	return b.String()
}

// LoadManifest reads and parses the manifest at path. Files over
// MaxManifestSize are refused without being read in full.
func LoadManifest(path string) (*Manifest, error) {
	data, err := ReadBounded(path, MaxManifestSize, "the kovara.yaml file")
	var big *TooBigError
	switch {
	case errors.As(err, &big):
		return nil, tooBigManifest(path)
	case err != nil:
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return ParseManifest(data, path)
}

func tooBigManifest(path string) error {
	return &ManifestError{Path: path, Problems: []Problem{{
		Msg: "the file is larger than 1 MiB, far bigger than any manifest; is this the right file?",
	}}}
}

// decode reads the YAML tree of text, or says its syntax error with the
// line.
func (p *manifestParser) decode(text []byte) (*yamlNode, bool) {
	root, err := decodeYAMLNode(text)
	if err != nil {
		var se *yamlSyntaxError
		if errors.As(err, &se) {
			p.add(se.line, "", "YAML syntax error: %s", se.msg)
		} else {
			p.add(0, "", "YAML syntax error: %v", err)
		}
		return nil, false
	}
	return root, true
}

// ParseManifest parses and checks a manifest held in memory. path only
// names the file in messages and in the result. Any problem gives a
// *ManifestError listing all of them.
func ParseManifest(data []byte, path string) (*Manifest, error) {
	if len(data) > MaxManifestSize {
		return nil, tooBigManifest(path)
	}
	text := normalizeLineBreaks(data)
	sum := sha256.Sum256(text)
	m := &Manifest{Path: path, ContentHash: hex.EncodeToString(sum[:])}

	p := &manifestParser{}
	if !p.checkText(text) {
		return nil, p.err(path)
	}
	root, ok := p.decode(text)
	if !ok {
		return nil, p.err(path)
	}
	switch {
	case root == nil || (root.kind == yamlScalar && root.tag == "!!null"):
		p.add(1, "", "the manifest is empty; it needs at least model: {id: ...}")
		return nil, p.err(path)
	case root.kind != yamlMapping:
		p.add(root.line, "", "a manifest is a mapping of keys (model:, engine:, hardware:, ...), not %s", describeNode(root))
		return nil, p.err(path)
	}

	p.top(root, m)
	if len(p.problems) > 0 {
		return nil, p.err(path)
	}
	if !m.RevisionDeclared {
		m.Revision = "r" + m.ContentHash[:12]
	}
	return m, nil
}

// normalizeLineBreaks turns CR LF and lone CR into LF; every other byte is
// kept. YAML itself reads all three as one line break, so two files that
// read the same also hash the same.
func normalizeLineBreaks(data []byte) []byte {
	if !slices.Contains(data, '\r') {
		return data
	}
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '\r' {
			out = append(out, '\n')
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// ProfileNames returns the manifest's profile names, sorted.
func (m *Manifest) ProfileNames() []string {
	if m == nil {
		return nil
	}
	names := make([]string, 0, len(m.Profiles))
	for n := range m.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SelectProfile says which profile a request for name means. A non-empty
// name must be one of the manifest's profiles. An empty name picks the only
// profile when there is exactly one, else the one named "default"; with
// several and no "default" it is an error listing them. A manifest without
// profiles selects "" (the method defaults) for an empty name.
func (m *Manifest) SelectProfile(name string) (string, error) {
	if m == nil {
		return "", errors.New("no manifest")
	}
	names := m.ProfileNames()
	label := m.label()
	if name != "" {
		if _, ok := m.Profiles[name]; ok {
			return name, nil
		}
		if len(names) == 0 {
			return "", fmt.Errorf("%s defines no profiles, so there is no profile %q; run without choosing one", label, name)
		}
		hint := ""
		if best := closestName(name, names); best != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", best)
		}
		return "", fmt.Errorf("%s has no profile %q%s; its profiles are: %s", label, name, hint, strings.Join(names, ", "))
	}
	switch {
	case len(names) == 0:
		return "", nil
	case len(names) == 1:
		return names[0], nil
	}
	if _, ok := m.Profiles["default"]; ok {
		return "default", nil
	}
	return "", fmt.Errorf("%s has %d profiles and none is named \"default\"; choose one of: %s", label, len(names), strings.Join(names, ", "))
}

func (m *Manifest) label() string {
	if m.Path != "" {
		return m.Path
	}
	if m.Name != "" {
		return fmt.Sprintf("manifest %q", m.Name)
	}
	return "the manifest"
}

// Conditions returns what the manifest says the endpoint runs, for the
// selected profile (see SelectProfile for how "" is resolved).
func (m *Manifest) Conditions(profile string) (setup.Conditions, error) {
	name, err := m.SelectProfile(profile)
	if err != nil {
		return setup.Conditions{}, err
	}
	return m.conditions(name), nil
}

func (m *Manifest) conditions(profile string) setup.Conditions {
	c := setup.Conditions{
		ModelID:       m.Model.ID,
		ModelRevision: m.Model.Revision,
		Engine:        m.Engine.Name,
		EngineVersion: m.Engine.Version,
		Accelerator:   m.Hardware.Accelerator,
		Precision:     m.Precision,
		Profile:       profile,
		Revision:      m.Revision,
		ContentHash:   m.ContentHash,
		ManifestPath:  m.Path,
		ManifestName:  m.Name,
	}
	if m.Hardware.GPUCount != nil {
		c.GPUCount = *m.Hardware.GPUCount
	}
	return c
}

// ApplyProfile overrides the plan's token lengths, levels, request and
// warmup counts with those the selected profile sets (the rest keep the
// plan's values) and sets p.Conditions, making the plan a hardware run.
// Call it on the method defaults and apply command-line flags afterwards:
// a profile overrides the defaults and flags override both.
func (m *Manifest) ApplyProfile(p *setup.KovaraPlan, profile string) error {
	if p == nil {
		return errors.New("no plan to apply the manifest to")
	}
	name, err := m.SelectProfile(profile)
	if err != nil {
		return err
	}
	if prof, ok := m.Profiles[name]; ok {
		if prof.InputTokens != nil {
			p.InputTokens = *prof.InputTokens
		}
		if prof.OutputTokens != nil {
			p.OutputTokens = *prof.OutputTokens
		}
		if prof.Concurrency != nil {
			p.Concurrency = slices.Clone(prof.Concurrency)
		}
		if prof.Requests != nil {
			p.Requests = *prof.Requests
		}
		if prof.Warmup != nil {
			p.Warmup = *prof.Warmup
		}
	}
	c := m.conditions(name)
	p.Conditions = &c
	return nil
}

// Summary returns short human lines describing the manifest, for a
// summary card: manifest identity, model, engine, hardware, precision,
// parallelism, then one line per profile.
func (m *Manifest) Summary() []string {
	if m == nil {
		return nil
	}
	const unstated = "not stated"
	var lines []string
	if m.Name != "" {
		lines = append(lines, fmt.Sprintf("Manifest: %s, revision %s", m.Name, m.Revision))
	} else {
		lines = append(lines, "Manifest: revision "+m.Revision)
	}

	model := m.Model.ID
	if m.Model.Revision != "" {
		model += " at revision " + m.Model.Revision
	}
	lines = append(lines, "Model: "+model)

	eng := strings.TrimSpace(m.Engine.Name + " " + m.Engine.Version)
	if eng == "" {
		eng = unstated
	}
	if m.Engine.Image != "" {
		eng += " (image " + m.Engine.Image + ")"
	}
	lines = append(lines, "Engine: "+eng)

	hw := m.Hardware.Accelerator
	switch {
	case hw != "" && m.Hardware.GPUCount != nil:
		hw = fmt.Sprintf("%d × %s", *m.Hardware.GPUCount, hw)
	case m.Hardware.GPUCount != nil:
		hw = fmt.Sprintf("%d GPU(s), accelerator not stated", *m.Hardware.GPUCount)
	case hw == "":
		hw = unstated
	}
	lines = append(lines, "Hardware: "+hw)

	prec := m.Precision
	if prec == "" {
		prec = unstated
	}
	lines = append(lines, "Precision: "+prec)

	var par []string
	if m.Parallelism.Tensor != nil {
		par = append(par, fmt.Sprintf("tensor %d", *m.Parallelism.Tensor))
	}
	if m.Parallelism.Pipeline != nil {
		par = append(par, fmt.Sprintf("pipeline %d", *m.Parallelism.Pipeline))
	}
	if len(par) == 0 {
		par = []string{unstated}
	}
	lines = append(lines, "Parallelism: "+strings.Join(par, ", "))

	names := m.ProfileNames()
	if len(names) == 0 {
		lines = append(lines, "Profiles: none (the method defaults apply)")
	}
	for _, n := range names {
		lines = append(lines, fmt.Sprintf("Profile %s: %s", n, describeProfile(m.Profiles[n])))
	}
	return lines
}

func describeProfile(pr ManifestProfile) string {
	var parts []string
	if pr.InputTokens != nil {
		parts = append(parts, fmt.Sprintf("%d input tokens", *pr.InputTokens))
	}
	if pr.OutputTokens != nil {
		parts = append(parts, fmt.Sprintf("%d output tokens", *pr.OutputTokens))
	}
	if pr.Concurrency != nil {
		levels := make([]string, len(pr.Concurrency))
		for i, c := range pr.Concurrency {
			levels[i] = strconv.Itoa(c)
		}
		parts = append(parts, "levels "+strings.Join(levels, ", "))
	}
	if pr.Requests != nil {
		parts = append(parts, fmt.Sprintf("%d requests per level", *pr.Requests))
	}
	if pr.Warmup != nil {
		parts = append(parts, fmt.Sprintf("%d warmup", *pr.Warmup))
	}
	s := strings.Join(parts, ", ")
	if pr.InputTokens == nil || pr.OutputTokens == nil || pr.Concurrency == nil || pr.Requests == nil || pr.Warmup == nil {
		s += " (the rest: method defaults)"
	}
	return s
}
