package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// The simulator-driven tests of the plans (here, in specdec_test.go and
// servermetrics_test.go) do not call t.Parallel: they run one by one before
// the package's parallel tests start, so neither disturbs the timing of
// the other on a small machine.

// longAnswers makes the simulated model write until max_tokens, as a real
// one would for the plan's prompts.
func longAnswers(int64) int { return 1 << 20 }

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*want }

// truthRate is tokens / (last chunk − first chunk) of the server's own
// record.
func truthRate(tr sim.Truth, tokens int) float64 {
	return float64(tokens) / tr.Chunks[len(tr.Chunks)-1].Sub(tr.Chunks[0]).Seconds()
}

// nominal holds a measured rate against the simulator's configured one.
// A busy test machine paces the simulator late, which is the simulator's
// shortfall, not the measurement's: when the server's own record is
// already off the nominal rate by more than 3 %, the check is skipped
// with a note (the record check has covered the arithmetic).
func nominal(t *testing.T, what string, measured, record, want, tol float64) {
	t.Helper()
	if !within(record, want, 0.03) {
		t.Logf("%s: the simulator ran at %.1f against its nominal %.1f (a busy machine); nominal check skipped", what, record, want)
		return
	}
	if !within(measured, want, tol) {
		t.Errorf("%s: %.1f, nominal %.1f ± %.0f%%", what, measured, want, tol*100)
	}
}

// TestStagesArithmetic runs the full plan (1,024-token answers, ~8,000-
// token prefill) against a simulator with known rates, and holds each
// number against the simulator's own record of the same requests and
// against its nominal rates. Against the record, within 3 %: decode
// (tokens / (last − first chunk)), prefill (prompt tokens / the true
// arrival-to-first-token time) and aggregate (all tokens / (last chunk of
// any − first chunk of any)). Against the nominal rates, within 5 %:
// decode ≈ 1/TokenInterval (the protocol divides n tokens by n−1
// intervals, +0.1 %) and aggregate ≈ users/TokenInterval; within 8 %:
// prefill ≈ PrefillRate (its TTFT also holds reading the request, a few
// ms of 400).
func TestStagesArithmetic(t *testing.T) {
	const interval = 2 * time.Millisecond
	const prefillRate = 20000.0
	srv, url := startSim(t, sim.Config{TokenInterval: interval, PrefillRate: prefillRate, BatchCapacity: 64, NaturalStop: longAnswers, RecordTruth: true})
	p := setup.DefaultStagesPlan()
	p.Timeout = 60 * time.Second
	p.SpecDecode = "none"
	res, err := RunStages(context.Background(), p, setup.Endpoint{URL: url}, Observer{Live: NewLive()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Quick || len(res.Failed()) > 0 || res.TokenSource != results.TokensUsage {
		t.Fatalf("complete %v quick %v failed %v source %q; warnings %v", res.Complete, res.Quick, res.Failed(), res.TokenSource, res.Warnings)
	}
	// The server's record, by what each request asked for: the three
	// 1,024-token answers in order, the prefill (the longest prompt) and
	// the eight 512-token answers.
	var decodeTruth, userTruth []sim.Truth
	var prefillTruth sim.Truth
	truths := srv.Truths()
	slices.SortFunc(truths, func(a, b sim.Truth) int { return a.Arrived.Compare(b.Arrived) })
	for _, tr := range truths {
		switch {
		case tr.CompletionTokens == 1024:
			decodeTruth = append(decodeTruth, tr)
		case tr.CompletionTokens == 512:
			userTruth = append(userTruth, tr)
		}
		if tr.PromptTokens > prefillTruth.PromptTokens {
			prefillTruth = tr
		}
	}
	if len(decodeTruth) != 3 || len(userTruth) != 8 {
		t.Fatalf("record: %d decode and %d user requests", len(decodeTruth), len(userTruth))
	}

	perUser := 1 / interval.Seconds()
	if len(res.Decode) != 3 {
		t.Fatalf("%d decode results", len(res.Decode))
	}
	for i, d := range res.Decode {
		if d.CompletionTokens != 1024 || d.Short || d.DecodeTPS == nil || d.TTFTMs == nil || d.TokenSource != results.TokensUsage {
			t.Errorf("%s: %+v", d.Prompt, d)
			continue
		}
		if want := truthRate(decodeTruth[i], 1024); !within(*d.DecodeTPS, want, 0.03) {
			t.Errorf("%s: decode %.1f tok/s, the server's record %.1f ± 3%%", d.Prompt, *d.DecodeTPS, want)
		}
		nominal(t, d.Prompt+" decode tok/s", *d.DecodeTPS, truthRate(decodeTruth[i], 1024), perUser, 0.05)
	}
	pf := res.Prefill
	if pf == nil || pf.Error != "" || !pf.Calibrated || pf.PromptTokens == nil || pf.PrefillTPS == nil {
		t.Fatalf("prefill %+v", pf)
	}
	if !within(float64(*pf.PromptTokens), 8000, 0.02) || *pf.PromptTokens != prefillTruth.PromptTokens {
		t.Errorf("prefill prompt %d tokens (server %d), want 8,000 ± 2%% (probe %v tokens, %.5f tokens/char)",
			*pf.PromptTokens, prefillTruth.PromptTokens, *pf.ProbePromptTokens, *pf.TokensPerChar)
	}
	trueTTFT, _ := prefillTruth.TTFT()
	recPrefill := float64(prefillTruth.PromptTokens) / trueTTFT.Seconds()
	if !within(*pf.PrefillTPS, recPrefill, 0.03) {
		t.Errorf("prefill %.0f tok/s, the server's record %.0f ± 3%%", *pf.PrefillTPS, recPrefill)
	}
	nominal(t, "prefill tok/s", *pf.PrefillTPS, recPrefill, prefillRate, 0.08)
	u := res.Users
	if u == nil || u.Error != "" || u.AggregateTPS == nil || u.Users != 8 || u.CompletionTokens != 8*512 {
		t.Fatalf("users %+v", u)
	}
	first, last := userTruth[0].Chunks[0], userTruth[0].Chunks[511]
	for _, tr := range userTruth {
		if tr.Chunks[511].After(last) {
			last = tr.Chunks[511]
		}
		if tr.Chunks[0].Before(first) {
			first = tr.Chunks[0]
		}
	}
	recAgg := 8 * 512 / last.Sub(first).Seconds()
	if !within(*u.AggregateTPS, recAgg, 0.03) {
		t.Errorf("aggregate %.1f tok/s, the server's record %.1f ± 3%%", *u.AggregateTPS, recAgg)
	}
	nominal(t, "aggregate tok/s", *u.AggregateTPS, recAgg, 8*perUser, 0.05)
	if *u.PerUserMinTPS > *u.PerUserMeanTPS || *u.PerUserMeanTPS*8 < *u.AggregateTPS*0.9 {
		t.Errorf("per user mean %v min %v against aggregate %v", *u.PerUserMeanTPS, *u.PerUserMinTPS, *u.AggregateTPS)
	}
	// Eight users in 64 slots queue only if the machine held one back a
	// whole answer; then the record shows it too, and so must the plan.
	if rs := spanOf(userTruth); u.Queued != rs.queued() {
		t.Errorf("queued %v (%s), the record's %v (%s)", u.Queued, u.QueueNote, rs.queued(), rs)
		for i, pu := range u.PerUser {
			t.Logf("user %d: first %v last %v ttft %v", i, *pu.FirstS, *pu.LastS, *pu.TTFTMs)
		}
		for i, tr := range userTruth {
			t.Logf("truth %d: arrived %v admitted %v first %v last %v", i, tr.Arrived.Sub(first), tr.Admitted.Sub(first), tr.Chunks[0].Sub(first), tr.Chunks[511].Sub(first))
		}
	}
	if res.Engine.Family != results.FamilyVLLM || res.Engine.ContextLength != 32768 || !res.Compat.ThinkingOff {
		t.Errorf("engine %+v compat %+v", res.Engine, res.Compat)
	}
	if res.Local.ServerMetrics == nil {
		t.Error("no server metrics series")
	}
	block := res.WikiBlock()
	for _, want := range []string{
		"|decode_single=", "|decode_agg=", "|agg_users=8\n", "|prefill_tps=", "|prefill_prompt=", "|context_tokens=32768\n",
		"|engine_family=vLLM\n", "|engine_version=0.11.0\n", "|spec_decode=none\n", "|bench_note=Kovara Desktop three-stage plan 1: ",
		"|tested_on=" + res.TestedOn + "\n",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("wiki block lacks %q:\n%s", want, block)
		}
	}
	if strings.Contains(block, "QUICK") || strings.Contains(block, "127.0.0.1") {
		t.Errorf("wiki block:\n%s", block)
	}
	data, err := results.MarshalDocument(res)
	if err != nil {
		t.Fatal(err)
	}
	back, err := results.StagesDoc.Decode(data)
	if err != nil || back.WikiBlock() != block {
		t.Errorf("round trip: %v", err)
	}
	if _, reasons := results.PublishCheck(data); len(reasons) != 1 || !strings.Contains(reasons[0], results.FormatStages) {
		t.Errorf("publish check: %v", reasons)
	}
}

// The queueing check fires when the server admits fewer requests than
// there are users, and stays quiet when it admits them all. The check
// compares when each user's answer began and ended, so it is held to the
// same rule on the simulator's own record of the measured round: some
// request's first chunk after another's last. With three slots for six
// users that holds by construction (a queued request is admitted only
// once a slot's answer has ended, and its prefill of a few ms comes
// after); with six slots it holds only if the machine held a request back
// a whole answer, and then the record shows it too. The aggregate is held
// to the record's within 3 %, as in TestStagesArithmetic.
func TestStagesQueueing(t *testing.T) {
	for _, c := range []struct {
		capacity int
		queued   bool // what the record shows on a machine that keeps up
	}{{3, true}, {6, false}} {
		srv, url := startSim(t, sim.Config{TokenInterval: 4 * time.Millisecond, PrefillRate: 10000, BatchCapacity: c.capacity, NaturalStop: longAnswers, RecordTruth: true})
		p := setup.DefaultStagesPlan()
		p.Quick, p.Users = true, 6
		res, err := RunStages(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
		if err != nil {
			t.Fatal(err)
		}
		u := res.Users
		if u == nil || u.AggregateTPS == nil || u.Failed != 0 || u.CompletionTokens != 6*stagesQuick.users {
			t.Fatalf("capacity %d: users %+v", c.capacity, u)
		}
		// The measured round's six answers, in the server's record.
		var round []sim.Truth
		for _, tr := range srv.Truths() {
			if tr.CompletionTokens == stagesQuick.users && len(tr.Chunks) == stagesQuick.users {
				round = append(round, tr)
			}
		}
		if len(round) != 6 {
			t.Fatalf("capacity %d: %d answers of %d tokens in the record, want 6", c.capacity, len(round), stagesQuick.users)
		}
		rs := spanOf(round)
		if c.capacity < 6 && !rs.queued() {
			t.Fatalf("capacity %d for 6 users: the record shows none waiting (%s)", c.capacity, rs)
		}
		if rs.queued() != c.queued {
			t.Logf("capacity %d: the record shows queueing %v (%s): a busy machine", c.capacity, rs.queued(), rs)
		}
		if u.Queued != rs.queued() {
			t.Errorf("capacity %d: queued %v, the record's %v (%s)", c.capacity, u.Queued, rs.queued(), rs)
		}
		if u.Queued && (!strings.Contains(u.QueueNote, "fewer than 6") || !strings.Contains(res.BenchNote, "queued")) {
			t.Errorf("queue note %q, bench note %q", u.QueueNote, res.BenchNote)
		}
		if !u.Queued && (u.QueueNote != "" || strings.Contains(res.BenchNote, "queued")) {
			t.Errorf("not queued, yet queue note %q, bench note %q", u.QueueNote, res.BenchNote)
		}
		recAgg := float64(6*stagesQuick.users) / rs.last.Sub(rs.first).Seconds()
		if !within(*u.AggregateTPS, recAgg, 0.03) {
			t.Errorf("capacity %d: aggregate %.1f tok/s, the server's record %.1f ± 3%%", c.capacity, *u.AggregateTPS, recAgg)
		}
	}
}

// roundSpan is when a round of answers ran, from the server's record:
// its first and last chunk, the latest of its first chunks and the
// earliest of its last ones.
type roundSpan struct{ first, last, lastFirst, firstLast time.Time }

func spanOf(round []sim.Truth) roundSpan {
	var s roundSpan
	for i, tr := range round {
		f, l := tr.Chunks[0], tr.Chunks[len(tr.Chunks)-1]
		if i == 0 {
			s = roundSpan{f, l, f, l}
		}
		s.first, s.last = minTime(s.first, f), maxTime(s.last, l)
		s.lastFirst, s.firstLast = maxTime(s.lastFirst, f), minTime(s.firstLast, l)
	}
	return s
}

// queued is the plan's queueing rule on the record: some answer began
// only after another had ended.
func (s roundSpan) queued() bool { return s.firstLast.Before(s.lastFirst) }

func (s roundSpan) String() string {
	return fmt.Sprintf("first chunks up to %v, last chunks from %v", s.lastFirst.Sub(s.first), s.firstLast.Sub(s.first))
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Thinking off goes through chat_template_kwargs; a server that refuses it
// (400) gets the plan without it, and the result says so.
func TestStagesThinkingFallback(t *testing.T) {
	run := func(cfg sim.Config) *results.StagesResult {
		cfg.TokenInterval, cfg.PrefillRate, cfg.NaturalStop = time.Millisecond, 200000, longAnswers
		_, url := startSim(t, cfg)
		p := setup.DefaultStagesPlan()
		p.Quick, p.Users = true, 2
		res, err := RunStages(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	accepted := run(sim.Config{ReasoningTokens: 5})
	if !accepted.Compat.ThinkingOff || accepted.Compat.Attempts != 1 || accepted.Decode[0].Reasoning {
		t.Errorf("accepting server: compat %+v, decode %+v", accepted.Compat, accepted.Decode[0])
	}
	if !strings.Contains(accepted.BenchNote, "thinking off") {
		t.Errorf("bench note %q", accepted.BenchNote)
	}

	refused := run(sim.Config{ReasoningTokens: 5, RefuseTemplateKwargs: true})
	c := refused.Compat
	if c.ThinkingOff || !c.StreamOptions || c.Attempts != 3 || len(c.Refused) != 2 || !strings.Contains(c.Refused[0], "chat_template_kwargs") {
		t.Errorf("refusing server: compat %+v", c)
	}
	if !refused.Decode[0].Reasoning || refused.Decode[0].CompletionTokens != 128 {
		t.Errorf("with thinking on, the answer should begin with reasoning: %+v", refused.Decode[0])
	}
	if !containsWord(refused.Warnings, "refused chat_template_kwargs") || !strings.Contains(refused.BenchNote, "chat_template_kwargs refused") {
		t.Errorf("warnings %v, note %q", refused.Warnings, refused.BenchNote)
	}
	if refused.Prefill == nil || refused.Prefill.PrefillTPS == nil || refused.Users == nil || refused.Users.AggregateTPS == nil {
		t.Errorf("the plan did not go on after the fallback: %+v %+v", refused.Prefill, refused.Users)
	}

	// The strict personality refuses every extension field.
	strict := run(sim.Config{Personality: sim.Strict})
	if strict.Compat.ThinkingOff || !strict.Compat.StreamOptions || strict.Compat.Attempts != 3 {
		t.Errorf("strict server: compat %+v", strict.Compat)
	}
}

// Tokens come from usage, else llama.cpp's timings, else stream chunks,
// and every count says which.
func TestStagesTokenSources(t *testing.T) {
	run := func(cfg sim.Config) *results.StagesResult {
		cfg.TokenInterval, cfg.PrefillRate, cfg.NaturalStop, cfg.NoUsage = time.Millisecond, 100000, longAnswers, true
		_, url := startSim(t, cfg)
		p := setup.DefaultStagesPlan()
		p.Quick, p.Users = true, 2
		res, err := RunStages(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	llama := run(sim.Config{Personality: sim.LlamaCpp})
	if llama.TokenSource != results.TokensTimings || llama.Decode[0].TokenSource != results.TokensTimings || llama.Decode[0].CompletionTokens != 128 {
		t.Errorf("llama.cpp: source %q, decode %+v", llama.TokenSource, llama.Decode[0])
	}
	if p := llama.Prefill; p == nil || p.TokenSource != results.TokensTimings || p.PrefillTPS == nil || !within(float64(*p.PromptTokens), 2000, 0.03) {
		t.Errorf("llama.cpp prefill %+v", p)
	}
	if llama.Engine.Family != results.FamilyLlamaCpp || !strings.HasPrefix(llama.Engine.Version, "b6000") || !strings.Contains(llama.BenchNote, "llama.cpp timings") {
		t.Errorf("llama.cpp engine %+v, note %q", llama.Engine, llama.BenchNote)
	}

	ollama := run(sim.Config{Personality: sim.Ollama})
	if ollama.TokenSource != results.TokensChunks || ollama.Decode[0].TokenSource != results.TokensChunks || ollama.Decode[0].CompletionTokens != 128 {
		t.Errorf("ollama: source %q, decode %+v", ollama.TokenSource, ollama.Decode[0])
	}
	if p := ollama.Prefill; p == nil || p.Calibrated || p.PromptTokens != nil || p.PrefillTPS != nil || p.TTFTMs == nil {
		t.Errorf("without prompt counts, prefill has a TTFT and no rate: %+v", p)
	}
	if !containsWord(ollama.Warnings, "stream chunks") || !strings.Contains(ollama.WikiBlock(), "|prefill_tps=\n") {
		t.Errorf("warnings %v\n%s", ollama.Warnings, ollama.WikiBlock())
	}
	if ollama.Local.ServerMetrics != nil {
		t.Error("Ollama has no /metrics")
	}
}

// Short answers are flagged, not hidden; the quick mode says what it is.
func TestStagesShortAnswersAndQuick(t *testing.T) {
	_, url := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 200000,
		NaturalStop: func(int64) int { return 60 }})
	p := setup.DefaultStagesPlan()
	p.Quick, p.Users, p.Note = true, 2, "a note | with a pipe"
	res, err := RunStages(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Decode {
		if !d.Short || d.CompletionTokens != 60 || d.DecodeTPS == nil {
			t.Errorf("%+v", d)
		}
	}
	block := res.WikiBlock()
	for _, want := range []string{"QUICK RUN", "short answers: code 60, json 60, prose 60", "quick run, not protocol numbers", "a note / with a pipe"} {
		if !strings.Contains(block, want) {
			t.Errorf("wiki block lacks %q:\n%s", want, block)
		}
	}
}

// TestStagesProfilesFollowTheProtocol holds the plan's lengths against the
// cmp.wiki protocol's, written here as cmpbench.py 1.0 (the seed of
// docs/plans.md) has them, so a profile that drifts from the protocol
// fails: the FULL and QUICK dictionaries at the top of the script
// (decode_tokens, prefill_target, calib_target, multi_tokens,
// warm_tokens), the --users and --timeout defaults of its argument parser,
// and the 0.9 × decode_tokens below which stage_single calls an answer
// short.
func TestStagesProfilesFollowTheProtocol(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode string
		got  stagesProfile
		// The seed's numbers, in its dictionaries' order.
		decodeTokens, prefillTarget, calibTarget, multiTokens, warmTokens int
	}{
		{"full (FULL)", stagesFull, 1024, 8000, 1000, 512, 32},
		{"quick (QUICK)", stagesQuick, 128, 2000, 500, 64, 16},
	} {
		want := stagesProfile{decode: c.decodeTokens, prefill: c.prefillTarget, probe: c.calibTarget, users: c.multiTokens, warm: c.warmTokens}
		if c.got != want {
			t.Errorf("%s: got %+v, want the protocol's %+v", c.mode, c.got, want)
		}
	}
	if got, want := setup.DefaultUsers, 8; got != want { // --users default
		t.Errorf("setup.DefaultUsers %d, want the protocol's %d", got, want)
	}
	if got, want := setup.PlanTimeout, 900*time.Second; got != want { // --timeout default, seconds per request
		t.Errorf("setup.PlanTimeout %s, want the protocol's %s", got, want)
	}
	if got, want := results.ShortAnswerShare, 0.9; got != want { // stage_single's short-answer check
		t.Errorf("ShortAnswerShare %v, want the protocol's %v", got, want)
	}
}

// TestStagesQuickSendsItsProfile: a quick run asks for exactly the quick
// profile's lengths, as the server's record shows them (answers written
// to max_tokens): the warmup, three single-user answers, the probe and the
// prefill (one token each), the many-user warmup round and the measured
// round; and its document records those lengths.
func TestStagesQuickSendsItsProfile(t *testing.T) {
	srv, url := startSim(t, sim.Config{TokenInterval: 100 * time.Microsecond, PrefillRate: 1e6, NaturalStop: longAnswers, RecordTruth: true})
	p := setup.DefaultStagesPlan()
	p.Quick, p.Users = true, 2
	res, err := RunStages(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil || len(res.Failed()) > 0 {
		t.Fatalf("err %v, failed %v, warnings %v", err, res.Failed(), res.Warnings)
	}
	q := stagesQuick
	want := []int{q.warm, q.decode, q.decode, q.decode, 1, 1, q.warm, q.warm, q.users, q.users}
	slices.Sort(want)
	var got []int
	for _, tr := range srv.Truths() {
		got = append(got, tr.CompletionTokens)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the server was asked for answers of %v tokens, want %v", got, want)
	}
	// The probe is sized in characters at 4 per token (the tokenizer is
	// not known yet); the prefill in tokens, at the probe's ratio.
	if pf := res.Prefill; pf == nil || pf.PromptTokens == nil {
		t.Errorf("prefill %+v: no prompt length", pf)
	} else if pf.ProbeChars < 4*q.probe || pf.ProbeChars > 4*q.probe*11/10 || !within(float64(*pf.PromptTokens), float64(q.prefill), 0.02) {
		t.Errorf("a probe of %d characters and a prefill of %d tokens, want about %d and %d", pf.ProbeChars, *pf.PromptTokens, 4*q.probe, q.prefill)
	}
	s := res.Settings
	if got := (stagesProfile{decode: s.DecodeTokens, prefill: s.PrefillTargetTokens, probe: s.ProbeTargetTokens, users: s.UsersTokens, warm: s.WarmupTokens}); got != q {
		t.Errorf("the document records %+v, want %+v", got, q)
	}
	if u := res.Users; u == nil || u.MaxTokens != q.users || u.CompletionTokens != 2*q.users {
		t.Errorf("users stage %+v, want 2 answers of %d tokens", u, q.users)
	}
}

func TestStagesInterrupted(t *testing.T) {
	_, url := startSim(t, sim.Config{TokenInterval: 5 * time.Millisecond, PrefillRate: 200000, NaturalStop: longAnswers})
	ctx, cancel := context.WithCancel(context.Background())
	obs := Observer{Log: func(s string) {
		if strings.Contains(s, "json prompt") {
			cancel()
		}
	}}
	p := setup.DefaultStagesPlan()
	p.Quick = true
	res, err := RunStages(ctx, p, setup.Endpoint{URL: url}, obs)
	if !errors.Is(err, ErrInterrupted) || res == nil || res.Complete {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if len(res.Decode) != 1 || res.Decode[0].Prompt != "code" || res.Prefill != nil || res.Users != nil {
		t.Errorf("decode %+v prefill %+v users %+v", res.Decode, res.Prefill, res.Users)
	}
	if !strings.Contains(res.WikiBlock(), "INCOMPLETE") {
		t.Error("the wiki block of a stopped run does not say so")
	}
}

func TestStagesPlanValidate(t *testing.T) {
	t.Parallel()
	for _, p := range []setup.StagesPlan{{Users: -1}, {Users: 5000}, {Timeout: -time.Second}} {
		if _, err := RunStages(context.Background(), p, setup.Endpoint{URL: "http://127.0.0.1:1"}, Observer{}); err == nil {
			t.Errorf("%+v accepted", p)
		} else if pe := (*PlanError)(nil); !errors.As(err, &pe) {
			t.Errorf("%+v: %v is not a PlanError", p, err)
		}
	}
}

func TestPrefillTextIsDeterministic(t *testing.T) {
	t.Parallel()
	a, b := PrefillText("aaaa", 4000), PrefillText("bbbb", 4000)
	body := func(s string) string { return s[strings.Index(s, "."):] }
	if body(a) != body(b) || a == b {
		t.Error("the text after the reference line must be the same, the reference different")
	}
	long := PrefillText("aaaa", 8000)
	cut := strings.TrimSuffix(a, prefillQuestion)
	if !strings.HasPrefix(long, cut) || len(long) < 8000 || len(a) < 4000 || len(a) > 4000+300 {
		t.Errorf("a longer text must extend a shorter one: %d, %d chars", len(a), len(long))
	}
	if strings.Contains(long, "Request ") {
		t.Error("the text holds the Kovara prompt marker")
	}
}

func TestWikiBlockLayout(t *testing.T) {
	t.Parallel()
	r := &results.StagesResult{
		PlanVersion: 1, Complete: true, TestedOn: "2026-05-01",
		Settings: results.StagesSettings{DecodeTokens: 1024, Thinking: "off", Client: "kovara-desktop", ClientVersion: "1.2.3", SpecDecode: "MTP 3"},
		Engine:   results.Detection{Family: results.FamilySGLang, Version: "0.5.2", ContextLength: 131072},
		Compat:   results.PlanCompat{ThinkingOff: true},
		Decode: []results.DecodeStage{
			{Prompt: "code", DecodeTPS: ptr(41.25)}, {Prompt: "json", DecodeTPS: ptr(40.0)}, {Prompt: "prose", DecodeTPS: ptr(39.94)},
		},
		Prefill:      &results.PrefillStage{PromptTokens: ptr(8012), PrefillTPS: ptr(3118.0)},
		Users:        &results.UsersStage{Users: 8, MaxTokens: 512, AggregateTPS: ptr(280.55)},
		SpecObserved: &results.SpecWindow{Drafts: 10, MeanAcceptanceLength: ptr(2.412)},
		TokenSource:  results.TokensUsage,
	}
	r.BenchNote = r.DefaultBenchNote()
	want := `<!-- Kovara Desktop three-stage plan 1 (after the cmp.wiki benchmark protocol; not cmpbench output), kovara-desktop 1.2.3 -->
|decode_single=41.2
|decode_agg=280.6
|agg_users=8
|prefill_tps=3118
|prefill_prompt=8,012 tokens
|context_tokens=131072
|engine_family=SGLang
|engine_version=0.5.2
|spec_decode=MTP 3 (mean acceptance length 2.41)
|bench_note=Kovara Desktop three-stage plan 1: temperature 0, thinking off, 1,024-token answers with natural stop, code prompt (json 40.0, prose 39.9); 8 users at 512 tokens; cold prefill of 8,012 tokens
|tested_on=2026-05-01
`
	if got := r.WikiBlock(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
