// Package schema is the structural schema of a custom resource version:
// the typed tree that kube derives from a CRD's openAPIV3Schema and that
// pruning, defaulting, validation, CEL rules, OpenAPI publication and
// server-side apply all walk.
//
// A structural schema says, at every node, what type the value has (or that
// it is an int-or-string, or that unknown fields are kept); the value
// validations that do not change the shape (allOf, anyOf, oneOf, not) sit
// apart in ValueValidation and may not declare new shape.
//
// The package offers, in kube's terms and with kube's messages:
//
//   - NewStructural: JSONSchemaProps -> Structural
//   - ValidateSchema: the checks of one version's openAPIV3Schema at CRD
//     create and update (ValidationOptions, RatchetOptions, SchemaPath),
//     and Warnings / NewWarnings
//   - Prune, PruneNonNullableNullsWithoutDefaults, CoerceEmbeddedMeta and
//     CoerceResource (all of them in kube's order): the decoding steps
//   - Default, PruneDefaults: structural defaulting
//   - Validate, ValidateUpdate, NewValidator: value validation of a custom
//     resource (OpenAPI schema, embedded resources, list sets and maps,
//     ratcheting on update)
//   - ToOpenAPI, KindSchema, ListSchema: the published models
//
// Serving a version as kube does: s, _ := NewStructural(schema), then
// PruneDefaults(s) once; for each request body CoerceResource (unknown
// fields become `unknown field "..."` warnings or strict errors), then
// Default; for each object read from storage CoerceResource with
// DropInvalidFields, then Default; on create and update, after admission,
// a NewValidator(s) kept per version checks the object (ValidateObject,
// ValidateObjectUpdate), alongside the CEL rules of apiextensions/cel.
package schema

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Structural is one node of a structural schema.
type Structural struct {
	// Type is object, array, string, integer, number or boolean; empty
	// only where XIntOrString or XPreserveUnknownFields says what it is.
	Type        string
	Format      string
	Title       string
	Description string
	Nullable    bool
	// Default is the decoded JSON value of default (nil when none). A
	// default of null counts as no default, as in kube.
	Default any
	// HasDefault is true when Default is set (non-null).
	HasDefault bool
	// Example is the decoded JSON value of example (nil when none).
	Example      any
	ExternalDocs *apiextv1.ExternalDocumentation

	// Items is the schema of an array's elements.
	Items *Structural
	// Properties are the known fields of an object.
	Properties map[string]Structural
	// AdditionalProperties is the schema of the values of a map-like
	// object; AdditionalPropertiesAllowed is additionalProperties: true
	// (kept, without a schema); AdditionalPropertiesDisallowed is
	// additionalProperties: false. At most one of the three is set; see
	// HasAdditionalProperties.
	AdditionalProperties           *Structural
	AdditionalPropertiesAllowed    bool
	AdditionalPropertiesDisallowed bool

	XPreserveUnknownFields bool
	XEmbeddedResource      bool
	XIntOrString           bool
	XListMapKeys           []string
	XListType              string // "", atomic, set or map
	XMapType               string // "", granular or atomic
	XValidations           apiextv1.ValidationRules

	// ValueValidation holds the checks of the node's value. NewStructural
	// always sets it; hand-built schemas may leave it nil.
	ValueValidation *ValueValidation
}

// HasAdditionalProperties tells whether additionalProperties was given at
// all (a schema, true or false): such an object keeps, prunes and
// validates its unknown keys through AdditionalProperties.
func (s *Structural) HasAdditionalProperties() bool {
	return s != nil && (s.AdditionalProperties != nil || s.AdditionalPropertiesAllowed || s.AdditionalPropertiesDisallowed)
}

// ValueValidation are the value checks of a node. The logical junctors
// (AllOf, AnyOf, OneOf, Not) hold nested checks that may not add shape.
type ValueValidation struct {
	Format           string
	Maximum          *float64
	ExclusiveMaximum bool
	Minimum          *float64
	ExclusiveMinimum bool
	MaxLength        *int64
	MinLength        *int64
	Pattern          string
	MaxItems         *int64
	MinItems         *int64
	UniqueItems      bool
	MultipleOf       *float64
	Enum             []any
	MaxProperties    *int64
	MinProperties    *int64
	Required         []string
	AllOf            []NestedValueValidation
	OneOf            []NestedValueValidation
	AnyOf            []NestedValueValidation
	Not              *NestedValueValidation
}

// NestedValueValidation is a value check inside a logical junctor: it may
// descend into items and properties, but declares no types of its own.
type NestedValueValidation struct {
	ValueValidation
	XValidations         apiextv1.ValidationRules
	Items                *NestedValueValidation
	Properties           map[string]NestedValueValidation
	AdditionalProperties *NestedValueValidation
	// AdditionalPropertiesDisallowed is additionalProperties: false,
	// which kube accepts (and checks values with) under the junctors.
	AdditionalPropertiesDisallowed bool
	// ForbiddenGenerics and ForbiddenExtensions record what a nested
	// schema set but may not (type, default, x-kubernetes-*), so that
	// structural validation can name it. The one allowed use is the
	// int-or-string pattern anyOf: [{type: integer}, {type: string}].
	ForbiddenGenerics   Generic
	ForbiddenExtensions Extensions
}

// Generic are the shape fields a nested value validation may not set
// (externalDocs and example are tolerated).
type Generic struct {
	Type         string
	Title        string
	Description  string
	Nullable     bool
	Default      any
	HasDefault   bool
	Example      any
	ExternalDocs *apiextv1.ExternalDocumentation
}

// Extensions are the x-kubernetes-* fields a nested value validation may
// not set.
type Extensions struct {
	XPreserveUnknownFields bool
	XEmbeddedResource      bool
	XIntOrString           bool
	XListMapKeys           []string
	XListType              string
	XMapType               string
}
