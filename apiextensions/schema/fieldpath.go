package schema

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidFieldPath resolves the fieldPath of an x-kubernetes-validations
// rule (like .spec.replicas, .spec['a.b'] or .spec.labels['x']) against s,
// returning it as a field path and the schema it names. As in kube,
// bracket notation takes single-quoted strings only (no indexes), and a
// name must be a property of an object with properties, or any key of an
// object with additionalProperties.
func ValidFieldPath(jsonPath string, s *Structural) (*field.Path, *Structural, error) {
	var p *field.Path
	step := func(name string) error {
		switch {
		case s == nil:
			return errors.New("does not refer to a valid field")
		case s.Properties != nil:
			prop, ok := s.Properties[name]
			if !ok {
				return errors.New("does not refer to a valid field")
			}
			p = p.Child(name)
			s = &prop
		case s.HasAdditionalProperties():
			p = p.Key(name)
			s = s.AdditionalProperties
		default:
			return errors.New("does not refer to a valid field")
		}
		return nil
	}

	toks := tokenizeFieldPath(jsonPath)
	for i := 0; i < len(toks); i++ {
		switch toks[i] {
		case "[":
			i++
			if i >= len(toks) {
				return nil, nil, errors.New("unexpected end of JSON path")
			}
			tok := toks[i]
			if len(tok) < 2 || tok[0] != '\'' || tok[len(tok)-1] != '\'' {
				return nil, nil, fmt.Errorf("expected single quoted string but got %s", tok)
			}
			name, err := unquoteSingle(tok[1 : len(tok)-1])
			if err != nil {
				return nil, nil, fmt.Errorf("invalid string literal: %w", err)
			}
			if err := step(name); err != nil {
				return nil, nil, err
			}
			i++
			if i >= len(toks) {
				return nil, nil, errors.New("unexpected end of JSON path")
			}
			if toks[i] != "]" {
				return nil, nil, fmt.Errorf("expected ] but got %s", toks[i])
			}
		case ".":
			i++
			if i >= len(toks) {
				return nil, nil, errors.New("unexpected end of JSON path")
			}
			if err := step(toks[i]); err != nil {
				return nil, nil, err
			}
		default:
			return nil, nil, fmt.Errorf("expected [ or . but got: %s", toks[i])
		}
	}
	return p, s, nil
}

// tokenizeFieldPath splits a path into ".", "[", "]", single-quoted
// strings (kept with their quotes) and the names between them.
func tokenizeFieldPath(s string) []string {
	var toks []string
	for len(s) > 0 {
		if s[0] == '\'' {
			end := -1
			for i := 1; i < len(s); i++ {
				if s[i] == '\'' && s[i-1] != '\\' {
					end = i
					break
				}
			}
			if end < 0 { // unterminated: the rest is one token
				toks = append(toks, s)
				break
			}
			toks = append(toks, s[:end+1])
			s = s[end+1:]
			continue
		}
		if i := strings.IndexAny(s, ".[]"); i == 0 {
			toks = append(toks, s[:1])
			s = s[1:]
		} else if i > 0 {
			toks = append(toks, s[:i])
			s = s[i:]
		} else {
			toks = append(toks, s)
			break
		}
	}
	return toks
}

var escapeSeq = regexp.MustCompile(`\\.`)

// unquoteSingle resolves the escapes CEL allows in single-quoted strings.
func unquoteSingle(s string) (string, error) {
	var err error
	out := escapeSeq.ReplaceAllStringFunc(s, func(m string) string {
		switch m[1] {
		case 'a':
			return "\a"
		case 'b':
			return "\b"
		case 'f':
			return "\f"
		case 'n':
			return "\n"
		case 'r':
			return "\r"
		case 't':
			return "\t"
		case 'v':
			return "\v"
		case '\'':
			return "'"
		case '\\':
			return "\\"
		}
		err = fmt.Errorf("invalid escape char %s", m)
		return ""
	})
	return out, err
}
