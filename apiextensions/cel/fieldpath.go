package cel

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apiextensions/schema"
)

// FieldPathOption tunes ValidFieldPath.
type FieldPathOption func(*fieldPathOptions)

type fieldPathOptions struct {
	allowArrayNotation bool
}

// WithFieldPathAllowArrayNotation allows or forbids the ['key'] notation
// (allowed by default). Selectable fields forbid it.
func WithFieldPathAllowArrayNotation(allow bool) FieldPathOption {
	return func(o *fieldPathOptions) { o.allowArrayNotation = allow }
}

var errNotAField = errors.New("does not refer to a valid field")

// ValidFieldPath checks that path, a relative JSON path of property and map
// key accessors like `.spec.ports['http']`, leads through s to an existing
// field, and returns it as a field.Path with the schema it leads to. List
// indexes are not accessors: only properties and map keys are. The errors
// read as kube's.
func ValidFieldPath(path string, s *schema.Structural, opts ...FieldPathOption) (*field.Path, *schema.Structural, error) {
	o := fieldPathOptions{allowArrayNotation: true}
	for _, opt := range opts {
		opt(&o)
	}
	toks := tokenizeFieldPath(path)
	var out *field.Path
	next := func() (string, bool) {
		if len(toks) == 0 {
			return "", false
		}
		t := toks[0]
		toks = toks[1:]
		return t, true
	}
	step := func(name string) error {
		if s == nil {
			return errNotAField
		}
		switch {
		case s.Properties != nil:
			out = out.Child(name)
			p, ok := s.Properties[name]
			if !ok {
				return errNotAField
			}
			s = &p
		case s.HasAdditionalProperties():
			out = out.Key(name)
			s = s.AdditionalProperties
		default:
			return errNotAField
		}
		return nil
	}
	for {
		tok, ok := next()
		if !ok {
			return out, s, nil
		}
		switch tok {
		case "[":
			if !o.allowArrayNotation {
				return nil, nil, errors.New("array notation is not allowed")
			}
			tok, ok = next()
			if !ok {
				return nil, nil, errors.New("unexpected end of JSON path")
			}
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
			tok, ok = next()
			if !ok {
				return nil, nil, errors.New("unexpected end of JSON path")
			}
			if tok != "]" {
				return nil, nil, fmt.Errorf("expected ] but got %s", tok)
			}
		case ".":
			tok, ok = next()
			if !ok {
				return nil, nil, errors.New("unexpected end of JSON path")
			}
			if err := step(tok); err != nil {
				return nil, nil, err
			}
		default:
			return nil, nil, fmt.Errorf("expected [ or . but got: %s", tok)
		}
	}
}

// tokenizeFieldPath splits a path into the delimiters '.', '[' and ']', each
// its own token, and the text between them. A token starting with a single
// quote runs to the next quote not preceded by a backslash, delimiters
// included (or to the end of the path).
func tokenizeFieldPath(path string) []string {
	var toks []string
	for len(path) > 0 {
		if path[0] == '\'' {
			end := len(path)
			for i := 1; i < len(path); i++ {
				if path[i] == '\'' && path[i-1] != '\\' {
					end = i + 1
					break
				}
			}
			toks = append(toks, path[:end])
			path = path[end:]
			continue
		}
		i := strings.IndexAny(path, ".[]")
		switch {
		case i == 0:
			toks = append(toks, path[:1])
			path = path[1:]
		case i < 0:
			toks = append(toks, path)
			path = ""
		default:
			toks = append(toks, path[:i])
			path = path[i:]
		}
	}
	return toks
}

// unquoteSingle resolves the backslash escapes of a single-quoted CEL
// string: \a \b \f \n \r \t \v \' and \\.
func unquoteSingle(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		// a backslash escapes the next character, but not a line break
		if c != '\\' || i+1 >= len(s) || s[i+1] == '\n' {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\'':
			b.WriteByte('\'')
		case '\\':
			b.WriteByte('\\')
		default:
			_, n := utf8.DecodeRuneInString(s[i:])
			return "", fmt.Errorf("invalid escape char %s", s[i-1:i+n])
		}
	}
	return b.String(), nil
}
