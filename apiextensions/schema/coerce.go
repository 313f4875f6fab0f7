package schema

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CoerceResource brings a decoded custom resource of a version with
// schema s into shape, in place, as kube's decoder does after reading a
// request body (or, with DropInvalidFields, an object from storage):
//
//  1. metadata is decoded into ObjectMeta (its unknown fields reported as
//     metadata.<field>, malformed ones dropped with DropInvalidFields);
//  2. unknown fields are pruned (Prune, as a resource root);
//  3. fields that are null without being nullable or defaulted go
//     (PruneNonNullableNullsWithoutDefaults);
//  4. embedded resources' meta is coerced (CoerceEmbeddedMeta);
//  5. apiVersion, kind and metadata (as ObjectMeta encodes) are put back.
//
// It returns the unknown field paths in kube's order (metadata's, then
// pruned, then embedded metadata's) when opts.ReturnUnknownFieldPaths is
// set; kube turns each into a strict decoding error or warning
// `unknown field "<path>"`. Defaults are applied apart, with Default.
// s should be the served schema, whose defaults went through
// PruneDefaults.
func CoerceResource(obj map[string]any, s *Structural, opts CoerceOptions) ([]string, error) {
	kind, foundKind, err := unstructured.NestedString(obj, "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(obj, "apiVersion")
	if err != nil {
		return nil, err
	}
	meta, foundMeta, unknown, err := GetObjectMeta(obj, ObjectMetaOptions{
		DropMalformedFields:     opts.DropInvalidFields,
		ReturnUnknownFieldPaths: opts.ReturnUnknownFieldPaths,
	})
	if err != nil {
		return nil, err
	}

	pruned := Prune(obj, s, true)
	if opts.ReturnUnknownFieldPaths {
		unknown = append(unknown, pruned...)
	}
	PruneNonNullableNullsWithoutDefaults(obj, s)
	ferr, paths := CoerceEmbeddedMeta(nil, obj, s, false, opts)
	if ferr != nil {
		return nil, ferr
	}
	unknown = append(unknown, paths...)

	if foundKind {
		obj["kind"] = kind
	}
	if foundAPIVersion {
		obj["apiVersion"] = apiVersion
	}
	if foundMeta {
		if err := SetObjectMeta(obj, meta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}
