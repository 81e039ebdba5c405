package ui

import "fmt"

// readParsed reads a field of a list (levels, depths) with parse into a
// plan's field, and says what is wrong in errs, under the field's name,
// as readCount does for a count.
func readParsed[T any](e *formEntry, field string, parse func(string) (T, error), v *T, errs []error) []error {
	var err error
	if *v, err = parse(e.Text); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", field, err))
	}
	return errs
}
