package apiextensions

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/capstan-io/capstan/apiextensions/schema"
)

// stringFormats are the string formats kube validates at its default
// compatibility version (1.36 for 1.37), with dashes removed as go-openapi
// normalises format names.
var stringFormats = sets.New(
	"bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac",
	"uuid", "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard",
	"ssn", "hexcolor", "rgbcolor", "byte", "password", "date", "duration", "datetime",
	// since 1.34
	"k8sshortname", "k8slongname",
)

// unrecognizedFormats returns, in walk order, the formats of spec's schemas
// that kube ignores for their type.
func unrecognizedFormats(spec *apiextv1.CustomResourceDefinitionSpec) []string {
	var out []string
	for _, root := range specSchemas(spec) {
		schema.Has(root, func(s *apiextv1.JSONSchemaProps) bool {
			if s.Format != "" && !formatRecognized(s.Type, s.Format) {
				out = append(out, s.Format)
			}
			return false
		})
	}
	return out
}

func formatRecognized(typ, format string) bool {
	switch typ {
	case "", "string":
		return stringFormats.Has(strings.ReplaceAll(format, "-", ""))
	case "integer":
		return format == "int32" || format == "int64"
	case "number":
		return format == "float" || format == "double"
	}
	return false
}

// nonScalarSetWarnings returns, sorted and without duplicates, a warning
// for each item type of an x-kubernetes-list-type=set array that server-side
// apply and CEL cannot handle.
func nonScalarSetWarnings(spec *apiextv1.CustomResourceDefinitionSpec) []string {
	seen := sets.New[string]()
	for _, root := range specSchemas(spec) {
		schema.Has(root, func(s *apiextv1.JSONSchemaProps) bool {
			if s.XListType != nil && *s.XListType == "set" && s.Items != nil && s.Items.Schema != nil {
				if t := s.Items.Schema.Type; t == "object" || t == "array" {
					seen.Insert(fmt.Sprintf("x-kubernetes-list-type: set for items of type %q is not supported by server-side apply or CEL validation rules", t))
				}
			}
			return false
		})
	}
	return sets.List(seen)
}

func formatWarnings(formats []string) []string {
	var out []string
	for _, f := range formats {
		out = append(out, fmt.Sprintf("unrecognized format %q", f))
	}
	return out
}

// createWarnings are the warnings of a new CRD.
func createWarnings(crd *apiextv1.CustomResourceDefinition) []string {
	return append(formatWarnings(unrecognizedFormats(&crd.Spec)), nonScalarSetWarnings(&crd.Spec)...)
}

// updateWarnings are the warnings of an update: only what the old CRD did
// not already have.
func updateWarnings(crd, old *apiextv1.CustomResourceDefinition) []string {
	oldFormats := sets.New(unrecognizedFormats(&old.Spec)...)
	var formats []string
	for _, f := range unrecognizedFormats(&crd.Spec) {
		if !oldFormats.Has(f) {
			formats = append(formats, f)
		}
	}
	oldSets := nonScalarSetWarnings(&old.Spec)
	var setWarnings []string
	for _, w := range nonScalarSetWarnings(&crd.Spec) {
		if !slices.Contains(oldSets, w) {
			setWarnings = append(setWarnings, w)
		}
	}
	return append(formatWarnings(formats), setWarnings...)
}
