package v1

import (
	"bytes"
	"errors"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// The wire forms below are kube's: each "or" type is written as whichever of
// its alternatives is set and read back by looking at the first byte of the
// value. Nested schemas are decoded with apimachinery's JSON rules (field
// names are case-sensitive and integers stay integers), like the objects
// around them.

var (
	literalNull  = []byte("null")
	literalTrue  = []byte("true")
	literalFalse = []byte("false")
)

// MarshalJSON writes the raw value, or null when there is none.
func (s JSON) MarshalJSON() ([]byte, error) {
	if len(s.Raw) == 0 {
		return literalNull, nil
	}
	return s.Raw, nil
}

// UnmarshalJSON keeps a copy of the raw value. null leaves s unchanged.
func (s *JSON) UnmarshalJSON(data []byte) error {
	if len(data) == 0 || bytes.Equal(data, literalNull) {
		return nil
	}
	s.Raw = append(s.Raw[:0], data...)
	return nil
}

// MarshalJSON writes the schema if there is one, else true or false.
func (s JSONSchemaPropsOrBool) MarshalJSON() ([]byte, error) {
	if s.Schema != nil {
		return utiljson.Marshal(s.Schema)
	}
	if s.Allows {
		return literalTrue, nil
	}
	return literalFalse, nil
}

// UnmarshalJSON reads an object as a schema (which allows) or a boolean.
// Anything else, null included, is an error.
func (s *JSONSchemaPropsOrBool) UnmarshalJSON(data []byte) error {
	var out JSONSchemaPropsOrBool
	switch {
	case len(data) == 0:
		// Nothing to read: the zero value.
	case data[0] == '{':
		schema := new(JSONSchemaProps)
		if err := utiljson.Unmarshal(data, schema); err != nil {
			return err
		}
		out = JSONSchemaPropsOrBool{Allows: true, Schema: schema}
	case bytes.Equal(data, literalTrue):
		out.Allows = true
	case bytes.Equal(data, literalFalse):
	default:
		return errors.New("boolean or JSON schema expected")
	}
	*s = out
	return nil
}

// MarshalJSON writes the property list if it is not empty, else the schema,
// else null.
func (s JSONSchemaPropsOrStringArray) MarshalJSON() ([]byte, error) {
	switch {
	case len(s.Property) > 0:
		return utiljson.Marshal(s.Property)
	case s.Schema != nil:
		return utiljson.Marshal(s.Schema)
	}
	return literalNull, nil
}

// UnmarshalJSON reads an object as a schema and an array as property
// names; any other value gives the zero value without an error.
func (s *JSONSchemaPropsOrStringArray) UnmarshalJSON(data []byte) error {
	var out JSONSchemaPropsOrStringArray
	switch leadingByte(data) {
	case '{':
		schema := new(JSONSchemaProps)
		if err := utiljson.Unmarshal(data, schema); err != nil {
			return err
		}
		out.Schema = schema
	case '[':
		if err := utiljson.Unmarshal(data, &out.Property); err != nil {
			return err
		}
	}
	*s = out
	return nil
}

// MarshalJSON writes the list of schemas if it is not empty, else the
// single schema (null when there is none).
func (s JSONSchemaPropsOrArray) MarshalJSON() ([]byte, error) {
	if len(s.JSONSchemas) > 0 {
		return utiljson.Marshal(s.JSONSchemas)
	}
	return utiljson.Marshal(s.Schema)
}

// UnmarshalJSON reads an object as one schema and an array as a list of
// schemas; any other value gives the zero value without an error.
func (s *JSONSchemaPropsOrArray) UnmarshalJSON(data []byte) error {
	var out JSONSchemaPropsOrArray
	switch leadingByte(data) {
	case '{':
		schema := new(JSONSchemaProps)
		if err := utiljson.Unmarshal(data, schema); err != nil {
			return err
		}
		out.Schema = schema
	case '[':
		if err := utiljson.Unmarshal(data, &out.JSONSchemas); err != nil {
			return err
		}
	}
	*s = out
	return nil
}

// leadingByte is the first byte of a value of at least two bytes, and 0 for
// shorter ones (which can be neither an object nor an array).
func leadingByte(data []byte) byte {
	if len(data) < 2 {
		return 0
	}
	return data[0]
}
