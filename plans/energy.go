package plans

import "github.com/kovara/desktop/engine/results"

// Energy is d's energy and cost table and the notes under it (issue #49),
// the same for the app's result view, the CLI and every report: nil when
// its run read neither a GPU source nor a wall plug, or its plan records
// no windows. price is the person's tariff; nil shows no cost.
func Energy(d Doc, price *results.Price) (*results.Table, []string) {
	p, ok := Powered(d)
	if !ok {
		return nil, nil
	}
	t := results.EnergyTable(p, price)
	if t == nil {
		return nil, nil
	}
	return t, results.EnergyNotes(p, price)
}

// Hardware is what d's GPUs and server machine did in each measured
// window (issue #50; results.HardwareTable), the same for the app's
// result view, the CLI and every report: nil when its run read no GPU
// source, or one that said none of it.
func Hardware(d Doc) *results.Table {
	p, ok := Powered(d)
	if !ok {
		return nil
	}
	return results.HardwareTable(p)
}

// Powered is d's result as one whose windows a source may have read.
func Powered(d Doc) (results.Powered, bool) {
	if k, ok := d.(Kovara); ok {
		return k.File, k.File != nil
	}
	if r, ok := d.(interface {
		powered() (results.Powered, bool)
	}); ok {
		return r.powered()
	}
	return nil, false
}

// powered is the result as a results.Powered, when its plan records
// windows.
func (d docBase[T, R]) powered() (results.Powered, bool) {
	p, ok := any(d.Result).(results.Powered)
	return p, ok
}
