package apiextensions

import (
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// schemaHas reports whether pred holds for s or any schema nested in it
// (items, junctors, properties, additional and pattern properties,
// additionalItems, definitions, dependencies). Maps are walked in key
// order, so that a walk with side effects is deterministic.
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
	if mapHas(s.Properties, pred) {
		return true
	}
	if s.AdditionalProperties != nil && schemaHas(s.AdditionalProperties.Schema, pred) {
		return true
	}
	if mapHas(s.PatternProperties, pred) {
		return true
	}
	if s.AdditionalItems != nil && schemaHas(s.AdditionalItems.Schema, pred) {
		return true
	}
	if mapHas(s.Definitions, pred) {
		return true
	}
	for _, k := range sortedKeys(s.Dependencies) {
		if schemaHas(s.Dependencies[k].Schema, pred) {
			return true
		}
	}
	return false
}

func mapHas[M ~map[string]apiextv1.JSONSchemaProps](m M, pred func(*apiextv1.JSONSchemaProps) bool) bool {
	for _, k := range sortedKeys(m) {
		p := m[k]
		if schemaHas(&p, pred) {
			return true
		}
	}
	return false
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// specSchemas returns the root schema of every version that has one.
func specSchemas(spec *apiextv1.CustomResourceDefinitionSpec) []*apiextv1.JSONSchemaProps {
	var out []*apiextv1.JSONSchemaProps
	for _, v := range spec.Versions {
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			out = append(out, v.Schema.OpenAPIV3Schema)
		}
	}
	return out
}

// specHasSchemaWith reports whether pred holds for a version's root schema.
func specHasSchemaWith(spec *apiextv1.CustomResourceDefinitionSpec, pred func(*apiextv1.JSONSchemaProps) bool) bool {
	return slices.ContainsFunc(specSchemas(spec), pred)
}

func schemaHasDefault(s *apiextv1.JSONSchemaProps) bool {
	return schemaHas(s, func(s *apiextv1.JSONSchemaProps) bool { return s.Default != nil })
}

// allVersionsHaveSchemas reports whether every version has a root schema.
func allVersionsHaveSchemas(spec *apiextv1.CustomResourceDefinitionSpec) bool {
	return len(specSchemas(spec)) == len(spec.Versions)
}
