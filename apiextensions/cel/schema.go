// Package cel runs the x-kubernetes-validations rules of custom resources:
// it checks them when a CustomResourceDefinition is created or updated
// (ValidateRules: compilation, cost limits, oldSelf placement) and evaluates
// them on custom resources (NewValidator, Validator.Validate).
//
// The CEL environment, types, value adaptors and libraries are those of
// the Kubernetes API server (k8s.io/apiserver/pkg/cel/...), so rules behave,
// cost and fail exactly as they do against kube-apiserver. This file adapts
// capstan's structural schema to the schema interface of those libraries.
package cel

import (
	"sync"

	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"

	"github.com/capstan-io/capstan/apiextensions/schema"
)

// Schema presents one node of a structural schema as a common.Schema, the
// view the Kubernetes CEL libraries take of a schema: SchemaDeclType derives
// the CEL types (and the size bounds used for cost estimation) from it,
// UnstructuredToVal reads values through it.
//
// The children of a node are adapted once, on first use, and kept, so a
// Schema held across requests costs no allocation per field access. A
// Schema is safe for concurrent use; the structural schema under it must
// not change.
type Schema struct {
	s *schema.Structural

	childrenOnce sync.Once
	items        *Schema
	properties   map[string]common.Schema
	additional   common.SchemaOrBool

	metaOnce sync.Once
	withMeta *Schema
}

var _ common.Schema = (*Schema)(nil)

// NewSchema adapts s; nil gives nil.
func NewSchema(s *schema.Structural) *Schema {
	if s == nil {
		return nil
	}
	return &Schema{s: s}
}

// SchemaDeclType is the CEL type of values of s. isResourceRoot adds
// apiVersion, kind and metadata.name/generateName as the root of a custom
// resource and embedded resources expose them. nil when s has no CEL type
// (an array without items, a value without type that is only preserved).
func SchemaDeclType(s *schema.Structural, isResourceRoot bool) *apiservercel.DeclType {
	if s == nil {
		return nil
	}
	return common.SchemaDeclType(NewSchema(s), isResourceRoot)
}

// Structural is the adapted node.
func (s *Schema) Structural() *schema.Structural { return s.s }

func (s *Schema) children() {
	s.childrenOnce.Do(func() {
		if s.s.Items != nil {
			s.items = NewSchema(s.s.Items)
		}
		if s.s.Properties != nil {
			s.properties = make(map[string]common.Schema, len(s.s.Properties))
			for name := range s.s.Properties {
				prop := s.s.Properties[name]
				s.properties[name] = NewSchema(&prop)
			}
		}
		switch {
		case s.s.AdditionalProperties != nil:
			s.additional = schemaOrBool{schema: NewSchema(s.s.AdditionalProperties), allows: true}
		case s.s.AdditionalPropertiesAllowed:
			s.additional = schemaOrBool{allows: true}
		case s.s.AdditionalPropertiesDisallowed:
			s.additional = schemaOrBool{allows: false}
		}
	})
}

// Type is the node's type.
func (s *Schema) Type() string { return s.s.Type }

// Format is the node's format.
func (s *Schema) Format() string {
	if s.s.Format != "" {
		return s.s.Format
	}
	if s.s.ValueValidation != nil {
		return s.s.ValueValidation.Format
	}
	return ""
}

// Items is the schema of the elements of an array.
func (s *Schema) Items() common.Schema {
	s.children()
	if s.items == nil {
		return nil
	}
	return s.items
}

// Properties are the known fields of an object.
func (s *Schema) Properties() map[string]common.Schema {
	s.children()
	return s.properties
}

// AdditionalProperties is the schema of the values of a map, or nil.
func (s *Schema) AdditionalProperties() common.SchemaOrBool {
	s.children()
	return s.additional
}

// Default is the node's default value.
func (s *Schema) Default() any { return s.s.Default }

func (s *Schema) vv() *schema.ValueValidation {
	if s.s.ValueValidation == nil {
		return &noValueValidation
	}
	return s.s.ValueValidation
}

var noValueValidation schema.ValueValidation

// Pattern is the node's pattern.
func (s *Schema) Pattern() string { return s.vv().Pattern }

// Minimum is the node's minimum.
func (s *Schema) Minimum() *float64 { return s.vv().Minimum }

// IsExclusiveMinimum is the node's exclusiveMinimum.
func (s *Schema) IsExclusiveMinimum() bool { return s.vv().ExclusiveMinimum }

// Maximum is the node's maximum.
func (s *Schema) Maximum() *float64 { return s.vv().Maximum }

// IsExclusiveMaximum is the node's exclusiveMaximum.
func (s *Schema) IsExclusiveMaximum() bool { return s.vv().ExclusiveMaximum }

// MultipleOf is the node's multipleOf.
func (s *Schema) MultipleOf() *float64 { return s.vv().MultipleOf }

// MinItems is the node's minItems.
func (s *Schema) MinItems() *int64 { return s.vv().MinItems }

// MaxItems is the node's maxItems; it bounds the estimated cost of rules
// iterating the array.
func (s *Schema) MaxItems() *int64 { return s.vv().MaxItems }

// MinLength is the node's minLength.
func (s *Schema) MinLength() *int64 { return s.vv().MinLength }

// MaxLength is the node's maxLength; it bounds the estimated cost of
// string operations.
func (s *Schema) MaxLength() *int64 { return s.vv().MaxLength }

// MinProperties is the node's minProperties.
func (s *Schema) MinProperties() *int64 { return s.vv().MinProperties }

// MaxProperties is the node's maxProperties; it bounds the estimated cost
// of rules iterating the map.
func (s *Schema) MaxProperties() *int64 { return s.vv().MaxProperties }

// Required lists the node's required properties.
func (s *Schema) Required() []string { return s.vv().Required }

// Enum lists the node's allowed values.
func (s *Schema) Enum() []any { return s.vv().Enum }

// Nullable says whether null is a value of the node.
func (s *Schema) Nullable() bool { return s.s.Nullable }

// UniqueItems is always false: CRD schemas may not set it, as kube's
// adaptor reports.
func (s *Schema) UniqueItems() bool { return false }

// AllOf are the node's allOf value validations as schemas.
func (s *Schema) AllOf() []common.Schema { return nestedSchemas(s.vv().AllOf) }

// AnyOf are the node's anyOf value validations as schemas.
func (s *Schema) AnyOf() []common.Schema { return nestedSchemas(s.vv().AnyOf) }

// OneOf are the node's oneOf value validations as schemas.
func (s *Schema) OneOf() []common.Schema { return nestedSchemas(s.vv().OneOf) }

// Not is the node's not value validation as a schema.
func (s *Schema) Not() common.Schema {
	if s.vv().Not == nil {
		return nil
	}
	return NewSchema(nestedToStructural(s.vv().Not))
}

func nestedSchemas(nested []schema.NestedValueValidation) []common.Schema {
	var out []common.Schema
	for i := range nested {
		out = append(out, NewSchema(nestedToStructural(&nested[i])))
	}
	return out
}

// IsXIntOrString is x-kubernetes-int-or-string.
func (s *Schema) IsXIntOrString() bool { return s.s.XIntOrString }

// IsXEmbeddedResource is x-kubernetes-embedded-resource.
func (s *Schema) IsXEmbeddedResource() bool { return s.s.XEmbeddedResource }

// IsXPreserveUnknownFields is x-kubernetes-preserve-unknown-fields.
func (s *Schema) IsXPreserveUnknownFields() bool { return s.s.XPreserveUnknownFields }

// XListType is x-kubernetes-list-type ("" when unset).
func (s *Schema) XListType() string { return s.s.XListType }

// XMapType is x-kubernetes-map-type ("" when unset).
func (s *Schema) XMapType() string { return s.s.XMapType }

// XListMapKeys is x-kubernetes-list-map-keys.
func (s *Schema) XListMapKeys() []string { return s.s.XListMapKeys }

// XValidations are the node's x-kubernetes-validations.
func (s *Schema) XValidations() []common.ValidationRule {
	if len(s.s.XValidations) == 0 {
		return nil
	}
	out := make([]common.ValidationRule, len(s.s.XValidations))
	for i, r := range s.s.XValidations {
		out[i] = validationRule{rule: r.Rule, message: r.Message, messageExpression: r.MessageExpression, fieldPath: r.FieldPath}
	}
	return out
}

// WithTypeAndObjectMeta is the node as the root of a resource: with
// apiVersion and kind strings and metadata holding only name and
// generateName (capped at kube's name lengths), replacing whatever the
// schema declared for them. The result is computed once.
func (s *Schema) WithTypeAndObjectMeta() common.Schema {
	return s.withTypeAndObjectMeta()
}

func (s *Schema) withTypeAndObjectMeta() *Schema {
	s.metaOnce.Do(func() {
		ws := withTypeAndObjectMeta(s.s)
		if ws == s.s {
			s.withMeta = s
		} else {
			s.withMeta = NewSchema(ws)
		}
	})
	return s.withMeta
}

// nameMaxLength is the longest metadata.name of a custom resource, the
// length of a DNS-1123 subdomain.
const nameMaxLength = 253

// withTypeAndObjectMeta returns s when it already declares apiVersion, kind
// and metadata.name/generateName as strings, otherwise a shallow copy whose
// properties carry them (and nothing else of metadata).
func withTypeAndObjectMeta(s *schema.Structural) *schema.Structural {
	if s.Properties != nil &&
		s.Properties["kind"].Type == "string" &&
		s.Properties["apiVersion"].Type == "string" &&
		s.Properties["metadata"].Type == "object" &&
		s.Properties["metadata"].Properties != nil &&
		s.Properties["metadata"].Properties["name"].Type == "string" &&
		s.Properties["metadata"].Properties["generateName"].Type == "string" {
		return s
	}
	out := *s
	out.Properties = make(map[string]schema.Structural, len(s.Properties)+3)
	for k, v := range s.Properties {
		out.Properties[k] = v
	}
	out.Properties["kind"] = schema.Structural{Type: "string"}
	out.Properties["apiVersion"] = schema.Structural{Type: "string"}
	meta := s.Properties["metadata"].Properties
	out.Properties["metadata"] = schema.Structural{
		Type: "object",
		Properties: map[string]schema.Structural{
			"name": cappedString(meta["name"], nameMaxLength),
			// the generated suffix takes at least one character
			"generateName": cappedString(meta["generateName"], nameMaxLength-1),
		},
	}
	return &out
}

// cappedString is a string schema whose maxLength is limit, or the maxLength
// the existing schema declares if that is shorter.
func cappedString(existing schema.Structural, limit int64) schema.Structural {
	if vv := existing.ValueValidation; vv != nil && vv.MaxLength != nil && *vv.MaxLength < limit {
		limit = *vv.MaxLength
	}
	return schema.Structural{Type: "string", ValueValidation: &schema.ValueValidation{MaxLength: &limit}}
}

// nestedToStructural turns a value validation found under allOf, anyOf,
// oneOf or not into a structural node: its checks and rules, and whatever
// shape it (wrongly) declared, so that it can be compiled and walked like
// any node.
func nestedToStructural(n *schema.NestedValueValidation) *schema.Structural {
	if n == nil {
		return nil
	}
	vv := n.ValueValidation
	out := &schema.Structural{
		Type:                   n.ForbiddenGenerics.Type,
		Title:                  n.ForbiddenGenerics.Title,
		Description:            n.ForbiddenGenerics.Description,
		Nullable:               n.ForbiddenGenerics.Nullable,
		Default:                n.ForbiddenGenerics.Default,
		HasDefault:             n.ForbiddenGenerics.HasDefault,
		XPreserveUnknownFields: n.ForbiddenExtensions.XPreserveUnknownFields,
		XEmbeddedResource:      n.ForbiddenExtensions.XEmbeddedResource,
		XIntOrString:           n.ForbiddenExtensions.XIntOrString,
		XListMapKeys:           n.ForbiddenExtensions.XListMapKeys,
		XListType:              n.ForbiddenExtensions.XListType,
		XMapType:               n.ForbiddenExtensions.XMapType,
		XValidations:           n.XValidations,
		ValueValidation:        &vv,
		Items:                  nestedToStructural(n.Items),
		AdditionalProperties:   nestedToStructural(n.AdditionalProperties),
	}
	if len(n.Properties) > 0 {
		out.Properties = make(map[string]schema.Structural, len(n.Properties))
		for k := range n.Properties {
			p := n.Properties[k]
			out.Properties[k] = *nestedToStructural(&p)
		}
	}
	return out
}

type schemaOrBool struct {
	schema *Schema
	allows bool
}

func (sb schemaOrBool) Schema() common.Schema {
	if sb.schema == nil {
		return nil
	}
	return sb.schema
}

func (sb schemaOrBool) Allows() bool { return sb.allows }

type validationRule struct {
	rule, message, messageExpression, fieldPath string
}

func (r validationRule) Rule() string              { return r.rule }
func (r validationRule) Message() string           { return r.message }
func (r validationRule) MessageExpression() string { return r.messageExpression }
func (r validationRule) FieldPath() string         { return r.fieldPath }
