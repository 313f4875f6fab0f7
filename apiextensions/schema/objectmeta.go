package schema

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// CoerceOptions say how CoerceEmbeddedMeta treats what ObjectMeta cannot
// hold.
type CoerceOptions struct {
	// DropInvalidFields drops malformed apiVersion, kind and metadata
	// fields instead of failing (kube does so when reading from storage).
	DropInvalidFields bool
	// ReturnUnknownFieldPaths collects the paths of the metadata fields
	// ObjectMeta does not know (for warnings and strict decoding).
	ReturnUnknownFieldPaths bool
}

// CoerceEmbeddedMeta normalizes, in place, the apiVersion, kind and
// metadata of every embedded resource in obj (and of obj itself with
// isResourceRoot): apiVersion and kind must be strings, metadata is
// decoded into ObjectMeta and encoded back, which drops the fields
// ObjectMeta does not know and an empty creationTimestamp. It returns the
// first error and the sorted paths of unknown metadata fields.
//
// kube runs this on custom resources with isResourceRoot false: the root
// metadata is the decoder's business.
func CoerceEmbeddedMeta(pth *field.Path, obj any, s *Structural, isResourceRoot bool, opts CoerceOptions) (*field.Error, []string) {
	if isResourceRoot {
		s = asResourceRoot(s)
	}
	c := coercer{opts: opts}
	err := c.coerce(pth, obj, s)
	sort.Strings(c.unknown)
	return err, c.unknown
}

type coercer struct {
	opts    CoerceOptions
	unknown []string
}

func (c *coercer) coerce(pth *field.Path, x any, s *Structural) *field.Error {
	if s == nil {
		return nil
	}
	switch x := x.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			v := x[k]
			if s.XEmbeddedResource {
				switch k {
				case "apiVersion", "kind":
					if _, ok := v.(string); !ok {
						if !c.opts.DropInvalidFields {
							return field.Invalid(pth.Child(k), v, "must be a string")
						}
						delete(x, k)
					}
				case "metadata":
					meta, found, unknown, err := GetObjectMeta(x, ObjectMetaOptions{
						DropMalformedFields:     c.opts.DropInvalidFields,
						ReturnUnknownFieldPaths: c.opts.ReturnUnknownFieldPaths,
						ParentPath:              pth,
					})
					c.unknown = append(c.unknown, unknown...)
					if err != nil {
						if !c.opts.DropInvalidFields {
							return field.Invalid(pth.Child("metadata"), v, err.Error())
						}
					} else if found {
						if err := SetObjectMeta(x, meta); err != nil {
							return field.Invalid(pth.Child("metadata"), v, err.Error())
						}
						if meta.CreationTimestamp.IsZero() {
							if m, ok := x["metadata"].(map[string]any); ok {
								delete(m, "creationTimestamp")
							}
						}
					}
				}
			}
			if prop, ok := s.Properties[k]; ok {
				if err := c.coerce(pth.Child(k), v, &prop); err != nil {
					return err
				}
			} else if s.HasAdditionalProperties() {
				if err := c.coerce(pth.Key(k), v, s.AdditionalProperties); err != nil {
					return err
				}
			}
		}
	case []any:
		for i, v := range x {
			if err := c.coerce(pth.Index(i), v, s.Items); err != nil {
				return err
			}
		}
	}
	return nil
}

// ObjectMetaOptions say how GetObjectMeta decodes metadata.
type ObjectMetaOptions struct {
	// DropMalformedFields keeps the fields that decode on their own
	// when the whole metadata does not.
	DropMalformedFields bool
	// ReturnUnknownFieldPaths reports the fields ObjectMeta does not know,
	// as ParentPath.metadata.<field>.
	ReturnUnknownFieldPaths bool
	ParentPath              *field.Path
}

// GetObjectMeta decodes obj["metadata"] into ObjectMeta as kube does; found
// is false when obj has no metadata.
func GetObjectMeta(obj map[string]any, opts ObjectMetaOptions) (meta *metav1.ObjectMeta, found bool, unknown []string, err error) {
	metadata, ok := obj["metadata"]
	if !ok {
		return nil, false, nil, nil
	}
	raw, err := utiljson.Marshal(metadata)
	if err != nil {
		return nil, false, nil, err
	}
	prefix := opts.ParentPath.Child("metadata").String()
	meta = &metav1.ObjectMeta{}
	var decodeErr error
	if opts.ReturnUnknownFieldPaths {
		var strict []error
		strict, decodeErr = kjson.UnmarshalStrict(raw, meta)
		if decodeErr == nil {
			return meta, true, unknownPaths(prefix, strict), nil
		}
	} else if decodeErr = utiljson.Unmarshal(raw, meta); decodeErr == nil {
		return meta, true, nil, nil
	}
	if !opts.DropMalformedFields {
		return nil, true, nil, decodeErr
	}

	// Keep what decodes field by field.
	m, ok := metadata.(map[string]any)
	if !ok {
		return nil, false, nil, fmt.Errorf("invalid metadata: expected object, got %T", metadata)
	}
	meta = &metav1.ObjectMeta{}
	probe := &metav1.ObjectMeta{}
	for _, k := range sortedKeys(m) {
		one, err := utiljson.Marshal(map[string]any{k: m[k]})
		if err != nil || utiljson.Unmarshal(one, probe) != nil {
			continue
		}
		if opts.ReturnUnknownFieldPaths {
			strict, _ := kjson.UnmarshalStrict(one, meta)
			unknown = append(unknown, unknownPaths(prefix, strict)...)
		} else {
			_ = utiljson.Unmarshal(one, meta)
		}
	}
	return meta, true, unknown, nil
}

func unknownPaths(prefix string, strict []error) []string {
	var out []string
	for _, e := range strict {
		if fe, ok := e.(kjson.FieldError); ok {
			out = append(out, prefix+"."+fe.FieldPath())
		}
	}
	return out
}

// SetObjectMeta stores meta as obj["metadata"] (or removes it for nil).
func SetObjectMeta(obj map[string]any, meta *metav1.ObjectMeta) error {
	if meta == nil {
		delete(obj, "metadata")
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(meta)
	if err != nil {
		return err
	}
	obj["metadata"] = m
	return nil
}

// ValidateEmbeddedResources checks the TypeMeta and ObjectMeta of every
// x-kubernetes-embedded-resource value in obj (and of obj itself with
// isResourceRoot): apiVersion and kind are required, non-empty strings, a
// valid group version and a DNS-1035 kind (case aside); metadata is valid
// ObjectMeta of a create, a missing name being allowed.
func ValidateEmbeddedResources(pth *field.Path, obj any, s *Structural, isResourceRoot bool) field.ErrorList {
	if isResourceRoot {
		s = asResourceRoot(s)
	}
	return validateEmbedded(pth, obj, s)
}

func validateEmbedded(pth *field.Path, x any, s *Structural) field.ErrorList {
	if s == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch x := x.(type) {
	case map[string]any:
		if s.XEmbeddedResource {
			allErrs = append(allErrs, validateTypeAndObjectMeta(pth, x)...)
		}
		for _, k := range sortedKeys(x) {
			if prop, ok := s.Properties[k]; ok {
				allErrs = append(allErrs, validateEmbedded(pth.Child(k), x[k], &prop)...)
			} else if s.HasAdditionalProperties() {
				allErrs = append(allErrs, validateEmbedded(pth.Key(k), x[k], s.AdditionalProperties)...)
			}
		}
	case []any:
		for i, v := range x {
			allErrs = append(allErrs, validateEmbedded(pth.Index(i), v, s.Items)...)
		}
	}
	return allErrs
}

func validateTypeAndObjectMeta(pth *field.Path, x map[string]any) field.ErrorList {
	var allErrs field.ErrorList
	if _, ok := x["apiVersion"]; !ok {
		allErrs = append(allErrs, field.Required(pth.Child("apiVersion"), ""))
	}
	if _, ok := x["kind"]; !ok {
		allErrs = append(allErrs, field.Required(pth.Child("kind"), ""))
	}
	if v, ok := x["apiVersion"]; ok {
		apiVersion, isString := v.(string)
		switch {
		case !isString:
			allErrs = append(allErrs, field.Invalid(pth.Child("apiVersion"), v, "must be a string"))
		case len(apiVersion) == 0:
			allErrs = append(allErrs, field.Invalid(pth.Child("apiVersion"), apiVersion, "must not be empty"))
		default:
			if _, err := runtimeschema.ParseGroupVersion(apiVersion); err != nil {
				allErrs = append(allErrs, field.Invalid(pth.Child("apiVersion"), apiVersion, err.Error()))
			}
		}
	}
	if v, ok := x["kind"]; ok {
		kind, isString := v.(string)
		switch {
		case !isString:
			allErrs = append(allErrs, field.Invalid(pth.Child("kind"), v, "must be a string"))
		case len(kind) == 0:
			allErrs = append(allErrs, field.Invalid(pth.Child("kind"), kind, "must not be empty"))
		default:
			if errs := utilvalidation.IsDNS1035Label(strings.ToLower(kind)); len(errs) > 0 {
				allErrs = append(allErrs, field.Invalid(pth.Child("kind"), kind, "may have mixed case, but should otherwise match: "+strings.Join(errs, ",")))
			}
		}
	}
	if v, ok := x["metadata"]; ok {
		meta, _, _, err := GetObjectMeta(x, ObjectMetaOptions{})
		if err != nil {
			allErrs = append(allErrs, field.Invalid(pth.Child("metadata"), v, err.Error()))
		} else {
			if len(meta.Name) == 0 {
				meta.Name = "fakename" // a missing name is fine in an embedded object
			}
			allErrs = append(allErrs, metavalidation.ValidateObjectMetaDeclaratively(context.Background(), operation.Create, meta, nil,
				len(meta.Namespace) > 0, pathSegmentName, pth.Child("metadata"), true)...)
		}
	}
	return allErrs
}

func pathSegmentName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}
