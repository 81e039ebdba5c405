package compare

import (
	"fmt"

	"github.com/kovara/desktop/engine/results"
)

// AnswersMetrics are what an answers comparison measured, each a row of
// the metric × run table. Neutral: how far two pairs of settings drift is
// shown side by side, never marked better or worse, as no noise of the
// positions read stands behind a mark here (each result's own floor
// judged its drift).
var AnswersMetrics = []DocMetric[results.AnswersResult]{
	{"same_top", "same top token", "%", Neutral, answersFigure(func(f *results.AnswersFigures) float64 { return 100 * f.SameTop })},
	{"kl_mean", "KL divergence, mean", "nats", Neutral, answersFigure(func(f *results.AnswersFigures) float64 { return f.KLMean })},
	{"kl_p99", "KL divergence, p99", "nats", Neutral, answersFigure(func(f *results.AnswersFigures) float64 { return f.KLP99 })},
	{"ref_prob", "baseline token's probability", "%", Neutral, answersFigure(func(f *results.AnswersFigures) float64 { return 100 * f.RefProb })},
	{"floor_kl_mean", "floor: KL divergence, mean", "nats", Neutral, func(r *results.AnswersResult) (float64, bool) {
		if r.Floor == nil {
			return 0, false
		}
		return r.Floor.KLMean, true
	}},
}

func answersFigure(get func(*results.AnswersFigures) float64) func(*results.AnswersResult) (float64, bool) {
	return func(r *results.AnswersResult) (float64, bool) {
		if r.Figures == nil {
			return 0, false
		}
		return get(r.Figures), true
	}
}

// AnswersTable is a metric × run table of answers comparisons.
func AnswersTable(docs []*results.AnswersResult, labels []string) []Row {
	return docTable(docs, labels, AnswersMetrics)
}

// AnswersVerdict holds the comparisons' conditions alike: the prompt
// set, the positions read, the top list asked and the baseline's model
// (a drift is from a baseline; two baselines measure two things).
func AnswersVerdict(docs []*results.AnswersResult) (bool, []string) {
	return likeForLike(docs, func(r *results.AnswersResult) []setting {
		s := r.Settings
		return []setting{{"prompt set", s.PromptSet}, {"prompts", fmt.Sprint(s.Prompts)}, {"positions", fmt.Sprint(s.Positions)},
			{"top tokens asked", fmt.Sprint(s.TopK)}, {"baseline", results.ModelName(r.Baseline.Model)}}
	})
}
