package results

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// shape is the set of JSON keys a Go type reads, derived from its struct
// tags, so the publish check and the decoder agree with the Go types.
type shape struct {
	fields map[string]*shape // struct: known keys
	elem   *shape            // slice or map: the element's shape
	isMap  bool              // map: keys are free, values have elem's shape
}

func shapeOf(t reflect.Type) *shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		s := &shape{fields: map[string]*shape{}}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			s.fields[name] = shapeOf(f.Type)
		}
		return s
	case reflect.Slice, reflect.Array:
		return &shape{elem: shapeOf(t.Elem())}
	case reflect.Map:
		return &shape{elem: shapeOf(t.Elem()), isMap: true}
	}
	return nil // a scalar
}

func (s *shape) keys() []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.fields))
	for k := range s.fields {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	fileShape = sync.OnceValue(func() *shape { return shapeOf(reflect.TypeFor[File]()) })
	runShape  = sync.OnceValue(func() *shape { return shapeOf(reflect.TypeFor[Run]()) })
)

// checkCaseVariants refuses keys that differ from a known key only in
// letter case. encoding/json matches such keys to the Go field, while the
// schema (which is case-sensitive) treats them as unknown extras, so the
// two would read different files; inside local, where extras are allowed,
// that is the only place such a key can survive validation.
func checkCaseVariants(v any, s *shape, path []string) error {
	if s == nil {
		return nil
	}
	switch t := v.(type) {
	case map[string]any:
		if s.isMap {
			for k, child := range t {
				if err := checkCaseVariants(child, s.elem, append(path[:len(path):len(path)], k)); err != nil {
					return err
				}
			}
			return nil
		}
		if s.fields == nil {
			return nil
		}
		for _, k := range sortedKeys(t) {
			if sub, ok := s.fields[k]; ok {
				if err := checkCaseVariants(t[k], sub, append(path[:len(path):len(path)], k)); err != nil {
					return err
				}
				continue
			}
			for _, known := range s.keys() {
				if strings.EqualFold(k, known) {
					return &ValidationError{Violations: []Violation{{
						Pointer: pointer(path),
						Message: fmt.Sprintf("field %q differs from the known field %q only in letter case", k, known),
					}}}
				}
			}
		}
	case []any:
		for i, child := range t {
			if err := checkCaseVariants(child, s.elem, append(path[:len(path):len(path)], fmt.Sprint(i))); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
