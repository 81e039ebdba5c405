package hw

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// plistMaxDepth bounds how deep a plist may nest (powermetrics' deepest,
// processor → clusters → cpus → dvfm_states, is 7 below the top).
const plistMaxDepth = 32

// decodePlist reads one XML property list (Apple's plist 1.0) into Go
// values: a dict is map[string]any, an array []any, an integer or a real
// float64, a string or a date string, true and false bool, data []byte
// left undecoded. It reads the first value inside <plist> and refuses a
// document that ends before its last closing tag (a truncated sample).
func decodePlist(doc []byte) (any, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, errors.New("no <plist> element")
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "plist" {
				return nil, fmt.Errorf("<%s> where <plist> was expected", se.Name.Local)
			}
			break
		}
	}
	var v any
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, plistCut(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if v != nil {
				return nil, errors.New("a plist with more than one top value")
			}
			if v, err = plistValue(d, t, 0); err != nil {
				return nil, err
			}
		case xml.EndElement: // </plist>
			if v == nil {
				return nil, errors.New("an empty plist")
			}
			return v, nil
		}
	}
}

// plistCut words a decoder error: the end of input is a cut document.
func plistCut(err error) error {
	var se *xml.SyntaxError
	if errors.Is(err, io.EOF) || errors.As(err, &se) && strings.Contains(se.Msg, "unexpected EOF") {
		return errors.New("a plist cut short")
	}
	return fmt.Errorf("not a readable plist (%v)", err)
}

// plistValue reads the value that start opens, through its end tag.
func plistValue(d *xml.Decoder, start xml.StartElement, depth int) (any, error) {
	if depth > plistMaxDepth {
		return nil, errors.New("a plist nested too deep")
	}
	switch start.Name.Local {
	case "dict":
		m := map[string]any{}
		key, haveKey := "", false
		for {
			tok, err := d.Token()
			if err != nil {
				return nil, plistCut(err)
			}
			switch t := tok.(type) {
			case xml.EndElement:
				if haveKey {
					return nil, fmt.Errorf("the key %q has no value", key)
				}
				return m, nil
			case xml.StartElement:
				if t.Name.Local == "key" {
					if haveKey {
						return nil, fmt.Errorf("the key %q has no value", key)
					}
					if key, err = plistText(d); err != nil {
						return nil, err
					}
					haveKey = true
					continue
				}
				if !haveKey {
					return nil, fmt.Errorf("a <%s> without its key", t.Name.Local)
				}
				v, err := plistValue(d, t, depth+1)
				if err != nil {
					return nil, err
				}
				m[key], haveKey = v, false
			}
		}
	case "array":
		var a []any
		for {
			tok, err := d.Token()
			if err != nil {
				return nil, plistCut(err)
			}
			switch t := tok.(type) {
			case xml.EndElement:
				return a, nil
			case xml.StartElement:
				v, err := plistValue(d, t, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
		}
	case "true", "false":
		if err := d.Skip(); err != nil {
			return nil, plistCut(err)
		}
		return start.Name.Local == "true", nil
	case "integer", "real":
		s, err := plistText(d)
		if err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, fmt.Errorf("<%s>%s</%s> is not a number", start.Name.Local, s, start.Name.Local)
		}
		return f, nil
	case "string", "date", "data":
		return plistText(d)
	default:
		return nil, fmt.Errorf("<%s> is not a plist value", start.Name.Local)
	}
}

// plistText reads character data up to the current element's end tag.
func plistText(d *xml.Decoder) (string, error) {
	var b strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			return "", plistCut(err)
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.EndElement:
			return b.String(), nil
		case xml.StartElement:
			return "", fmt.Errorf("<%s> inside a text value", t.Name.Local)
		}
	}
}
