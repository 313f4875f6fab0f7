package schema

import (
	"maps"
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// sortedKeys lists a map's keys in order, so that errors come out in the
// same order every time.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// Has tells whether pred holds for s or any schema inside it
// (items, junctors, properties, additionalProperties, patternProperties,
// additionalItems, definitions, dependencies), visited in a fixed order.
func Has(s *apiextv1.JSONSchemaProps, pred func(*apiextv1.JSONSchemaProps) bool) bool {
	if s == nil {
		return false
	}
	if pred(s) {
		return true
	}
	if s.Items != nil {
		if Has(s.Items.Schema, pred) {
			return true
		}
		for i := range s.Items.JSONSchemas {
			if Has(&s.Items.JSONSchemas[i], pred) {
				return true
			}
		}
	}
	for _, list := range [][]apiextv1.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			if Has(&list[i], pred) {
				return true
			}
		}
	}
	if Has(s.Not, pred) {
		return true
	}
	for _, m := range []map[string]apiextv1.JSONSchemaProps{s.Properties} {
		for _, k := range sortedKeys(m) {
			p := m[k]
			if Has(&p, pred) {
				return true
			}
		}
	}
	if s.AdditionalProperties != nil && Has(s.AdditionalProperties.Schema, pred) {
		return true
	}
	for _, m := range []map[string]apiextv1.JSONSchemaProps{s.PatternProperties} {
		for _, k := range sortedKeys(m) {
			p := m[k]
			if Has(&p, pred) {
				return true
			}
		}
	}
	if s.AdditionalItems != nil && Has(s.AdditionalItems.Schema, pred) {
		return true
	}
	for _, k := range sortedKeys(s.Definitions) {
		p := s.Definitions[k]
		if Has(&p, pred) {
			return true
		}
	}
	for _, k := range sortedKeys(s.Dependencies) {
		if Has(s.Dependencies[k].Schema, pred) {
			return true
		}
	}
	return false
}
