package apiextensions

import (
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/capstan-io/capstan/apiextensions/schema"
)

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
	return schema.Has(s, func(s *apiextv1.JSONSchemaProps) bool { return s.Default != nil })
}

// allVersionsHaveSchemas reports whether every version has a root schema.
func allVersionsHaveSchemas(spec *apiextv1.CustomResourceDefinitionSpec) bool {
	return len(specSchemas(spec)) == len(spec.Versions)
}
