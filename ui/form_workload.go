package ui

import (
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/setup"
)

// sharedLoadFields are a shared system prompt, its groups and the turns
// of each user's conversation (setup.Workload), the same three fields in
// the Kovara form's advanced part and the rate form's own load.
type sharedLoadFields struct {
	prefixEntry *formEntry
	groupsEntry *formEntry
	turnsEntry  *formEntry
}

// newSharedLoadFields makes the fields; none says what the requests are
// without a shared prefix.
func newSharedLoadFields(s *BenchmarkScreen, none string) sharedLoadFields {
	f := sharedLoadFields{
		prefixEntry: s.entry("", optionalCountFrom("shared prefix", 0)),
		groupsEntry: s.entry("", optionalCountFrom("prefix groups", 1)),
		turnsEntry:  s.entry("", optionalCountFrom("turns per conversation", 1)),
	}
	f.prefixEntry.SetPlaceHolder(none)
	f.groupsEntry.SetPlaceHolder("1: every user shares one")
	f.turnsEntry.SetPlaceHolder("1: one question a request")
	return f
}

// items are the fields in a form, their labels no wider than the page's
// label column already is, so no other form's fields move.
func (f sharedLoadFields) items() []*widget.FormItem {
	return []*widget.FormItem{
		widget.NewFormItem("Shared prefix (tokens)", f.prefixEntry),
		widget.NewFormItem("Prefix groups", f.groupsEntry),
		widget.NewFormItem("Turns per conversation", f.turnsEntry),
	}
}

// kept is the workload's fields as kept for the next start.
func (f sharedLoadFields) kept() []keptField {
	return []keptField{keptEntry("shared_prefix", f.prefixEntry), keptEntry("prefix_groups", f.groupsEntry), keptEntry("turns", f.turnsEntry)}
}

// read puts the fields into w; empty fields leave it the synthetic
// prompt's.
func (f sharedLoadFields) read(w *setup.Workload, errs []error) []error {
	for _, c := range []struct {
		e     *formEntry
		field string
		min   int
		n     *int
	}{
		{f.prefixEntry, "shared prefix", 0, &w.SharedPrefix},
		{f.groupsEntry, "prefix groups", 1, &w.PrefixGroups},
		{f.turnsEntry, "turns per conversation", 1, &w.Turns},
	} {
		if err := readOptionalCount(c.e.Text, c.field, c.min, c.n); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
