// Package drift measures how far one setting's answer distribution is
// from a baseline's, position by position of the baseline's own answer
// (docs/method.md, "Did it change the answers?"): how often both
// settings' most likely token is the same, the KL divergence of the
// other setting from the baseline (a lower bound from the servers' top-k
// lists), and the probability the other setting gives the baseline's
// token; and whether that is beyond the floor the baseline measures
// against itself. Plain arithmetic on what servers said: the requests
// that read the distributions live in the engine.
package drift

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/stats"
)

// Alt is one token of a position's top list: the server's token id and
// its natural-log probability.
type Alt struct {
	ID      int     `json:"id"`
	LogProb float64 `json:"logprob"`
}

// Position is a server's top list at one position of an answer, most
// likely first as the server sent it (Top re-sorts where it did not).
type Position []Alt

// Top is the most likely token of p; ok is false for an empty list.
func (p Position) Top() (Alt, bool) {
	if len(p) == 0 {
		return Alt{}, false
	}
	best := p[0]
	for _, a := range p[1:] {
		if a.LogProb > best.LogProb {
			best = a
		}
	}
	return best, true
}

// prob is the probability p lists for token id; ok is false when id is
// not in the list.
func (p Position) prob(id int) (float64, bool) {
	for _, a := range p {
		if a.ID == id {
			return math.Exp(a.LogProb), true
		}
	}
	return 0, false
}

// KLLowerBound is the KL divergence KL(P‖Q) of the other setting's
// distribution Q from the baseline's P, in nats, as far as their top
// lists tell it: the tokens both lists hold, each its own outcome, and
// every other token merged into one outcome whose probability under each
// is the mass that setting's listed shared tokens leave (1 − Σ). Every
// probability used is one the servers said, so it is the exact KL of a
// coarser view of the two distributions, and by the data-processing
// inequality never above the true KL: it errs low, by what the merged
// outcome hides (a baseline token missing from Q's list, the shape of the
// tails). With both lists of 20 on a peaked distribution that is little;
// with lists of 1 it sees only whether the top token's probability
// moved.
func KLLowerBound(p, q Position) float64 {
	var kl, pShared, qShared float64
	for _, a := range p {
		qp, ok := q.prob(a.ID)
		if !ok {
			continue
		}
		pp := math.Exp(a.LogProb)
		pShared += pp
		qShared += qp
		kl += term(pp, qp)
	}
	kl += term(1-pShared, 1-qShared)
	if kl < roundoff {
		return 0 // the same lists, to the last bits of their sums
	}
	return kl
}

// roundoff is below any KL a setting makes: identical lists summed in
// another order (a server's ties at the list's end) leave about 1e-14.
const roundoff = 1e-10

// term is p·ln(p/q), 0 where p is 0 (or rounds below it), and large but
// finite where q is 0 and p is not (a server's rounding: a token it
// listed at log-probability −inf, or shared mass summing past 1).
func term(p, q float64) float64 {
	const tiny = 1e-12
	if p <= tiny {
		return 0
	}
	return p * math.Log(p/math.Max(q, tiny))
}

// Figures are one setting's distributions against the baseline's over
// the positions of the baseline's answers.
type Figures struct {
	Positions int `json:"positions"`
	// SameTop is the share of positions where both settings' most likely
	// token is the same (exact: both lists hold their top token).
	SameTop float64 `json:"same_top"`
	// KLMean and KLP99 are the mean and the 99th percentile over
	// positions of KLLowerBound, in nats.
	KLMean float64 `json:"kl_mean"`
	KLP99  float64 `json:"kl_p99"`
	// RefProb is the mean probability the other setting gives the
	// baseline's own token at each position; a token missing from its
	// list counts 0 (it errs low, by at most its smallest listed
	// probability there).
	RefProb float64 `json:"ref_prob"`
	// Unlisted counts the positions whose baseline token the other
	// setting's list did not hold.
	Unlisted int `json:"unlisted"`
}

// Measured is Figures with the per-position values they came from, for
// the floor's judgement (Beyond) and the local record.
type Measured struct {
	Figures
	KL   []float64 `json:"kl"`
	Same []bool    `json:"same"`
}

// ErrNoPositions says there was nothing to compare.
var ErrNoPositions = errors.New("no positions to compare")

// Compare reads the other setting's top lists against the baseline's at
// the positions of the baseline's answer, ref its tokens (the baseline's
// own choice at each position, at temperature 0 its top token). The
// three must be as long as one another; an empty list at a position is
// an error of the server that sent it, not a difference.
func Compare(base, other []Position, ref []int) (Measured, error) {
	if len(base) != len(other) || len(base) != len(ref) {
		return Measured{}, fmt.Errorf("the baseline has %d positions and %d tokens, the other setting %d positions", len(base), len(ref), len(other))
	}
	if len(base) == 0 {
		return Measured{}, ErrNoPositions
	}
	m := Measured{KL: make([]float64, len(base)), Same: make([]bool, len(base))}
	m.Positions = len(base)
	same, refSum := 0, 0.0
	for i := range base {
		bt, ok1 := base[i].Top()
		ot, ok2 := other[i].Top()
		if !ok1 || !ok2 {
			return Measured{}, fmt.Errorf("position %d has no top list from the %s", i+1, map[bool]string{true: "other setting", false: "baseline"}[ok1])
		}
		if bt.ID == ot.ID {
			same++
			m.Same[i] = true
		}
		m.KL[i] = KLLowerBound(base[i], other[i])
		if p, ok := other[i].prob(ref[i]); ok {
			refSum += p
		} else {
			m.Unlisted++
		}
	}
	n := float64(len(base))
	m.SameTop = float64(same) / n
	m.RefProb = refSum / n
	m.KLMean = mean(m.KL)
	sorted := slices.Clone(m.KL)
	slices.Sort(sorted)
	m.KLP99 = stats.Quantile(sorted, 0.99)
	return m, nil
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// zBeyond is how many standard errors a setting's figure must stand
// from the floor's to be called a drift: one-sided, about 1 in 200 by
// chance (2.58), as the settings comparison's own intervals.
const zBeyond = 2.58

// Beyond says whether m drifts beyond floor, the baseline read against
// itself (a second reading of the same setting: GPU kernels and batch
// shapes are not exactly deterministic): its share of the same top token
// lower, or its mean KL higher, by more than zBeyond standard errors of
// the difference, the positions taken as independent. Against a
// deterministic server (a CPU: its floor is exactly 0) a few changed
// positions among hundreds are still within it: the figures are the
// prompts' sample, and a handful of positions does not tell a setting
// that drifts. sameTop and kl say which figure moved.
func Beyond(m, floor Measured) (sameTop, kl bool) {
	if m.Positions == 0 || floor.Positions == 0 {
		return false, false
	}
	// Same top token: two proportions, the pooled standard error.
	nm, nf := float64(m.Positions), float64(floor.Positions)
	pool := (m.SameTop*nm + floor.SameTop*nf) / (nm + nf)
	se := math.Sqrt(pool * (1 - pool) * (1/nm + 1/nf))
	d := floor.SameTop - m.SameTop
	sameTop = d > 0 && (se == 0 || d > zBeyond*se)
	// KL: Welch's standard error of the difference of means.
	vm, vf := variance(m.KL), variance(floor.KL)
	seKL := math.Sqrt(vm/nm + vf/nf)
	dk := m.KLMean - floor.KLMean
	kl = dk > 0 && (seKL == 0 || dk > zBeyond*seKL)
	return sameTop, kl
}

func variance(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	mu, s := mean(xs), 0.0
	for _, x := range xs {
		s += (x - mu) * (x - mu)
	}
	return s / float64(len(xs)-1)
}

// Mark is one published figure of the ruler: a setting of a well-known
// model against its full-precision weights.
type Mark struct {
	Name    string  // "Q4_K_M"
	KL      float64 // mean KL divergence, nats a token
	SameTop float64 // share of the same top token
}

// RulerModel is the model the ruler's marks were measured on, and
// RulerSource where they were published.
const (
	RulerModel  = "Llama 3 8B"
	RulerSource = "llama.cpp's examples/perplexity/README.md, \"LLaMA 2 vs. LLaMA 3 Quantization comparison\" (revision f364eb6f, CUDA, each quantisation against FP16 on Wikitext) and \"LLaMA 3 BF16 vs. FP16 comparison\" (revision 83330d8c, CPU)"
)

// Ruler is the marks, least drift first: what each costs Llama 3 8B by
// llama-perplexity --kl-divergence over the whole vocabulary.
var Ruler = []Mark{
	{"BF16 against FP16", 0.00002515, 0.99739},
	{"Q8_0", 0.001355, 0.97674},
	{"Q6_K", 0.005452, 0.96031},
	{"Q4_K_M", 0.031273, 0.91901},
	{"Q2_K", 0.445132, 0.71138},
}

// RulerWords says where a mean KL divergence stands on the ruler: "about
// what Q8_0 costs Llama 3 8B (0.0014)", "between what Q6_K (0.0055) and
// Q4_K_M (0.031) cost Llama 3 8B", "less than BF16 against FP16 costs
// Llama 3 8B (2.5e-05)". About is within a factor of 1.5 of a mark. The
// figures here are lower bounds from top lists over a few hundred
// tokens, the marks the full KL over Wikitext: where the two differ a
// little, the setting is, if anything, further along than it reads.
func RulerWords(kl float64) string {
	for _, m := range Ruler {
		if kl >= m.KL/1.5 && kl <= m.KL*1.5 {
			return fmt.Sprintf("about what %s costs %s (%s)", m.Name, RulerModel, results.NatsText(m.KL))
		}
	}
	if first := Ruler[0]; kl < first.KL {
		return fmt.Sprintf("less than %s costs %s (%s)", first.Name, RulerModel, results.NatsText(first.KL))
	}
	if last := Ruler[len(Ruler)-1]; kl > last.KL {
		return fmt.Sprintf("more than %s costs %s (%s)", last.Name, RulerModel, results.NatsText(last.KL))
	}
	for i := 1; i < len(Ruler); i++ {
		lo, hi := Ruler[i-1], Ruler[i]
		if kl < hi.KL {
			return fmt.Sprintf("between what %s (%s) and %s (%s) cost %s", lo.Name, results.NatsText(lo.KL), hi.Name, results.NatsText(hi.KL), RulerModel)
		}
	}
	return ""
}
