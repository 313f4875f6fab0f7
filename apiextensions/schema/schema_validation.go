package schema

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	apiextv1 "github.com/capstan-io/capstan/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidationOptions tune ValidateSchema. The zero value is what kube
// applies when a CRD is created.
//
// On update, kube keeps accepting a few kinds of invalid schemas if the
// old CRD (any of its versions) already had them, so that an upgrade does
// not lock users out of their CRDs; RatchetOptions computes these
// switches from the old CRD's schemas. kube's other ratchets do not apply
// to apiextensions.k8s.io/v1: such CRDs always need structural schemas,
// allow defaults, and have per-version schemas.
type ValidationOptions struct {
	// StatusSubresource: the version serves the status subresource, so
	// the root schema may only use fields that survive extracting
	// properties[status] (kube's allowed root fields).
	StatusSubresource bool

	// AllowInvalidTypes accepts types other than array, boolean,
	// integer, number, object and string.
	AllowInvalidTypes bool
	// AllowUnprunedDefaults accepts defaults with unknown fields.
	AllowUnprunedDefaults bool
	// AllowNonAtomicSetItems accepts x-kubernetes-list-type: set of
	// non-atomic objects or lists.
	AllowNonAtomicSetItems bool
	// AllowInvalidListMapKeys accepts nullable items of set and map lists,
	// and map keys that are nullable, or neither required nor defaulted.
	AllowInvalidListMapKeys bool

	// ValidateDefault, when set, also checks each default with the CEL
	// rules of its node (see DefaultValidator).
	ValidateDefault DefaultValidator
}

// RatchetOptions returns the ValidationOptions of an update of a CRD whose
// current version schemas are old: each relaxation is on when some old
// schema needs it.
func RatchetOptions(old ...*apiextv1.JSONSchemaProps) ValidationOptions {
	var opts ValidationOptions
	for _, s := range old {
		if s == nil {
			continue
		}
		if schemaHas(s, func(s *apiextv1.JSONSchemaProps) bool { return len(s.Type) > 0 && !v3Types.Has(s.Type) }) {
			opts.AllowInvalidTypes = true
		}
		if hasUnprunedDefaults(s) {
			opts.AllowUnprunedDefaults = true
		}
		if schemaHas(s, nonAtomicSetItems) {
			opts.AllowNonAtomicSetItems = true
		}
		if schemaHas(s, func(s *apiextv1.JSONSchemaProps) bool { return len(listMapKeysMapSet(s, nil)) > 0 }) {
			opts.AllowInvalidListMapKeys = true
		}
	}
	return opts
}

func hasUnprunedDefaults(s *apiextv1.JSONSchemaProps) bool {
	if !schemaHas(s, func(s *apiextv1.JSONSchemaProps) bool { return s.Default != nil }) {
		return false
	}
	ss, err := NewStructural(s)
	if err != nil || len(ValidateStructural(nil, ss)) > 0 {
		return false
	}
	pruned := ss.DeepCopy()
	if err := PruneDefaults(pruned); err != nil {
		return false
	}
	return !reflect.DeepEqual(ss, pruned)
}

// ValidateSchema checks the openAPIV3Schema of one version of an
// apiextensions.k8s.io/v1 CRD as kube does, with kube's field paths and
// messages. fldPath is the schema's own path as kube reports it, see
// SchemaPath.
//
// It covers kube's structural schema rules (types everywhere, junctors
// that only restrict values, metadata restrictions, the
// x-kubernetes-* extensions), the OpenAPI rules (no $ref, definitions,
// id, patternProperties, dependencies, additionalItems, items arrays,
// uniqueItems, type null; additionalProperties and properties exclusive;
// known types), list and map types, and defaults (pruned, valid against
// their schema, no defaults in top-level apiVersion, kind and metadata).
// Of x-kubernetes-validations it checks the static fields (rule, message,
// messageExpression, reason, fieldPath); compiling the rules and their
// cost is apiextensions/cel's business.
func ValidateSchema(props *apiextv1.JSONSchemaProps, fldPath *field.Path, opts ValidationOptions) field.ErrorList {
	allErrs := field.ErrorList{}
	if props == nil {
		return allErrs
	}

	if opts.StatusSubresource {
		allErrs = append(allErrs, statusRootFields(props, fldPath)...)
	}
	if props.Nullable {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("nullable"), "nullable cannot be true at the root"))
	}

	// Structural conversion fails on what the OpenAPI checks below also
	// report; its error only shows when they report nothing.
	var conversionErrs field.ErrorList
	if ss, err := NewStructural(props); err != nil {
		conversionErrs = append(conversionErrs, field.Invalid(fldPath, "", err.Error()))
	} else if errs := ValidateStructural(fldPath, ss); len(errs) > 0 {
		allErrs = append(allErrs, errs...)
	} else {
		allErrs = append(allErrs, validateDefaults(fldPath, ss, !opts.AllowUnprunedDefaults, opts.ValidateDefault)...)
	}

	sv := specValidator{allowDefaults: true, requireValidType: !opts.AllowInvalidTypes}
	allErrs = append(allErrs, openAPISchema(props, fldPath, sv, true, &opts)...)

	if len(allErrs) == 0 {
		allErrs = append(allErrs, conversionErrs...)
	}
	return allErrs
}

// SchemaPath is the path kube reports the errors of version i's schema
// under. kube validates CRDs in their internal form, where the schemas
// of all versions move to spec.validation when they are all equal (as
// with a single version): then the schema is validated once, at
// spec.validation.openAPIV3Schema, and StatusSubresource is whether any
// version serves status. Otherwise each version's schema is validated at
// spec.versions[i].schema.openAPIV3Schema.
func SchemaPath(i int, allVersionsEqual bool) *field.Path {
	if allVersionsEqual {
		return field.NewPath("spec", "validation", "openAPIV3Schema")
	}
	return field.NewPath("spec", "versions").Index(i).Child("schema", "openAPIV3Schema")
}

// rootFieldsWithStatus are the JSONSchemaProps fields the root schema may
// set when the status subresource is enabled.
var rootFieldsWithStatus = []string{"Description", "Type", "Format", "Title", "Maximum", "ExclusiveMaximum", "Minimum", "ExclusiveMinimum", "MaxLength", "MinLength", "Pattern", "MaxItems", "MinItems", "UniqueItems", "MultipleOf", "Required", "Items", "Properties", "ExternalDocs", "Example", "XPreserveUnknownFields", "XValidations"}

func statusRootFields(props *apiextv1.JSONSchemaProps, fldPath *field.Path) field.ErrorList {
	v := reflect.ValueOf(props).Elem()
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			continue
		}
		name := v.Type().Field(i).Name
		if name == "Type" {
			if props.Type != "object" {
				return field.ErrorList{field.Invalid(fldPath.Child("type"), props.Type, `only "object" is allowed as the type at the root of the schema if the status subresource is enabled`)}
			}
			continue
		}
		if !slices.Contains(rootFieldsWithStatus, name) {
			return field.ErrorList{field.Invalid(fldPath, *toInternal(props), fmt.Sprintf("only %v fields are allowed at the root of the schema if the status subresource is enabled", rootFieldsWithStatus))}
		}
	}
	return nil
}

// specValidator carries what the OpenAPI checks of a node depend on.
type specValidator struct {
	allowDefaults          bool
	disallowDefaultsReason string
	insideResourceMeta     bool
	requireValidType       bool
}

func (v specValidator) withoutDefaults(reason string) specValidator {
	v.allowDefaults = false
	v.disallowDefaultsReason = reason
	return v
}

func (v specValidator) withinResourceMeta() specValidator {
	v.insideResourceMeta = true
	return v
}

var v3Types = newStringSet("array", "boolean", "integer", "number", "object", "string")

type stringSet map[string]bool

func newStringSet(items ...string) stringSet {
	s := stringSet{}
	for _, i := range items {
		s[i] = true
	}
	return s
}

func (s stringSet) Has(x string) bool { return s[x] }

func (s stringSet) List() []string { return sortedKeys(s) }

func (v specValidator) validate(s *apiextv1.JSONSchemaProps, fldPath *field.Path) field.ErrorList {
	allErrs := field.ErrorList{}
	if v.requireValidType && len(s.Type) > 0 && !v3Types.Has(s.Type) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), s.Type, v3Types.List()))
	}
	if s.Default != nil && !v.allowDefaults {
		detail := "must not be set"
		if len(v.disallowDefaultsReason) > 0 {
			detail += " " + v.disallowDefaultsReason
		}
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("default"), detail))
	}
	if s.ID != "" {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("id"), "id is not supported"))
	}
	if s.AdditionalItems != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("additionalItems"), "additionalItems is not supported"))
	}
	if len(s.PatternProperties) != 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("patternProperties"), "patternProperties is not supported"))
	}
	if len(s.Definitions) != 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("definitions"), "definitions is not supported"))
	}
	if s.Dependencies != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("dependencies"), "dependencies is not supported"))
	}
	if s.Ref != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("$ref"), "$ref is not supported"))
	}
	if s.Type == "null" {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("type"), "type cannot be set to null, use nullable as an alternative"))
	}
	if s.Items != nil && len(s.Items.JSONSchemas) != 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("items"), "items must be a schema object and not an array"))
	}
	if v.insideResourceMeta && s.XEmbeddedResource {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("x-kubernetes-embedded-resource"), "must not be used inside of resource meta"))
	}
	return allErrs
}

// openAPISchema walks the schema with kube's OpenAPI checks of CRD
// schemas.
func openAPISchema(s *apiextv1.JSONSchemaProps, fldPath *field.Path, sv specValidator, isRoot bool, opts *ValidationOptions) field.ErrorList {
	if s == nil {
		return nil
	}
	allErrs := sv.validate(s, fldPath)

	if s.UniqueItems {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("uniqueItems"), "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
	}

	// properties are for structs, additionalProperties for maps: both
	// would contradict the convention that unknown fields are dropped.
	if s.AdditionalProperties != nil {
		if len(s.Properties) != 0 && (!s.AdditionalProperties.Allows || s.AdditionalProperties.Schema != nil) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("additionalProperties"), "additionalProperties and properties are mutual exclusive"))
		}
		sub := sv
		if sv.insideResourceMeta {
			// without a value, pruning a default under a metadata map is ambiguous
			sub = sv.withoutDefaults("inside additionalProperties applying to object metadata")
		}
		allErrs = append(allErrs, openAPISchema(s.AdditionalProperties.Schema, fldPath.Child("additionalProperties"), sub, false, opts)...)
	}

	for _, k := range sortedKeys(s.Properties) {
		sub := sv
		if (isRoot || s.XEmbeddedResource) && metaFields[k] {
			sub = sub.withinResourceMeta()
			if isRoot {
				sub = sub.withoutDefaults("in top-level " + k)
			}
		}
		p := s.Properties[k]
		allErrs = append(allErrs, openAPISchema(&p, fldPath.Child("properties").Key(k), sub, false, opts)...)
	}

	allErrs = append(allErrs, openAPISchema(s.Not, fldPath.Child("not"), sv, false, opts)...)
	for i := range s.AllOf {
		allErrs = append(allErrs, openAPISchema(&s.AllOf[i], fldPath.Child("allOf").Index(i), sv, false, opts)...)
	}
	for i := range s.OneOf {
		allErrs = append(allErrs, openAPISchema(&s.OneOf[i], fldPath.Child("oneOf").Index(i), sv, false, opts)...)
	}
	for i := range s.AnyOf {
		allErrs = append(allErrs, openAPISchema(&s.AnyOf[i], fldPath.Child("anyOf").Index(i), sv, false, opts)...)
	}
	for _, k := range sortedKeys(s.Definitions) {
		d := s.Definitions[k]
		allErrs = append(allErrs, openAPISchema(&d, fldPath.Child("definitions").Key(k), sv, false, opts)...)
	}
	if s.Items != nil {
		allErrs = append(allErrs, openAPISchema(s.Items.Schema, fldPath.Child("items"), sv, false, opts)...)
		for i := range s.Items.JSONSchemas {
			allErrs = append(allErrs, openAPISchema(&s.Items.JSONSchemas[i], fldPath.Child("items").Index(i), sv, false, opts)...)
		}
	}
	for _, k := range sortedKeys(s.Dependencies) {
		allErrs = append(allErrs, openAPISchema(s.Dependencies[k].Schema, fldPath.Child("dependencies").Key(k), sv, false, opts)...)
	}

	if s.XPreserveUnknownFields != nil && !*s.XPreserveUnknownFields {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("x-kubernetes-preserve-unknown-fields"), false, "must be true or undefined"))
	}

	allErrs = append(allErrs, mapAndListTypes(s, fldPath, opts)...)
	if !opts.AllowInvalidListMapKeys {
		allErrs = append(allErrs, listMapKeysMapSet(s, fldPath)...)
	}
	allErrs = append(allErrs, validationRules(s, fldPath)...)
	return allErrs
}

func mapAndListTypes(s *apiextv1.JSONSchemaProps, fldPath *field.Path, opts *ValidationOptions) field.ErrorList {
	allErrs := field.ErrorList{}

	if s.XMapType != nil && s.Type != "object" {
		if len(s.Type) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("type"), "must be object if x-kubernetes-map-type is specified"))
		} else {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("type"), s.Type, "must be object if x-kubernetes-map-type is specified"))
		}
	}
	if s.XMapType != nil && *s.XMapType != "atomic" && *s.XMapType != "granular" {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("x-kubernetes-map-type"), *s.XMapType, []string{"atomic", "granular"}))
	}

	if s.XListType != nil && s.Type != "array" {
		if len(s.Type) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("type"), "must be array if x-kubernetes-list-type is specified"))
		} else {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("type"), s.Type, "must be array if x-kubernetes-list-type is specified"))
		}
	} else if !opts.AllowNonAtomicSetItems && nonAtomicSetItems(s) {
		is := s.Items.Schema
		if is.Type == "array" {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("items").Child("x-kubernetes-list-type"), is.XListType, "must be atomic as item of a list with x-kubernetes-list-type=set"))
		} else {
			// kube reports the items' list type here too
			allErrs = append(allErrs, field.Invalid(fldPath.Child("items").Child("x-kubernetes-map-type"), is.XListType, "must be atomic as item of a list with x-kubernetes-list-type=set"))
		}
	}
	if s.XListType != nil && *s.XListType != "atomic" && *s.XListType != "set" && *s.XListType != "map" {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("x-kubernetes-list-type"), *s.XListType, []string{"atomic", "set", "map"}))
	}

	if len(s.XListMapKeys) > 0 {
		if s.XListType == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("x-kubernetes-list-type"), "must be map if x-kubernetes-list-map-keys is non-empty"))
		} else if *s.XListType != "map" {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("x-kubernetes-list-type"), *s.XListType, "must be map if x-kubernetes-list-map-keys is non-empty"))
		}
	}

	if s.XListType != nil && *s.XListType == "map" {
		if len(s.XListMapKeys) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("x-kubernetes-list-map-keys"), "must not be empty if x-kubernetes-list-type is map"))
		}
		if s.Items == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("items"), "must have a schema if x-kubernetes-list-type is map"))
		}
		if s.Items != nil && s.Items.Schema == nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("items"), &internalPropsOrArray{JSONSchemas: toInternalSlice(s.Items.JSONSchemas)}, "must only have a single schema if x-kubernetes-list-type is map"))
		}
		if s.Items != nil && s.Items.Schema != nil && s.Items.Schema.Type != "object" {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("items").Child("type"), s.Items.Schema.Type, "must be object if parent array's x-kubernetes-list-type is map"))
		}
		if s.Items != nil && s.Items.Schema != nil && s.Items.Schema.Type == "object" {
			seen := map[string]bool{}
			for _, k := range s.XListMapKeys {
				if p, ok := s.Items.Schema.Properties[k]; ok {
					if p.Type == "array" || p.Type == "object" {
						// kube reports the items' type as the value
						allErrs = append(allErrs, field.Invalid(fldPath.Child("items").Child("properties").Key(k).Child("type"), s.Items.Schema.Type, "must be a scalar type if parent array's x-kubernetes-list-type is map"))
					}
				} else {
					allErrs = append(allErrs, field.Invalid(fldPath.Child("x-kubernetes-list-map-keys"), s.XListMapKeys, "entries must all be names of item properties"))
				}
				if seen[k] {
					allErrs = append(allErrs, field.Invalid(fldPath.Child("x-kubernetes-list-map-keys"), s.XListMapKeys, "must not contain duplicate entries"))
				}
				seen[k] = true
			}
		}
	}
	return allErrs
}

// nonAtomicSetItems: a set of objects that are not atomic maps, or of
// lists that are not atomic lists.
func nonAtomicSetItems(s *apiextv1.JSONSchemaProps) bool {
	if s.XListType == nil || *s.XListType != "set" || s.Items == nil || s.Items.Schema == nil {
		return false
	}
	is := s.Items.Schema
	switch is.Type {
	case "array":
		return is.XListType != nil && *is.XListType != "atomic"
	case "object":
		return is.XMapType == nil || *is.XMapType != "atomic"
	}
	return false
}

// listMapKeysMapSet: items of set and map lists are not nullable; keys
// of map lists are neither nullable nor optional without a default.
func listMapKeysMapSet(s *apiextv1.JSONSchemaProps, fldPath *field.Path) field.ErrorList {
	if s.Items == nil || s.Items.Schema == nil || s.XListType == nil {
		return nil
	}
	lt := *s.XListType
	if lt != "set" && lt != "map" {
		return nil
	}
	allErrs := field.ErrorList{}
	is := s.Items.Schema
	if is.Nullable {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("items").Child("nullable"), "cannot be nullable when x-kubernetes-list-type is "+lt))
	}
	if lt == "map" {
		for _, k := range s.XListMapKeys {
			p, ok := is.Properties[k]
			if !ok {
				continue // reported with the list type checks
			}
			if !slices.Contains(is.Required, k) && p.Default == nil {
				allErrs = append(allErrs, field.Required(fldPath.Child("items").Child("properties").Key(k).Child("default"), "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"))
			}
			if p.Nullable {
				allErrs = append(allErrs, field.Forbidden(fldPath.Child("items").Child("properties").Key(k).Child("nullable"), "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))
			}
		}
	}
	return allErrs
}

var supportedReasons = []string{
	string(apiextv1.FieldValueDuplicate),
	string(apiextv1.FieldValueForbidden),
	string(apiextv1.FieldValueInvalid),
	string(apiextv1.FieldValueRequired),
}

var lineBreaks = regexp.MustCompile(`[\n\r]+`)

// validationRules checks the static fields of x-kubernetes-validations.
func validationRules(s *apiextv1.JSONSchemaProps, fldPath *field.Path) field.ErrorList {
	allErrs := field.ErrorList{}
	for i, rule := range s.XValidations {
		p := fldPath.Child("x-kubernetes-validations").Index(i)
		r := strings.TrimSpace(rule.Rule)
		msg := strings.TrimSpace(rule.Message)
		switch {
		case len(r) == 0:
			allErrs = append(allErrs, field.Required(p.Child("rule"), "rule is not specified"))
		case len(rule.Message) > 0 && len(msg) == 0:
			allErrs = append(allErrs, field.Invalid(p.Child("message"), rule.Message, "must be non-empty if specified"))
		case lineBreaks.MatchString(msg):
			allErrs = append(allErrs, field.Invalid(p.Child("message"), rule.Message, "must not contain line breaks"))
		case lineBreaks.MatchString(r) && len(msg) == 0:
			allErrs = append(allErrs, field.Required(p.Child("message"), "message must be specified if rule contains line breaks"))
		}
		if len(rule.MessageExpression) > 0 && len(strings.TrimSpace(rule.MessageExpression)) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("messageExpression"), "messageExpression must be non-empty if specified"))
		}
		if rule.Reason != nil && !slices.Contains(supportedReasons, string(*rule.Reason)) {
			allErrs = append(allErrs, field.NotSupported(p.Child("reason"), *rule.Reason, supportedReasons))
		}
		if len(rule.FieldPath) > 0 && len(strings.TrimSpace(rule.FieldPath)) == 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("fieldPath"), rule.FieldPath, "must be non-empty if specified"))
		}
		if lineBreaks.MatchString(rule.FieldPath) {
			allErrs = append(allErrs, field.Invalid(p.Child("fieldPath"), rule.FieldPath, "must not contain line breaks"))
		}
		if len(rule.FieldPath) > 0 && !fieldPathValid(s, rule.FieldPath) {
			allErrs = append(allErrs, field.Invalid(p.Child("fieldPath"), rule.FieldPath, "must be a valid path"))
		}
	}
	return allErrs
}

func fieldPathValid(s *apiextv1.JSONSchemaProps, path string) bool {
	ss, err := NewStructural(s)
	if err != nil {
		return true // reported elsewhere
	}
	_, _, err = ValidFieldPath(path, ss)
	return err == nil
}

// schemaHas tells whether pred holds for s or any schema inside it
// (items, junctors, properties, additionalProperties, patternProperties,
// additionalItems, definitions, dependencies), visited in a fixed order.
func schemaHas(s *apiextv1.JSONSchemaProps, pred func(*apiextv1.JSONSchemaProps) bool) bool {
	if s == nil {
		return false
	}
	if pred(s) {
		return true
	}
	if s.Items != nil {
		if schemaHas(s.Items.Schema, pred) {
			return true
		}
		for i := range s.Items.JSONSchemas {
			if schemaHas(&s.Items.JSONSchemas[i], pred) {
				return true
			}
		}
	}
	for _, list := range [][]apiextv1.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			if schemaHas(&list[i], pred) {
				return true
			}
		}
	}
	if schemaHas(s.Not, pred) {
		return true
	}
	for _, m := range []map[string]apiextv1.JSONSchemaProps{s.Properties} {
		for _, k := range sortedKeys(m) {
			p := m[k]
			if schemaHas(&p, pred) {
				return true
			}
		}
	}
	if s.AdditionalProperties != nil && schemaHas(s.AdditionalProperties.Schema, pred) {
		return true
	}
	for _, m := range []map[string]apiextv1.JSONSchemaProps{s.PatternProperties} {
		for _, k := range sortedKeys(m) {
			p := m[k]
			if schemaHas(&p, pred) {
				return true
			}
		}
	}
	if s.AdditionalItems != nil && schemaHas(s.AdditionalItems.Schema, pred) {
		return true
	}
	for _, k := range sortedKeys(s.Definitions) {
		p := s.Definitions[k]
		if schemaHas(&p, pred) {
			return true
		}
	}
	for _, k := range sortedKeys(s.Dependencies) {
		if schemaHas(s.Dependencies[k].Schema, pred) {
			return true
		}
	}
	return false
}
