package schema

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Reference prefixes and the meta definitions kube's CRD models point to.
const (
	V2RefPrefix = "#/definitions/"
	V3RefPrefix = "#/components/schemas/"

	ObjectMetaDefinition = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	ListMetaDefinition   = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
)

// RefPrefix is the reference prefix of /openapi/v2 or of /openapi/v3.
func RefPrefix(v2 bool) string {
	if v2 {
		return V2RefPrefix
	}
	return V3RefPrefix
}

// DefinitionName is the model name kube gives a custom kind: the group
// reversed, then version and kind (com.example.stable.v1.CronTab).
func DefinitionName(gvk runtimeschema.GroupVersionKind) string {
	parts := strings.Split(gvk.Group, ".")
	slices.Reverse(parts)
	return fmt.Sprintf("%s.%s.%s", strings.Join(parts, "."), gvk.Version, gvk.Kind)
}

// ToOpenAPI is the schema kube publishes for s (the version's structural
// schema, as NewStructural returns it): x-kubernetes-int-or-string nodes
// get anyOf [integer, string] unless they spell it out already. For v2
// (swagger 2.0) kube also drops allOf, anyOf, oneOf, not and defaults,
// turns nullable nodes and arrays without items into untyped ones (and
// takes nullable fields out of required), and drops properties, items and
// the object type under x-kubernetes-preserve-unknown-fields.
func ToOpenAPI(s *Structural, v2 bool) *spec.Schema {
	if s == nil {
		return nil
	}
	s = unfold(s.DeepCopy())
	if v2 {
		toV2(s)
	}
	out := s.toSpec(rawSpec)
	if v2 {
		dropDefaults(out)
	}
	return out
}

// unfold spells out x-kubernetes-int-or-string as anyOf [integer, string]
// (inside allOf when the node has an anyOf of its own).
func unfold(s *Structural) *Structural {
	walk(s, func(s *Structural) {
		if !s.XIntOrString || hasIntOrStringAnyOf(s) || hasIntOrStringAllOf(s) {
			return
		}
		if s.ValueValidation == nil {
			s.ValueValidation = &ValueValidation{}
		}
		pattern := []NestedValueValidation{
			{ForbiddenGenerics: Generic{Type: "integer"}},
			{ForbiddenGenerics: Generic{Type: "string"}},
		}
		if s.ValueValidation.AnyOf == nil {
			s.ValueValidation.AnyOf = pattern
		} else {
			s.ValueValidation.AllOf = append([]NestedValueValidation{{ValueValidation: ValueValidation{AnyOf: pattern}}}, s.ValueValidation.AllOf...)
		}
	})
	return s
}

// walk calls f on s and then on every node below it (properties, items,
// additionalProperties), parents first. f may change the nodes: walk is
// for schemas the caller owns.
func walk(s *Structural, f func(*Structural)) {
	if s == nil {
		return
	}
	f(s)
	walk(s.Items, f)
	for k, p := range s.Properties {
		walk(&p, f)
		s.Properties[k] = p
	}
	walk(s.AdditionalProperties, f)
}

// toV2 turns s into what swagger 2.0 can say.
func toV2(s *Structural) {
	walk(s, func(s *Structural) {
		if v := s.ValueValidation; v != nil {
			v.AllOf, v.OneOf, v.AnyOf, v.Not = nil, nil, nil, nil
		}
		if s.Nullable {
			s.Type = ""
			s.Nullable = false
			s.Items = nil
			s.Properties = nil
		}
		if s.XPreserveUnknownFields {
			s.Items = nil
			s.Properties = nil
		}
		if s.Items == nil && s.Type == "array" {
			s.Type = ""
		}
		if s.XPreserveUnknownFields && s.Type == "object" {
			s.Type = ""
		}
		if v := s.ValueValidation; v != nil {
			for k, p := range s.Properties {
				if p.Nullable {
					v.Required = slices.DeleteFunc(v.Required, func(r string) bool { return r == k })
					if len(v.Required) == 0 {
						v.Required = nil
					}
				}
			}
			if s.AdditionalProperties != nil && s.AdditionalProperties.Nullable {
				v.Required = nil
			}
		}
	})
}

func dropDefaults(s *spec.Schema) {
	if s == nil {
		return
	}
	s.Default = nil
	for k, p := range s.Properties {
		dropDefaults(&p)
		s.Properties[k] = p
	}
	if s.Items != nil {
		dropDefaults(s.Items.Schema)
		for i := range s.Items.Schemas {
			dropDefaults(&s.Items.Schemas[i])
		}
	}
	if s.AdditionalProperties != nil {
		dropDefaults(s.AdditionalProperties.Schema)
	}
	for _, l := range [][]spec.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range l {
			dropDefaults(&l[i])
		}
	}
	dropDefaults(s.Not)
}

// The descriptions kube gives to apiVersion and kind of embedded resources.
const (
	embeddedAPIVersionDescription = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	embeddedKindDescription       = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

func typeMetaProperty(name, description string) spec.Schema {
	if description == "" {
		description = metav1.TypeMeta{}.SwaggerDoc()[name]
	}
	return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}, Description: description}}
}

func gvkExtension(gvk runtimeschema.GroupVersionKind) []any {
	return []any{map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}}
}

// KindSchema is the model kube publishes for the custom kind gvk, whose
// version schema is s: ToOpenAPI(s, v2) with apiVersion and kind,
// metadata as a reference to ObjectMeta (objectMetaRef, e.g.
// V2RefPrefix+ObjectMetaDefinition), the same three fields (apiVersion
// and kind required) in every x-kubernetes-embedded-resource object, and
// x-kubernetes-group-version-kind. kube publishes just {type: object}
// (with the kind) when there is no structural schema (s nil, not
// structural, or with invalid types) and, for v2, when the root preserves
// unknown fields. Server-side apply types custom resources with the v3
// model.
func KindSchema(s *Structural, gvk runtimeschema.GroupVersionKind, v2 bool, objectMetaRef string) spec.Schema {
	if s != nil && (len(ValidateStructural(nil, s)) > 0 || hasInvalidTypes(s)) {
		s = nil
	}
	var out *spec.Schema
	if s == nil || (v2 && s.XPreserveUnknownFields) {
		out = &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
	} else {
		out = ToOpenAPI(s, v2)
		out.SetProperty("metadata", *spec.RefSchema(objectMetaRef).WithDescription(metav1.PartialObjectMetadata{}.SwaggerDoc()["metadata"]))
		out.SetProperty("apiVersion", typeMetaProperty("apiVersion", ""))
		out.SetProperty("kind", typeMetaProperty("kind", ""))
		addEmbeddedMeta(out, v2, objectMetaRef)
	}
	out.AddExtension("x-kubernetes-group-version-kind", gvkExtension(gvk))
	return *out
}

func hasInvalidTypes(s *Structural) bool {
	if s == nil {
		return false
	}
	if s.Type != "" && !v3Types.Has(s.Type) {
		return true
	}
	for _, p := range s.Properties {
		if hasInvalidTypes(&p) {
			return true
		}
	}
	return hasInvalidTypes(s.Items) || hasInvalidTypes(s.AdditionalProperties)
}

func addEmbeddedMeta(s *spec.Schema, v2 bool, objectMetaRef string) {
	if s == nil {
		return
	}
	for k, p := range s.Properties {
		addEmbeddedMeta(&p, v2, objectMetaRef)
		s.Properties[k] = p
	}
	if s.Items != nil {
		addEmbeddedMeta(s.Items.Schema, v2, objectMetaRef)
	}
	if s.AdditionalProperties != nil {
		addEmbeddedMeta(s.AdditionalProperties.Schema, v2, objectMetaRef)
	}
	if keep, ok := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields"); ok && keep && v2 {
		return
	}
	if embedded, ok := s.Extensions.GetBool("x-kubernetes-embedded-resource"); !ok || !embedded {
		return
	}
	s.SetProperty("apiVersion", typeMetaProperty("apiVersion", embeddedAPIVersionDescription))
	s.SetProperty("kind", typeMetaProperty("kind", embeddedKindDescription))
	s.SetProperty("metadata", *spec.RefSchema(objectMetaRef).WithDescription(metav1.PartialObjectMetadata{}.SwaggerDoc()["metadata"]))
	required := slices.Clone(s.Required)
	if !slices.Contains(required, "kind") {
		s.Required = append(s.Required, "kind")
	}
	if !slices.Contains(required, "apiVersion") {
		s.Required = append(s.Required, "apiVersion")
	}
}

// ListSchema is the model kube publishes for the list kind listKind of
// the custom kind gvk (plural is the resource): apiVersion, kind, items
// referring to DefinitionName(gvk) and metadata referring to ListMeta,
// with refPrefix (V2RefPrefix or V3RefPrefix) before both names.
func ListSchema(gvk runtimeschema.GroupVersionKind, listKind, plural string, refPrefix string) spec.Schema {
	itemRef := refPrefix + DefinitionName(gvk)
	s := new(spec.Schema).
		Typed("object", "").
		WithDescription(fmt.Sprintf("%s is a list of %s", listKind, gvk.Kind)).
		WithRequired("items").
		SetProperty("items", *spec.ArrayProperty(spec.RefSchema(itemRef)).
			WithDescription(fmt.Sprintf("List of %s. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", plural))).
		SetProperty("metadata", *spec.RefSchema(refPrefix + ListMetaDefinition).
			WithDescription(metav1beta1.PartialObjectMetadataList{}.SwaggerDoc()["metadata"]))
	s.SetProperty("apiVersion", typeMetaProperty("apiVersion", ""))
	s.SetProperty("kind", typeMetaProperty("kind", ""))
	s.AddExtension("x-kubernetes-group-version-kind", gvkExtension(runtimeschema.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: listKind}))
	return *s
}
