package report

import (
	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// answersCharts are an answers comparison's charts (chart.AnswersCharts,
// as the app's view draws them), or why there are none.
func answersCharts(d plans.Doc, name string) []chartDrawing {
	r := plans.ResultOf[*results.AnswersResult](d)
	if r.Figures == nil {
		return []chartDrawing{{title: "KL divergence by prompt kind", none: "No charts: the answers could not be compared."}}
	}
	return specsOf(chart.AnswersCharts(r, chart.Light()), name)
}
