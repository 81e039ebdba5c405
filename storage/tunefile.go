package storage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/internal/shellwords"
	"github.com/kovara/desktop/plans"
)

// A settings comparison written as a file, for kovara-bench tune
// FILE.yaml (docs/plans.md, "Compare settings"). It is read by the
// manifest's checker: every key known, every problem with its line.

var (
	tuneTopKeys     = []string{"endpoint", "model", "rounds", "start_timeout", "answers", "plan", "settings"}
	tuneSettingKeys = []string{"name", "command", "env", "ssh", "model", "by_hand", "before"}
	envEntryRE      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
)

// TuneFile is a settings comparison read from a file.
type TuneFile struct {
	Path string
	// Hash is the SHA-256 of its text: what a confirmation of its
	// commands holds (Confirmations).
	Hash     string
	Endpoint string // "" when the file leaves it to --endpoint
	Plan     setup.TunePlan
}

// Commands are the file's command lines, as they would run: what must be
// shown before any of them does.
func (f *TuneFile) Commands() []string { return TuneCommands(f.Plan) }

// TuneCommands are a comparison's command lines in words a person checks
// before they run: each setting's server command with its environment,
// where it runs, and its command before its turn.
func TuneCommands(p setup.TunePlan) []string {
	var out []string
	for _, s := range p.Settings {
		where := ""
		if s.SSH != "" {
			where = " (on " + s.SSH + " through ssh)"
		}
		env := ""
		if len(s.Env) > 0 {
			env = strings.Join(s.Env, " ") + " "
		}
		if s.Before != "" {
			out = append(out, fmt.Sprintf("%s, before its turn%s: %s%s", s.Name, where, env, s.Before))
		}
		if s.How == setup.ByCommand {
			out = append(out, fmt.Sprintf("%s%s: %s%s", s.Name, where, env, s.Command))
		}
	}
	return out
}

// LoadTuneFile reads and checks a settings comparison's file.
func LoadTuneFile(path string) (*TuneFile, error) {
	data, err := ReadBounded(path, MaxManifestSize, "the settings file")
	if err != nil {
		return nil, err
	}
	return ParseTuneFile(data, path)
}

// ParseTuneFile checks a settings comparison's file held in memory; any
// problem gives a *ManifestError listing all of them with their lines.
func ParseTuneFile(data []byte, path string) (*TuneFile, error) {
	text := normalizeLineBreaks(data)
	sum := sha256.Sum256(text)
	f := &TuneFile{Path: path, Hash: hex.EncodeToString(sum[:]), Plan: setup.TunePlan{Inner: setup.TuneDefaultPlan()}}
	p := &manifestParser{}
	if !p.checkText(text) {
		return nil, p.err(path)
	}
	root, ok := p.decode(text)
	if !ok {
		return nil, p.err(path)
	}
	if root == nil || root.kind != yamlMapping {
		p.add(1, "", "a settings file is a mapping of keys (endpoint:, plan:, settings:, …); it needs at least settings: with two of them")
		return nil, p.err(path)
	}
	settingsLine := 0
	p.pairs(root, "", tuneTopKeys, func(name string, k, v *yamlNode) {
		if !p.noAlias(v, name) {
			return
		}
		switch name {
		case "endpoint":
			f.Endpoint, _ = p.text(v, name, false)
		case "model":
			f.Plan.Inner.Model, _ = p.text(v, name, false)
		case "rounds":
			if n, ok := p.whole(v, name, 1, " round"); ok {
				f.Plan.Rounds = n
			}
		case "start_timeout":
			f.Plan.StartTimeout = p.duration(v, name)
		case "answers":
			if b, ok := p.boolean(v, name); ok {
				f.Plan.NoAnswers = !b
			}
		case "plan":
			if p.mappingOf(v, name, "a mapping of the plan's lengths and levels") {
				p.tunePlan(v, &f.Plan.Inner)
			}
		case "settings":
			settingsLine = k.line
			f.Plan.Settings = p.tuneSettings(v)
		}
	})
	if settingsLine == 0 && len(p.problems) == 0 {
		p.add(1, "settings", "the file has no settings: list two to eight, each with a name and a command, a model or by_hand")
	}
	if len(p.problems) == 0 {
		if err := f.Plan.Validate(); err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				p.add(settingsLine, "", "%s", line)
			}
		}
	}
	if len(p.problems) > 0 {
		return nil, p.err(path)
	}
	return f, nil
}

// tunePlan reads plan: into the inner plan: a manifest profile's keys
// (profile says any other key is unknown) and timeout.
func (p *manifestParser) tunePlan(v *yamlNode, in *setup.KovaraPlan) {
	prof, _ := p.profile(&yamlNode{kind: yamlMapping, line: v.line, content: withoutKey(v.content, "timeout")}, "plan")
	if prof.InputTokens != nil {
		in.InputTokens = *prof.InputTokens
	}
	if prof.OutputTokens != nil {
		in.OutputTokens = *prof.OutputTokens
	}
	if prof.Concurrency != nil {
		in.Concurrency = prof.Concurrency
	}
	if prof.Requests != nil {
		in.Requests = *prof.Requests
	}
	if prof.Warmup != nil {
		in.Warmup = *prof.Warmup
	}
	for i := 0; i+1 < len(v.content); i += 2 {
		if v.content[i].value == "timeout" {
			if d := p.duration(v.content[i+1], "plan.timeout"); d > 0 {
				in.Timeout = d
			}
		}
	}
}

// withoutKey is a mapping's content without one key and its value.
func withoutKey(content []*yamlNode, key string) []*yamlNode {
	var out []*yamlNode
	for i := 0; i+1 < len(content); i += 2 {
		if content[i].value != key {
			out = append(out, content[i], content[i+1])
		}
	}
	return out
}

// tuneSettings reads the settings: list.
func (p *manifestParser) tuneSettings(v *yamlNode) []setup.TuneSetting {
	if v.kind != yamlSequence {
		p.add(v.line, "settings", "expected a list of settings (each starting with - name: …), got %s", describeNode(v))
		return nil
	}
	var out []setup.TuneSetting
	for i, item := range v.content {
		key := fmt.Sprintf("settings[%d]", i)
		if !p.noAlias(item, key) || !p.mappingOf(item, key, "a mapping with name: and a command:, model: or by_hand:") {
			continue
		}
		var s setup.TuneSetting
		var hows []string
		p.pairs(item, key, tuneSettingKeys, func(name string, k, fv *yamlNode) {
			fk := joinKey(key, name)
			if !p.noAlias(fv, fk) {
				return
			}
			switch name {
			case "name":
				s.Name, _ = p.text(fv, fk, false)
			case "command":
				if line, ok := p.text(fv, fk, false); ok {
					env, cmd, err := shellwords.Command(line)
					if err != nil {
						p.add(fv.line, fk, "%v", err)
					}
					s.Env, s.Command = append(env, s.Env...), cmd
				}
				hows = append(hows, "command")
			case "ssh":
				s.SSH, _ = p.text(fv, fk, false)
			case "model":
				s.Model, _ = p.text(fv, fk, false)
			case "by_hand":
				s.Instruction, _ = p.text(fv, fk, false)
				hows = append(hows, "by_hand")
			case "before":
				s.Before, _ = p.text(fv, fk, false)
			case "env":
				s.Env = append(s.Env, p.envList(fv, fk)...)
			}
		})
		switch {
		case slices.Contains(hows, "command") && slices.Contains(hows, "by_hand"):
			p.add(item.line, key, "give a command: the app runs, or by_hand: what you change yourself, not both")
		case slices.Contains(hows, "command"):
			s.How = setup.ByCommand
		case slices.Contains(hows, "by_hand"):
			s.How = setup.ByHand
		case s.Model != "":
			s.How = setup.ByModel
		default:
			p.add(item.line, key, "says nothing of how to reach it: give a command: (the app starts the server), a model: (the same server, another model) or by_hand: (what you change yourself)")
		}
		out = append(out, s)
	}
	return out
}

// envList reads env: as a list of NAME=VALUE.
func (p *manifestParser) envList(v *yamlNode, key string) []string {
	if v.kind != yamlSequence {
		p.add(v.line, key, "expected a list of NAME=VALUE, such as [OLLAMA_NUM_PARALLEL=4], got %s", describeNode(v))
		return nil
	}
	var out []string
	for i, item := range v.content {
		ik := fmt.Sprintf("%s[%d]", key, i)
		s, ok := p.text(item, ik, false)
		if !ok {
			continue
		}
		if !envEntryRE.MatchString(s) {
			p.add(item.line, ik, "%q is not NAME=VALUE", s)
			continue
		}
		out = append(out, s)
	}
	return out
}

// duration reads a time such as 90s or 5m; 0 after a problem.
func (p *manifestParser) duration(v *yamlNode, key string) time.Duration {
	s, ok := p.text(v, key, false)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		p.add(v.line, key, "%q is not a time such as 90s or 5m", s)
		return 0
	}
	return d
}

// boolean reads true or false.
func (p *manifestParser) boolean(v *yamlNode, key string) (bool, bool) {
	if v.kind != yamlScalar || v.tag != "!!bool" {
		p.add(v.line, key, "expected true or false, got %s", describeNode(v))
		return false, false
	}
	return strings.EqualFold(v.value, "true"), true
}

// Confirmations are the settings files whose commands the person has seen
// and agreed to run on this machine, by their text's hash: a file changed
// since, or one from elsewhere, is shown and asked about again.
type Confirmations struct{ path string }

const maxConfirmations = 1000

// OpenConfirmations keeps its list under the app's config folder.
func OpenConfirmations(configDir string) *Confirmations {
	return &Confirmations{path: filepath.Join(configDir, "confirmed-commands.json")}
}

func (c *Confirmations) read() []string {
	data, err := ReadBounded(c.path, 1<<20, "the confirmed commands")
	if err != nil {
		return nil
	}
	var doc struct {
		Hashes []string `json:"hashes"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	return doc.Hashes
}

// Has says the person confirmed this text's commands before.
func (c *Confirmations) Has(hash string) bool { return hash != "" && slices.Contains(c.read(), hash) }

// Add remembers that the person confirmed this text's commands.
func (c *Confirmations) Add(hash string) error {
	hs := c.read()
	if slices.Contains(hs, hash) {
		return nil
	}
	hs = append(hs, hash)
	if len(hs) > maxConfirmations {
		hs = hs[len(hs)-maxConfirmations:]
	}
	data, _ := json.MarshalIndent(struct {
		Hashes []string `json:"hashes"`
	}{hs}, "", "  ")
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return err
	}
	return WriteFileAtomic(c.path, append(data, '\n'), 0o600)
}

// CommandsHash is the hash Confirmations keeps for a comparison made
// without a file (the app's form): its command lines.
func CommandsHash(p setup.TunePlan) string {
	cmds := TuneCommands(p)
	if len(cmds) == 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.Join(cmds, "\n")))
	return hex.EncodeToString(sum[:])
}

// SaveTuneReplay saves one replay of a trace in a settings comparison as
// an ordinary rate result, labelled with its setting and round
// (local.tune), and returns its id.
func (l *Library) SaveTuneReplay(r *results.RateResult) (string, error) {
	id, err := l.SaveDoc("", plans.NewRate(r))
	if err != nil || r.Local.Tune == nil {
		return id, err
	}
	return id, l.SetAnnotation(id, Annotation{Label: tuneRunLabel(r.Local.Tune)})
}

// tuneRunLabel is a settings comparison's run's label in the history.
func tuneRunLabel(t *results.TuneRef) string {
	return fmt.Sprintf("%s, round %d of %d (settings comparison)", t.Setting, t.Round, t.Rounds)
}

// SaveTuneRun saves one run of a settings comparison as an ordinary run,
// labelled with its setting and round (local.tune), and returns its id.
func (l *Library) SaveTuneRun(f *results.File) (string, error) {
	id, err := l.Save("", f)
	if err != nil || f.Local.Tune == nil {
		return id, err
	}
	return id, l.SetAnnotation(id, Annotation{Label: tuneRunLabel(f.Local.Tune)})
}
