package schema

import (
	"fmt"
	"reflect"
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
		if Has(s, func(s *apiextv1.JSONSchemaProps) bool { return len(s.Type) > 0 && !v3Types.Has(s.Type) }) {
			opts.AllowInvalidTypes = true
		}
		if hasUnprunedDefaults(s) {
			opts.AllowUnprunedDefaults = true
		}
		if Has(s, nonAtomicSetItems) {
			opts.AllowNonAtomicSetItems = true
		}
		if Has(s, func(s *apiextv1.JSONSchemaProps) bool { return len(listMapKeysMapSet(s, nil)) > 0 }) {
			opts.AllowInvalidListMapKeys = true
		}
	}
	return opts
}

func hasUnprunedDefaults(s *apiextv1.JSONSchemaProps) bool {
	if !Has(s, func(s *apiextv1.JSONSchemaProps) bool { return s.Default != nil }) {
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
