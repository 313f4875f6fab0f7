package schema

import (
	"regexp"
	"slices"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The checks of ValidateSchema about kube's x-kubernetes-* extensions:
// list and map types, list map keys, and the static fields of
// x-kubernetes-validations rules.

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
