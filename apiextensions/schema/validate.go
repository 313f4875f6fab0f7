package schema

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// Validate checks a custom resource against the schema of its version as
// kube's custom resource strategy does on create, apart from TypeMeta, the
// root ObjectMeta, the scale subresource and CEL rules:
//
//   - the OpenAPI value validation of the whole object (types, required,
//     enum, lengths, patterns, formats kube supports, ...), with kube's
//     messages (spec.replicas: Invalid value: "string": spec.replicas in
//     body must be of type integer: "string");
//   - apiVersion, kind and metadata of x-kubernetes-embedded-resource
//     values (ValidateEmbeddedResources);
//   - uniqueness in x-kubernetes-list-type set and map lists
//     (ValidateListSetsAndMaps).
//
// fldPath prefixes the errors; kube passes nil for a whole object.
//
// Validate prepares the schema on every call; a server keeps one
// NewValidator per version and calls its ValidateObject.
func Validate(obj map[string]any, s *Structural, fldPath *field.Path) field.ErrorList {
	return NewValidator(s).ValidateObject(obj, fldPath)
}

// ValidateUpdate is Validate for an update from old, with kube's
// ratcheting (CRDValidationRatcheting, GA): an OpenAPI validation error is
// dropped when the value it is about is unchanged from old. Values are
// matched with old by object field (properties and additionalProperties
// with a schema) and, in x-kubernetes-list-type: map lists, by the item
// keys; items of other lists, and apiVersion and kind at the root, are
// never matched, so their errors stay unless the whole enclosing value is
// unchanged. List set/map uniqueness is only checked when old passes it;
// embedded resources are checked as on create. CEL rules ratchet in the
// CEL validator, not here.
func ValidateUpdate(obj, old map[string]any, s *Structural, fldPath *field.Path) field.ErrorList {
	return NewValidator(s).ValidateObjectUpdate(obj, old, fldPath)
}

// Validator is the OpenAPI value validation of one schema, built once and
// safe for concurrent use. kube builds one per CRD version, and one for
// the status subresource from properties[status].
type Validator struct {
	structural *Structural
	schema     *spec.Schema
}

// NewValidator prepares the OpenAPI validation of values against s, the
// way kube converts a CRD schema for it: int-or-string nodes accept
// integers and strings, and formats kube does not support are ignored.
// A nil s accepts everything.
func NewValidator(s *Structural) *Validator {
	v := &Validator{structural: s, schema: &spec.Schema{}}
	if s != nil {
		v.schema = s.toSpec(validationSpec)
	}
	return v
}

// newRawValidator validates against the schema as written, which is what
// kube checks defaults with.
func newRawValidator(s *Structural) *Validator {
	return &Validator{structural: s, schema: s.toSpec(rawSpec)}
}

// ValidateObject is the package-level Validate with v's schema.
func (v *Validator) ValidateObject(obj map[string]any, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, v.Validate(obj, fldPath)...)
	allErrs = append(allErrs, ValidateEmbeddedResources(fldPath, obj, v.structural, false)...)
	allErrs = append(allErrs, ValidateListSetsAndMaps(fldPath, v.structural, obj)...)
	return allErrs
}

// ValidateObjectUpdate is the package-level ValidateUpdate with v's
// schema.
func (v *Validator) ValidateObjectUpdate(obj, old map[string]any, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, v.ValidateUpdate(obj, old, fldPath)...)
	allErrs = append(allErrs, ValidateEmbeddedResources(fldPath, obj, v.structural, false)...)
	if len(ValidateListSetsAndMaps(fldPath, v.structural, old)) == 0 {
		allErrs = append(allErrs, ValidateListSetsAndMaps(fldPath, v.structural, obj)...)
	}
	return allErrs
}

// Validate checks value against the OpenAPI schema only (kube validates
// the status subresource so, with a Validator of properties[status] and
// fldPath "status"); errors are prefixed with fldPath.
func (v *Validator) Validate(value any, fldPath *field.Path) field.ErrorList {
	res := validate.NewSchemaValidator(v.schema, nil, "", strfmt.Default).Validate(value)
	return resultToErrors(fldPath, res)
}

// ValidateUpdate checks value, an update of old, with ratcheting (see the
// package-level ValidateUpdate).
func (v *Validator) ValidateUpdate(value, old any, fldPath *field.Path) field.ErrorList {
	c := newCorrelation(value, old, v.structural)
	res := (&ratchetValidator{schema: v.schema, node: c}).Validate(value)
	return resultToErrors(fldPath, res)
}

// resultToErrors turns kube-openapi's result into field errors the way
// kube does, so that users read the same type, path and message.
func resultToErrors(fldPath *field.Path, res *validate.Result) field.ErrorList {
	if res == nil || res.IsValid() {
		return nil
	}
	var allErrs field.ErrorList
	for _, err := range res.Errors {
		verr, ok := err.(*openapierrors.Validation)
		if !ok {
			allErrs = append(allErrs, field.Invalid(fldPath, "", err.Error()))
			continue
		}
		errPath := fldPath
		if len(verr.Name) > 0 && verr.Name != "." {
			errPath = errPath.Child(strings.TrimPrefix(verr.Name, "."))
		}
		value := verr.Value
		if value == nil {
			value = ""
		}
		switch verr.Code() {
		case openapierrors.RequiredFailCode:
			allErrs = append(allErrs, field.Required(errPath, ""))
		case openapierrors.EnumFailCode:
			values := []string{}
			for _, allowed := range verr.Values {
				if s, ok := allowed.(string); ok {
					values = append(values, s)
				} else {
					b, _ := json.Marshal(allowed)
					values = append(values, string(b))
				}
			}
			allErrs = append(allErrs, field.NotSupported(errPath, verr.Value, values))
		case openapierrors.TooLongFailCode:
			allErrs = append(allErrs, field.TooLong(errPath, "", int(asInt64(verr.Valid))))
		case openapierrors.MaxItemsFailCode, openapierrors.TooManyPropertiesCode:
			allErrs = append(allErrs, field.TooMany(errPath, int(asInt64(verr.Value)), int(asInt64(verr.Valid))))
		case openapierrors.InvalidTypeCode:
			allErrs = append(allErrs, field.TypeInvalid(errPath, value, verr.Error()))
		default:
			allErrs = append(allErrs, field.Invalid(errPath, value, verr.Error()))
		}
	}
	return allErrs
}

func asInt64(v any) int64 {
	if i, ok := v.(int64); ok {
		return i
	}
	return -1
}
