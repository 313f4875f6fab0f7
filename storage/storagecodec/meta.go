package storagecodec

import (
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// typeMetaFactory finds apiVersion and kind in a JSON object as
// apimachinery's DefaultMetaFactory does, without decoding the whole
// document with encoding/json first: it walks the top-level keys and only
// steps over the other values. That first pass was a fifth of decoding a
// stored CRD. Anything it is not sure of (escapes, keys that match only
// case-insensitively, values that are not plain strings, malformed input)
// is left to DefaultMetaFactory, so the answers and errors are the same.
type typeMetaFactory struct{}

var _ json.MetaFactory = typeMetaFactory{}

func (typeMetaFactory) Interpret(data []byte) (*schema.GroupVersionKind, error) {
	apiVersion, kind, ok := scanTypeMeta(data)
	if !ok {
		return json.DefaultMetaFactory.Interpret(data)
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	return &schema.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: kind}, nil
}

// scanTypeMeta returns the last apiVersion and kind of the object data
// (encoding/json keeps the last of duplicate keys); false when it cannot
// tell for sure.
func scanTypeMeta(data []byte) (apiVersion, kind string, ok bool) {
	s := scanner{data: data}
	if !s.consume('{') {
		return "", "", false
	}
	if s.consume('}') {
		return "", "", s.atEnd()
	}
	for {
		key, plain := s.str()
		if !plain || !s.consume(':') {
			return "", "", false
		}
		var target *string
		switch {
		case key == "apiVersion":
			target = &apiVersion
		case key == "kind":
			target = &kind
		case strings.EqualFold(key, "apiVersion") || strings.EqualFold(key, "kind"):
			return "", "", false // encoding/json would match it
		}
		if target != nil {
			v, plain := s.str()
			if !plain {
				return "", "", false
			}
			*target = v
		} else if start := s.i; !s.skipValue() || s.i == start {
			return "", "", false
		}
		if s.consume(',') {
			continue
		}
		if s.consume('}') {
			return apiVersion, kind, s.atEnd()
		}
		return "", "", false
	}
}

type scanner struct {
	data []byte
	i    int
}

func (s *scanner) skipSpace() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume steps over c after white space, if it is there.
func (s *scanner) consume(c byte) bool {
	s.skipSpace()
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) atEnd() bool {
	s.skipSpace()
	return s.i == len(s.data)
}

// str reads a string without escapes, control characters or invalid
// UTF-8 (which encoding/json would rewrite); false for anything else.
func (s *scanner) str() (string, bool) {
	if !s.consume('"') {
		return "", false
	}
	start := s.i
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			v := s.data[start:s.i]
			s.i++
			return string(v), utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return "", false
		}
		s.i++
	}
	return "", false
}

// skipValue steps over one value. It checks strings and the nesting of
// brackets, not the rest of JSON's grammar: on malformed data that gets
// this far, the decoder that runs after Interpret fails (with its own
// message rather than DefaultMetaFactory's).
func (s *scanner) skipValue() bool {
	s.skipSpace()
	depth := 0
	for s.i < len(s.data) {
		switch c := s.data[s.i]; c {
		case '"':
			if !s.skipString() {
				return false
			}
			if depth == 0 {
				return true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return true // the end of the enclosing object: an empty value
			}
			depth--
			if depth == 0 {
				s.i++
				return true
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return true
			}
		}
		s.i++
	}
	return depth == 0
}

// skipString steps over a string, escapes included.
func (s *scanner) skipString() bool {
	s.i++ // the opening quote
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			s.i++
			return true
		}
		s.i++
	}
	return false
}
