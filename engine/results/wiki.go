package results

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// The three-stage result as text for a wiki page: template parameters,
// one per line, that can be pasted into a recipe's infobox.

// wikiClean makes a value safe inside a template parameter: one line, no
// pipes, braces or brackets that would end or nest the template.
func wikiClean(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := strings.NewReplacer("|", "/", "{{", "(", "}}", ")", "[[", "", "]]", "", "<", "‹", ">", "›")
	return r.Replace(s)
}

func fmtRate(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', 1, 64)
}

// decodeByKind finds the single-user result of one prompt kind.
func (r *StagesResult) decodeByKind(kind string) *DecodeStage {
	for i := range r.Decode {
		if r.Decode[i].Prompt == kind {
			return &r.Decode[i]
		}
	}
	return nil
}

// SpecDecodeText is the spec_decode wiki field: what the user said about
// speculative decoding, with the acceptance length the server's counters
// showed during the single-user stage when it had them.
func (r *StagesResult) SpecDecodeText() string {
	said := r.Settings.SpecDecode
	obs := r.SpecObserved
	switch {
	case obs != nil && obs.MeanAcceptanceLength != nil:
		l := strconv.FormatFloat(*obs.MeanAcceptanceLength, 'f', 2, 64)
		if said == "" {
			return "on (mean acceptance length " + l + " from the server's counters)"
		}
		return said + " (mean acceptance length " + l + ")"
	case said != "":
		return said
	case obs != nil && obs.Drafts == 0:
		return "none (the server's counters saw no drafts)"
	}
	return ""
}

// DefaultBenchNote is the one-line description of how the numbers were made.
func (r *StagesResult) DefaultBenchNote() string {
	const limit = 300
	var parts []string
	head := "temperature 0, "
	switch {
	case r.Compat.ThinkingOff:
		head += "thinking off"
	case r.Settings.Thinking == "off":
		head += "thinking at the server default (chat_template_kwargs refused)"
	default:
		head += "thinking at the server default"
	}
	head += ", " + Thousands(r.Settings.DecodeTokens) + "-token answers with natural stop, code prompt"
	var others []string
	for _, k := range []string{"json", "prose"} {
		if d := r.decodeByKind(k); d != nil && d.DecodeTPS != nil {
			others = append(others, k+" "+fmtRate(d.DecodeTPS))
		}
	}
	if len(others) > 0 {
		head += " (" + strings.Join(others, ", ") + ")"
	}
	parts = append(parts, head)
	if u := r.Users; u != nil && u.AggregateTPS != nil {
		p := fmt.Sprintf("%d users at %s tokens", u.Users, Thousands(u.MaxTokens))
		if u.Queued {
			p += " (queued: fewer ran at once)"
		}
		parts = append(parts, p)
	}
	if p := r.Prefill; p != nil && p.PrefillTPS != nil && p.PromptTokens != nil {
		parts = append(parts, "cold prefill of "+Thousands(*p.PromptTokens)+" tokens")
	}
	switch r.TokenSource {
	case TokensTimings:
		parts = append(parts, "tokens from llama.cpp timings")
	case TokensChunks:
		parts = append(parts, "tokens counted as stream chunks")
	}
	var shorts []string
	for _, d := range r.Decode {
		if d.Short {
			shorts = append(shorts, d.Prompt+" "+Thousands(d.CompletionTokens))
		}
	}
	if len(shorts) > 0 {
		parts = append(parts, "short answers: "+strings.Join(shorts, ", "))
	}
	if r.Quick {
		parts = append(parts, "quick run, not protocol numbers")
	}
	if r.Local.Simulated {
		parts = append(parts, "built-in simulator, not real hardware")
	}
	if !r.Complete {
		parts = append(parts, "stopped before the end")
	}
	note := fmt.Sprintf("Kovara Desktop three-stage plan %d: ", r.PlanVersion) + strings.Join(parts, "; ")
	if user := wikiClean(r.Settings.Note); user != "" {
		room := limit - len(note) - 2
		if room > 10 {
			if len(user) > room {
				user = strings.TrimSpace(user[:room-3]) + "..."
			}
			note += "; " + user
		}
	}
	note = wikiClean(note)
	if len(note) > limit {
		// Drop whole parts from the end rather than cut a word.
		cut := note[:limit-3]
		if i := strings.LastIndex(cut, "; "); i > 0 {
			cut = cut[:i]
		}
		note = cut + "..."
	}
	return note
}

// WikiBlock is the result as wiki template parameters, one per line, in a
// fixed order: decode_single, decode_agg, agg_users, prefill_tps,
// prefill_prompt, context_tokens, engine_family, engine_version,
// spec_decode, bench_note, tested_on. A value that was not measured is
// left empty. Comment lines above say where the numbers come from, and
// loudly when they are a quick run's or the simulator's.
func (r *StagesResult) WikiBlock() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Kovara Desktop three-stage plan %d (after the cmp.wiki benchmark protocol; not cmpbench output), %s %s -->\n",
		r.PlanVersion, wikiClean(r.Settings.Client), wikiClean(r.Settings.ClientVersion))
	if r.Quick {
		fmt.Fprintf(&b, "<!-- QUICK RUN (%s-token answers, %s-token prefill): not protocol numbers -->\n",
			Thousands(r.Settings.DecodeTokens), Thousands(r.Settings.PrefillTargetTokens))
	}
	if r.Local.Simulated {
		b.WriteString("<!-- SIMULATED: the built-in simulator, not real hardware; do not publish -->\n")
	}
	if !r.Complete {
		b.WriteString("<!-- INCOMPLETE: the run was stopped before every stage finished -->\n")
	}
	field := func(k, v string) { fmt.Fprintf(&b, "|%s=%s\n", k, wikiClean(v)) }
	decode := ""
	if d := r.decodeByKind("code"); d != nil {
		decode = fmtRate(d.DecodeTPS)
	}
	field("decode_single", decode)
	agg, users := "", ""
	if u := r.Users; u != nil && u.AggregateTPS != nil {
		agg, users = fmtRate(u.AggregateTPS), strconv.Itoa(u.Users)
	}
	field("decode_agg", agg)
	field("agg_users", users)
	pre, prompt := "", ""
	if p := r.Prefill; p != nil && p.PrefillTPS != nil && p.PromptTokens != nil {
		pre = strconv.FormatFloat(*p.PrefillTPS, 'f', 0, 64)
		prompt = Thousands(*p.PromptTokens) + " tokens"
	}
	field("prefill_tps", pre)
	field("prefill_prompt", prompt)
	ctx := ""
	if r.Engine.ContextLength > 0 {
		ctx = strconv.Itoa(r.Engine.ContextLength)
	}
	for _, f := range r.GPUs.wikiFields() {
		field(f[0], f[1])
	}
	if r.GPUs != nil && r.GPUs.Caution != "" {
		fmt.Fprintf(&b, "<!-- the cards: %s -->\n", wikiClean(r.GPUs.Caution))
	}
	field("context_tokens", ctx)
	field("engine_family", FamilyName(r.Engine.Family))
	field("engine_version", r.Engine.Version)
	field("spec_decode", r.SpecDecodeText())
	note := r.BenchNote
	if note == "" {
		note = r.DefaultBenchNote()
	}
	field("bench_note", note)
	field("tested_on", r.TestedOn)
	return b.String()
}

// Thousands writes n the way an English reader expects: 8020 → "8,020".
func Thousands(n int) string { return englishNumbers.Sprintf("%d", n) }

var englishNumbers = message.NewPrinter(language.English)
