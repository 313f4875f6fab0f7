package schema

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// kube validates CRDs in its internal form and prints a whole schema, in
// one message, as that form encodes to JSON: Go field names, in the
// internal order, with nulls. These mirror types reproduce that text.

type internalProps struct {
	ID                     string
	Schema                 string
	Ref                    *string
	Description            string
	Type                   string
	Nullable               bool
	Format                 string
	Title                  string
	Default                any
	Maximum                *float64
	ExclusiveMaximum       bool
	Minimum                *float64
	ExclusiveMinimum       bool
	MaxLength              *int64
	MinLength              *int64
	Pattern                string
	MaxItems               *int64
	MinItems               *int64
	UniqueItems            bool
	MultipleOf             *float64
	Enum                   []any
	MaxProperties          *int64
	MinProperties          *int64
	Required               []string
	Items                  *internalPropsOrArray
	AllOf                  []internalProps
	OneOf                  []internalProps
	AnyOf                  []internalProps
	Not                    *internalProps
	Properties             map[string]internalProps
	AdditionalProperties   *internalPropsOrBool
	PatternProperties      map[string]internalProps
	Dependencies           map[string]internalPropsOrStringArray
	AdditionalItems        *internalPropsOrBool
	Definitions            map[string]internalProps
	ExternalDocs           *internalDocs
	Example                any
	XPreserveUnknownFields *bool
	XEmbeddedResource      bool
	XIntOrString           bool
	XListMapKeys           []string
	XListType              *string
	XMapType               *string
	XValidations           []internalRule
}

type internalPropsOrArray struct {
	Schema      *internalProps
	JSONSchemas []internalProps
}

type internalPropsOrBool struct {
	Allows bool
	Schema *internalProps
}

type internalPropsOrStringArray struct {
	Schema   *internalProps
	Property []string
}

type internalDocs struct {
	Description string
	URL         string
}

type internalRule struct {
	Rule              string
	Message           string
	MessageExpression string
	Reason            *string
	FieldPath         string
	OptionalOldSelf   *bool
}

func toInternal(p *apiextv1.JSONSchemaProps) *internalProps {
	if p == nil {
		return nil
	}
	out := &internalProps{
		ID: p.ID, Schema: string(p.Schema), Ref: p.Ref, Description: p.Description, Type: p.Type,
		Nullable: p.Nullable, Format: p.Format, Title: p.Title,
		Maximum: p.Maximum, ExclusiveMaximum: p.ExclusiveMaximum, Minimum: p.Minimum, ExclusiveMinimum: p.ExclusiveMinimum,
		MaxLength: p.MaxLength, MinLength: p.MinLength, Pattern: p.Pattern, MaxItems: p.MaxItems, MinItems: p.MinItems,
		UniqueItems: p.UniqueItems, MultipleOf: p.MultipleOf, MaxProperties: p.MaxProperties, MinProperties: p.MinProperties,
		Required: p.Required, Not: toInternal(p.Not),
		AllOf: toInternalSlice(p.AllOf), OneOf: toInternalSlice(p.OneOf), AnyOf: toInternalSlice(p.AnyOf),
		Properties: toInternalMap(p.Properties), PatternProperties: toInternalMap(p.PatternProperties),
		Definitions: toInternalMap(p.Definitions), AdditionalProperties: toInternalOrBool(p.AdditionalProperties),
		AdditionalItems:        toInternalOrBool(p.AdditionalItems),
		XPreserveUnknownFields: p.XPreserveUnknownFields, XEmbeddedResource: p.XEmbeddedResource,
		XIntOrString: p.XIntOrString, XListMapKeys: p.XListMapKeys, XListType: p.XListType, XMapType: p.XMapType,
	}
	out.Default, _ = decodeJSON(p.Default)
	out.Example, _ = decodeJSON(p.Example)
	if p.Enum != nil {
		out.Enum = make([]any, len(p.Enum))
		for i := range p.Enum {
			out.Enum[i], _ = decodeJSON(&p.Enum[i])
		}
	}
	if p.Items != nil {
		out.Items = &internalPropsOrArray{Schema: toInternal(p.Items.Schema), JSONSchemas: toInternalSlice(p.Items.JSONSchemas)}
	}
	if p.Dependencies != nil {
		out.Dependencies = map[string]internalPropsOrStringArray{}
		for k, d := range p.Dependencies {
			out.Dependencies[k] = internalPropsOrStringArray{Schema: toInternal(d.Schema), Property: d.Property}
		}
	}
	if p.ExternalDocs != nil {
		out.ExternalDocs = &internalDocs{Description: p.ExternalDocs.Description, URL: p.ExternalDocs.URL}
	}
	if p.XValidations != nil {
		out.XValidations = make([]internalRule, len(p.XValidations))
		for i, r := range p.XValidations {
			out.XValidations[i] = internalRule{Rule: r.Rule, Message: r.Message, MessageExpression: r.MessageExpression,
				FieldPath: r.FieldPath, OptionalOldSelf: r.OptionalOldSelf}
			if r.Reason != nil {
				reason := string(*r.Reason)
				out.XValidations[i].Reason = &reason
			}
		}
	}
	return out
}

func toInternalSlice(in []apiextv1.JSONSchemaProps) []internalProps {
	if in == nil {
		return nil
	}
	out := make([]internalProps, len(in))
	for i := range in {
		out[i] = *toInternal(&in[i])
	}
	return out
}

func toInternalMap(in map[string]apiextv1.JSONSchemaProps) map[string]internalProps {
	if in == nil {
		return nil
	}
	out := make(map[string]internalProps, len(in))
	for k := range in {
		p := in[k]
		out[k] = *toInternal(&p)
	}
	return out
}

func toInternalOrBool(in *apiextv1.JSONSchemaPropsOrBool) *internalPropsOrBool {
	if in == nil {
		return nil
	}
	return &internalPropsOrBool{Allows: in.Allows, Schema: toInternal(in.Schema)}
}

// InternalForm is p as kube's internal JSONSchemaProps, whose JSON encoding
// (Go field names, internal order, nulls) is how kube prints a schema in
// the value of a validation error.
func InternalForm(p *apiextv1.JSONSchemaProps) any {
	if p == nil {
		return nil
	}
	return toInternal(p)
}
