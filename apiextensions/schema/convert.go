package schema

import (
	"bytes"
	"errors"
	"fmt"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// NewStructural converts an openAPIV3Schema into its structural form. It
// fails, with kube's messages, on what a structural schema cannot hold:
// id, $schema, $ref, patternProperties, dependencies, additionalItems,
// definitions, items given as an array, and
// x-kubernetes-preserve-unknown-fields: false. Whether the result is
// really structural (types everywhere, nothing shape-changing under the
// junctors, ...) is the business of ValidateSchema.
//
// Defaults, examples and enum values are decoded as kube decodes them:
// integers become int64, other numbers float64; null counts as absent
// for default and example.
func NewStructural(props *apiextv1.JSONSchemaProps) (*Structural, error) {
	if props == nil {
		return nil, nil
	}
	if err := unsupportedFields(props); err != nil {
		return nil, err
	}
	g, err := newGeneric(props)
	if err != nil {
		return nil, err
	}
	x, err := newExtensions(props)
	if err != nil {
		return nil, err
	}
	vv, err := newValueValidation(props)
	if err != nil {
		return nil, err
	}
	s := &Structural{
		Type:                   g.Type,
		Format:                 props.Format,
		Title:                  g.Title,
		Description:            g.Description,
		Nullable:               g.Nullable,
		Default:                g.Default,
		HasDefault:             g.HasDefault,
		Example:                g.Example,
		ExternalDocs:           g.ExternalDocs,
		XPreserveUnknownFields: x.XPreserveUnknownFields,
		XEmbeddedResource:      x.XEmbeddedResource,
		XIntOrString:           x.XIntOrString,
		XListMapKeys:           x.XListMapKeys,
		XListType:              x.XListType,
		XMapType:               x.XMapType,
		XValidations:           props.XValidations,
		ValueValidation:        vv,
	}
	if props.Items != nil {
		if len(props.Items.JSONSchemas) > 0 {
			return nil, errors.New("OpenAPIV3Schema 'items' must be a schema, but is an array")
		}
		if s.Items, err = NewStructural(props.Items.Schema); err != nil {
			return nil, err
		}
	}
	if len(props.Properties) > 0 {
		s.Properties = make(map[string]Structural, len(props.Properties))
		for k := range props.Properties {
			p := props.Properties[k]
			ps, err := NewStructural(&p)
			if err != nil {
				return nil, err
			}
			s.Properties[k] = *ps
		}
	}
	if ap := props.AdditionalProperties; ap != nil {
		switch {
		case ap.Schema != nil:
			if s.AdditionalProperties, err = NewStructural(ap.Schema); err != nil {
				return nil, err
			}
		case ap.Allows:
			s.AdditionalPropertiesAllowed = true
		default:
			s.AdditionalPropertiesDisallowed = true
		}
	}
	return s, nil
}

// unsupportedFields names the first JSON schema field a structural schema
// has no place for.
func unsupportedFields(p *apiextv1.JSONSchemaProps) error {
	switch {
	case len(p.ID) > 0:
		return errors.New("OpenAPIV3Schema 'id' is not supported")
	case len(p.Schema) > 0:
		return errors.New("OpenAPIV3Schema 'schema' is not supported")
	case p.Ref != nil && len(*p.Ref) > 0:
		return errors.New("OpenAPIV3Schema '$ref' is not supported")
	case len(p.PatternProperties) > 0:
		return errors.New("OpenAPIV3Schema 'patternProperties' is not supported")
	case len(p.Dependencies) > 0:
		return errors.New("OpenAPIV3Schema 'dependencies' is not supported")
	case p.AdditionalItems != nil:
		return errors.New("OpenAPIV3Schema 'additionalItems' is not supported")
	case len(p.Definitions) > 0:
		return errors.New("OpenAPIV3Schema 'definitions' is not supported")
	}
	return nil
}

func newGeneric(p *apiextv1.JSONSchemaProps) (Generic, error) {
	g := Generic{
		Type:        p.Type,
		Title:       p.Title,
		Description: p.Description,
		Nullable:    p.Nullable,
	}
	var err error
	if g.Default, err = decodeJSON(p.Default); err != nil {
		return g, fmt.Errorf("invalid default: %v", err)
	}
	g.HasDefault = g.Default != nil
	if g.Example, err = decodeJSON(p.Example); err != nil {
		return g, fmt.Errorf("invalid example: %v", err)
	}
	g.ExternalDocs = copyDocs(p.ExternalDocs)
	return g, nil
}

func newExtensions(p *apiextv1.JSONSchemaProps) (Extensions, error) {
	x := Extensions{
		XEmbeddedResource: p.XEmbeddedResource,
		XIntOrString:      p.XIntOrString,
		XListMapKeys:      p.XListMapKeys,
	}
	if p.XListType != nil {
		x.XListType = *p.XListType
	}
	if p.XMapType != nil {
		x.XMapType = *p.XMapType
	}
	if p.XPreserveUnknownFields != nil {
		if !*p.XPreserveUnknownFields {
			return x, errors.New("internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined")
		}
		x.XPreserveUnknownFields = true
	}
	return x, nil
}

func newValueValidation(p *apiextv1.JSONSchemaProps) (*ValueValidation, error) {
	v := &ValueValidation{
		Format:           p.Format,
		Maximum:          p.Maximum,
		ExclusiveMaximum: p.ExclusiveMaximum,
		Minimum:          p.Minimum,
		ExclusiveMinimum: p.ExclusiveMinimum,
		MaxLength:        p.MaxLength,
		MinLength:        p.MinLength,
		Pattern:          p.Pattern,
		MaxItems:         p.MaxItems,
		MinItems:         p.MinItems,
		UniqueItems:      p.UniqueItems,
		MultipleOf:       p.MultipleOf,
		MaxProperties:    p.MaxProperties,
		MinProperties:    p.MinProperties,
		Required:         p.Required,
	}
	for i := range p.Enum {
		e, err := decodeJSON(&p.Enum[i])
		if err != nil {
			return nil, fmt.Errorf("invalid enum value: %v", err)
		}
		v.Enum = append(v.Enum, e)
	}
	var err error
	if v.Not, err = newNested(p.Not); err != nil {
		return nil, err
	}
	if v.AllOf, err = newNestedSlice(p.AllOf); err != nil {
		return nil, err
	}
	if v.AnyOf, err = newNestedSlice(p.AnyOf); err != nil {
		return nil, err
	}
	if v.OneOf, err = newNestedSlice(p.OneOf); err != nil {
		return nil, err
	}
	return v, nil
}

func newNestedSlice(in []apiextv1.JSONSchemaProps) ([]NestedValueValidation, error) {
	var out []NestedValueValidation
	for i := range in {
		n, err := newNested(&in[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *n)
	}
	return out, nil
}

func newNested(p *apiextv1.JSONSchemaProps) (*NestedValueValidation, error) {
	if p == nil {
		return nil, nil
	}
	if err := unsupportedFields(p); err != nil {
		return nil, err
	}
	vv, err := newValueValidation(p)
	if err != nil {
		return nil, err
	}
	g, err := newGeneric(p)
	if err != nil {
		return nil, err
	}
	x, err := newExtensions(p)
	if err != nil {
		return nil, err
	}
	n := &NestedValueValidation{
		ValueValidation:     *vv,
		XValidations:        p.XValidations,
		ForbiddenGenerics:   g,
		ForbiddenExtensions: x,
	}
	if p.Items != nil {
		if len(p.Items.JSONSchemas) > 0 {
			return nil, errors.New("OpenAPIV3Schema 'items' must be a schema, but is an array")
		}
		if n.Items, err = newNested(p.Items.Schema); err != nil {
			return nil, err
		}
	}
	if p.Properties != nil {
		n.Properties = make(map[string]NestedValueValidation, len(p.Properties))
		for k := range p.Properties {
			prop := p.Properties[k]
			pn, err := newNested(&prop)
			if err != nil {
				return nil, err
			}
			n.Properties[k] = *pn
		}
	}
	if ap := p.AdditionalProperties; ap != nil {
		if ap.Schema != nil {
			if n.AdditionalProperties, err = newNested(ap.Schema); err != nil {
				return nil, err
			}
		} else if ap.Allows {
			n.AdditionalProperties = &NestedValueValidation{}
		} else {
			n.AdditionalPropertiesDisallowed = true
		}
	}
	return n, nil
}

var nullJSON = []byte("null")

// decodeJSON decodes a JSON value as kube's conversion of
// apiextensions.k8s.io/v1 does: nil for absent, empty or null.
func decodeJSON(j *apiextv1.JSON) (any, error) {
	if j == nil || len(j.Raw) == 0 || bytes.Equal(bytes.TrimSpace(j.Raw), nullJSON) {
		return nil, nil
	}
	var v any
	if err := utiljson.Unmarshal(j.Raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}
