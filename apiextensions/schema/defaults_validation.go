package schema

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultValidator checks one default beyond the OpenAPI schema: the CEL
// rules (x-kubernetes-validations) of s, the node the default belongs to.
// path is the default's path (...properties[spec].default); isResourceRoot
// tells that s is the resource root or an embedded resource.
type DefaultValidator func(path *field.Path, s *Structural, isResourceRoot bool, value any) field.ErrorList

// validateDefaults checks every default of a structural schema as kube
// does at CRD validation: a default must be pruned (no unknown fields), its
// embedded metadata must be valid, and it must validate against the schema
// of its node (and the CEL rules there, via celCheck). Defaults under
// apiVersion, kind and metadata of a resource are checked in a resource
// built around them. Defaults under additionalProperties are not checked,
// as in kube.
func validateDefaults(pth *field.Path, s *Structural, requirePruned bool, celCheck DefaultValidator) field.ErrorList {
	root := asResourceRoot(s)
	return defaultsOf(pth, root, root, nil, false, requirePruned, celCheck)
}

func defaultsOf(pth *field.Path, s, root *Structural, at surround, insideMeta, requirePruned bool, celCheck DefaultValidator) field.ErrorList {
	if s == nil {
		return nil
	}
	if s.XEmbeddedResource {
		insideMeta = false
		at = nil
		root = s
	}
	isResourceRoot := s == root

	var allErrs field.ErrorList
	if s.Default != nil {
		allErrs = append(allErrs, checkDefault(pth, s, root, at, insideMeta, isResourceRoot, requirePruned, celCheck)...)
	}
	allErrs = append(allErrs, defaultsOf(pth.Child("items"), s.Items, root, at.index(), insideMeta, requirePruned, celCheck)...)
	for _, k := range sortedKeys(s.Properties) {
		p := s.Properties[k]
		subInsideMeta := insideMeta || (s.XEmbeddedResource && metaFields[k])
		allErrs = append(allErrs, defaultsOf(pth.Child("properties").Key(k), &p, root, at.key(k), subInsideMeta, requirePruned, celCheck)...)
	}
	return allErrs
}

func checkDefault(pth *field.Path, s, root *Structural, at surround, insideMeta, isResourceRoot, requirePruned bool, celCheck DefaultValidator) field.ErrorList {
	defPath := pth.Child("default")
	validator := newRawValidator(s)

	if insideMeta {
		obj, err := at.wrap(runtime.DeepCopyJSONValue(s.Default), true)
		if err != nil {
			return field.ErrorList{field.InternalError(defPath, fmt.Errorf("failed to validate default value inside metadata: %v", err))}
		}
		if ferr, _ := CoerceEmbeddedMeta(nil, obj, root, true, CoerceOptions{}); ferr != nil {
			return field.ErrorList{field.Invalid(defPath, s.Default, fmt.Sprintf("must result in valid metadata: %v", ferr))}
		}
		if errs := ValidateEmbeddedResources(nil, obj, root, true); len(errs) > 0 {
			return field.ErrorList{field.Invalid(defPath, s.Default, fmt.Sprintf("must result in valid metadata: %v", errs.ToAggregate()))}
		}
		if errs := validator.Validate(s.Default, defPath); len(errs) > 0 {
			return errs
		}
		if celCheck != nil {
			return celCheck(defPath, s, isResourceRoot, s.Default)
		}
		return nil
	}

	var allErrs field.ErrorList
	if requirePruned {
		pruned := runtime.DeepCopyJSONValue(s.Default)
		Prune(pruned, s, s.XEmbeddedResource)
		if !reflect.DeepEqual(pruned, s.Default) {
			allErrs = append(allErrs, field.Invalid(defPath, s.Default, "must not have unknown fields"))
		}
	}
	// Coercion works on the default itself, as kube's does.
	if ferr, _ := CoerceEmbeddedMeta(defPath, s.Default, s, s.XEmbeddedResource, CoerceOptions{}); ferr != nil {
		return append(allErrs, ferr)
	}
	if errs := ValidateEmbeddedResources(defPath, s.Default, s, s.XEmbeddedResource); len(errs) > 0 {
		return append(allErrs, errs...)
	}
	if errs := validator.Validate(s.Default, defPath); len(errs) > 0 {
		return append(allErrs, errs...)
	}
	if celCheck != nil {
		allErrs = append(allErrs, celCheck(defPath, s, isResourceRoot, s.Default)...)
	}
	return allErrs
}
