package schema

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The checks in this file decide whether a schema is structural, as kube's
// structural schema validation does: every specified node has a type, the
// logical junctors only restrict values, everything they mention is also
// specified outside them, and metadata is left to the server.

// depth tells where a node sits: the root, array items or object fields
// (properties and additionalProperties).
type depth int

const (
	atRoot depth = iota
	atItems
	atField
)

// structuralOptions are kube's switches of structural validation; CRDs
// use the zero value.
type structuralOptions struct {
	allowNestedAdditionalProperties                   bool
	allowNestedXValidations                           bool
	allowValidationPropertiesWithAdditionalProperties bool
}

// ValidateStructural reports what keeps s from being a structural schema,
// with kube's messages, sorted by message as kube sorts them. fldPath is
// the path of the schema (e.g. spec.versions[0].schema.openAPIV3Schema).
func ValidateStructural(fldPath *field.Path, s *Structural) field.ErrorList {
	return validateStructural(fldPath, s, structuralOptions{})
}

func validateStructural(fldPath *field.Path, s *Structural, opts structuralOptions) field.ErrorList {
	allErrs := field.ErrorList{}
	allErrs = append(allErrs, structuralInvariants(s, atRoot, fldPath, opts)...)
	allErrs = append(allErrs, completeness(s, fldPath, opts)...)
	sort.SliceStable(allErrs, func(i, j int) bool { return allErrs[i].Error() < allErrs[j].Error() })
	return allErrs
}

var intOrStringAnyOf = []NestedValueValidation{
	{ForbiddenGenerics: Generic{Type: "integer"}},
	{ForbiddenGenerics: Generic{Type: "string"}},
}

// isIntOrStringAnyOf is the pattern anyOf: [{type: integer}, {type: string}]
// that x-kubernetes-int-or-string nodes may carry.
func isIntOrStringAnyOf(v []NestedValueValidation) bool {
	return len(v) == 2 && reflect.DeepEqual(v, intOrStringAnyOf)
}

func hasIntOrStringAnyOf(s *Structural) bool {
	return s != nil && s.ValueValidation != nil && isIntOrStringAnyOf(s.ValueValidation.AnyOf)
}

// hasIntOrStringAllOf is allOf: [{anyOf: [{type: integer}, {type: string}]}, ...].
func hasIntOrStringAllOf(s *Structural) bool {
	return s != nil && s.ValueValidation != nil && len(s.ValueValidation.AllOf) >= 1 && isIntOrStringAnyOf(s.ValueValidation.AllOf[0].AnyOf)
}

func structuralInvariants(s *Structural, d depth, fldPath *field.Path, opts structuralOptions) field.ErrorList {
	if s == nil {
		return nil
	}
	allErrs := field.ErrorList{}

	if s.Type == "array" && s.Items == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("items"), "must be specified"))
	}
	allErrs = append(allErrs, structuralInvariants(s.Items, atItems, fldPath.Child("items"), opts)...)
	for _, k := range sortedKeys(s.Properties) {
		p := s.Properties[k]
		allErrs = append(allErrs, structuralInvariants(&p, atField, fldPath.Child("properties").Key(k), opts)...)
	}
	if s.HasAdditionalProperties() {
		if d == atRoot {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("additionalProperties"), "must not be used at the root"))
		}
		allErrs = append(allErrs, structuralInvariants(s.AdditionalProperties, atField, fldPath.Child("additionalProperties"), opts)...)
	}

	if s.XIntOrString && s.XPreserveUnknownFields {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("x-kubernetes-preserve-unknown-fields"), true, "must be false if x-kubernetes-int-or-string is true"))
	}
	if s.XIntOrString && s.XEmbeddedResource {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("x-kubernetes-embedded-resource"), true, "must be false if x-kubernetes-int-or-string is true"))
	}

	allErrs = append(allErrs, valueValidationInvariants(s.ValueValidation, hasIntOrStringAnyOf(s), hasIntOrStringAllOf(s), d, fldPath, opts)...)

	checkMeta := d == atRoot || s.XEmbeddedResource

	switch {
	case s.XEmbeddedResource && s.Type != "object":
		if len(s.Type) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("type"), "must be object if x-kubernetes-embedded-resource is true"))
		} else {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("type"), s.Type, "must be object if x-kubernetes-embedded-resource is true"))
		}
	case len(s.Type) == 0 && !s.XIntOrString && !s.XPreserveUnknownFields:
		switch d {
		case atRoot:
			allErrs = append(allErrs, field.Required(fldPath.Child("type"), "must not be empty at the root"))
		case atItems:
			allErrs = append(allErrs, field.Required(fldPath.Child("type"), "must not be empty for specified array items"))
		case atField:
			allErrs = append(allErrs, field.Required(fldPath.Child("type"), "must not be empty for specified object fields"))
		}
	}
	if s.XEmbeddedResource && s.HasAdditionalProperties() {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("additionalProperties"), "must not be used if x-kubernetes-embedded-resource is set"))
	}
	if d == atRoot && len(s.Type) > 0 && s.Type != "object" {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("type"), s.Type, "must be object at the root"))
	}

	if checkMeta {
		for _, k := range []string{"kind", "apiVersion"} {
			if p, ok := s.Properties[k]; ok && p.Type != "string" {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("properties").Key(k).Child("type"), p.Type, "must be string"))
			}
		}
	}
	if meta, ok := s.Properties["metadata"]; ok {
		metaPath := fldPath.Child("properties").Key("metadata")
		if checkMeta && meta.Type != "object" {
			allErrs = append(allErrs, field.Invalid(metaPath.Child("type"), meta.Type, "must be object"))
		}
		if d == atRoot && !onlyNameAndGenerateName(meta) {
			allErrs = append(allErrs, field.Forbidden(metaPath, "must not specify anything other than name and generateName, but metadata is implicitly specified"))
		}
	}

	if s.XEmbeddedResource && !s.XPreserveUnknownFields && len(s.Properties) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("properties"), "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"))
	}
	return allErrs
}

// onlyNameAndGenerateName tells whether the root metadata schema says no
// more than kube lets it: a type (checked apart), a default (checked by
// the defaulting rules) and schemas for name and generateName only.
func onlyNameAndGenerateName(meta Structural) bool {
	_, name := meta.Properties["name"]
	_, generateName := meta.Properties["generateName"]
	switch {
	case name && generateName && len(meta.Properties) == 2:
		meta.Properties = nil
	case (name || generateName) && len(meta.Properties) == 1:
		meta.Properties = nil
	}
	meta.Type = ""
	meta.Format = ""
	meta.Default, meta.HasDefault = nil, false
	if meta.ValueValidation == nil {
		meta.ValueValidation = &ValueValidation{}
	}
	return reflect.DeepEqual(meta, Structural{ValueValidation: &ValueValidation{}})
}

func valueValidationInvariants(v *ValueValidation, skipAnyOf, skipFirstAllOfAnyOf bool, d depth, fldPath *field.Path, opts structuralOptions) field.ErrorList {
	if v == nil {
		return nil
	}
	allErrs := field.ErrorList{}

	// CEL rules are only allowed under allOf (when at all).
	noCEL := opts
	noCEL.allowNestedXValidations = false

	if !skipAnyOf {
		for i := range v.AnyOf {
			allErrs = append(allErrs, nestedInvariants(&v.AnyOf[i], false, false, d, fldPath.Child("anyOf").Index(i), noCEL)...)
		}
	}
	for i := range v.AllOf {
		allErrs = append(allErrs, nestedInvariants(&v.AllOf[i], skipFirstAllOfAnyOf && i == 0, false, d, fldPath.Child("allOf").Index(i), opts)...)
	}
	for i := range v.OneOf {
		allErrs = append(allErrs, nestedInvariants(&v.OneOf[i], false, false, d, fldPath.Child("oneOf").Index(i), noCEL)...)
	}
	allErrs = append(allErrs, nestedInvariants(v.Not, false, false, d, fldPath.Child("not"), noCEL)...)

	if len(v.Pattern) > 0 {
		if _, err := regexp.Compile(v.Pattern); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("pattern"), v.Pattern, fmt.Sprintf("must be a valid regular expression, but isn't: %v", err)))
		}
	}
	return allErrs
}

func nestedInvariants(v *NestedValueValidation, skipAnyOf, skipAllOfAnyOf bool, d depth, fldPath *field.Path, opts structuralOptions) field.ErrorList {
	if v == nil {
		return nil
	}
	allErrs := field.ErrorList{}
	allErrs = append(allErrs, valueValidationInvariants(&v.ValueValidation, skipAnyOf, skipAllOfAnyOf, d, fldPath, opts)...)
	allErrs = append(allErrs, nestedInvariants(v.Items, false, false, d, fldPath.Child("items"), opts)...)
	for _, k := range sortedKeys(v.Properties) {
		p := v.Properties[k]
		allErrs = append(allErrs, nestedInvariants(&p, false, false, atField, fldPath.Child("properties").Key(k), opts)...)
	}

	g, x := &v.ForbiddenGenerics, &v.ForbiddenExtensions
	if len(g.Type) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("type"), "must be empty to be structural"))
	}
	if v.AdditionalProperties != nil && !opts.allowNestedAdditionalProperties {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("additionalProperties"), "must be undefined to be structural"))
	} else {
		allErrs = append(allErrs, nestedInvariants(v.AdditionalProperties, false, false, d, fldPath.Child("additionalProperties"), opts)...)
	}
	if g.Default != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("default"), "must be undefined to be structural"))
	}
	if len(g.Title) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("title"), "must be empty to be structural"))
	}
	if len(g.Description) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("description"), "must be empty to be structural"))
	}
	if g.Nullable {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("nullable"), "must be false to be structural"))
	}
	if x.XPreserveUnknownFields {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("x-kubernetes-preserve-unknown-fields"), "must be false to be structural"))
	}
	if x.XEmbeddedResource {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("x-kubernetes-embedded-resource"), "must be false to be structural"))
	}
	if x.XIntOrString {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("x-kubernetes-int-or-string"), "must be false to be structural"))
	}
	if len(x.XListMapKeys) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("x-kubernetes-list-map-keys"), "must be empty to be structural"))
	}
	if x.XListType != "" {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("x-kubernetes-list-type"), "must be undefined to be structural"))
	}
	if x.XMapType != "" {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("x-kubernetes-map-type"), "must be undefined to be structural"))
	}
	if len(v.XValidations) > 0 && !opts.allowNestedXValidations {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("x-kubernetes-validations"), "must be empty to be structural"))
	}
	if _, ok := v.Properties["metadata"]; ok {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("properties").Key("metadata"), "must not be specified in a nested context"))
	}
	return allErrs
}

// completeness checks that every property and items the junctors mention
// is also specified in the structural part, next to them.
func completeness(s *Structural, fldPath *field.Path, opts structuralOptions) field.ErrorList {
	if s == nil {
		return nil
	}
	return valueCompleteness(s.ValueValidation, s, fldPath, fldPath, opts)
}

func valueCompleteness(v *ValueValidation, s *Structural, sPath, vPath *field.Path, opts structuralOptions) field.ErrorList {
	if v == nil {
		return nil
	}
	if s == nil {
		return field.ErrorList{field.Required(sPath, fmt.Sprintf("because it is defined in %s", vPath.String()))}
	}
	allErrs := field.ErrorList{}
	allErrs = append(allErrs, nestedCompleteness(v.Not, s, sPath, vPath.Child("not"), opts)...)
	for i := range v.AllOf {
		allErrs = append(allErrs, nestedCompleteness(&v.AllOf[i], s, sPath, vPath.Child("allOf").Index(i), opts)...)
	}
	for i := range v.AnyOf {
		allErrs = append(allErrs, nestedCompleteness(&v.AnyOf[i], s, sPath, vPath.Child("anyOf").Index(i), opts)...)
	}
	for i := range v.OneOf {
		allErrs = append(allErrs, nestedCompleteness(&v.OneOf[i], s, sPath, vPath.Child("oneOf").Index(i), opts)...)
	}
	return allErrs
}

func nestedCompleteness(v *NestedValueValidation, s *Structural, sPath, vPath *field.Path, opts structuralOptions) field.ErrorList {
	if v == nil {
		return nil
	}
	if s == nil {
		return field.ErrorList{field.Required(sPath, fmt.Sprintf("because it is defined in %s", vPath.String()))}
	}
	allErrs := field.ErrorList{}
	allErrs = append(allErrs, valueCompleteness(&v.ValueValidation, s, sPath, vPath, opts)...)
	allErrs = append(allErrs, nestedCompleteness(v.Items, s.Items, sPath.Child("items"), vPath.Child("items"), opts)...)
	for _, k := range sortedKeys(v.Properties) {
		vp := v.Properties[k]
		if sp, ok := s.Properties[k]; ok {
			allErrs = append(allErrs, nestedCompleteness(&vp, &sp, sPath.Child("properties").Key(k), vPath.Child("properties").Key(k), opts)...)
		} else if s.AdditionalProperties != nil && opts.allowValidationPropertiesWithAdditionalProperties {
			allErrs = append(allErrs, nestedCompleteness(&vp, s.AdditionalProperties, sPath.Child("additionalProperties"), vPath.Child("properties").Key(k), opts)...)
		} else {
			allErrs = append(allErrs, field.Required(sPath.Child("properties").Key(k), fmt.Sprintf("because it is defined in %s", vPath.Child("properties").Key(k))))
		}
	}
	if v.AdditionalProperties != nil && opts.allowNestedAdditionalProperties {
		allErrs = append(allErrs, nestedCompleteness(v.AdditionalProperties, s.AdditionalProperties, sPath.Child("additionalProperties"), vPath.Child("additionalProperties"), opts)...)
	}
	return allErrs
}
