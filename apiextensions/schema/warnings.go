package schema

import (
	"fmt"
	"sort"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Warnings are what kube tells a client, besides errors, about the
// schemas of a CRD it creates or updates. A CRD strategy sends, on create,
// Warnings(new...) and, on update, NewWarnings(old, new).

// Warnings lists, for the given version schemas (once per schema kube
// validates: a single one when all versions share it), kube's warnings:
// `unrecognized format "x"` for each format kube does not check for the
// node's type (once per occurrence), then the sorted, distinct
// `x-kubernetes-list-type: set for items of type "object" is not
// supported by server-side apply or CEL validation rules` (or "array").
func Warnings(schemas ...*apiextv1.JSONSchemaProps) []string {
	var out []string
	for _, f := range unrecognizedFormats(schemas) {
		out = append(out, fmt.Sprintf("unrecognized format %q", f))
	}
	return append(out, nonScalarSetWarnings(schemas)...)
}

// NewWarnings is Warnings for an update: only the unrecognized formats
// and set warnings the old schemas did not have already.
func NewWarnings(old, schemas []*apiextv1.JSONSchemaProps) []string {
	var out []string
	known := map[string]bool{}
	for _, f := range unrecognizedFormats(old) {
		known[f] = true
	}
	for _, f := range unrecognizedFormats(schemas) {
		if !known[f] {
			out = append(out, fmt.Sprintf("unrecognized format %q", f))
		}
	}
	seen := map[string]bool{}
	for _, w := range nonScalarSetWarnings(old) {
		seen[w] = true
	}
	for _, w := range nonScalarSetWarnings(schemas) {
		if !seen[w] {
			out = append(out, w)
		}
	}
	return out
}

func unrecognizedFormats(schemas []*apiextv1.JSONSchemaProps) []string {
	var out []string
	for _, s := range schemas {
		Has(s, func(s *apiextv1.JSONSchemaProps) bool {
			if unsupportedFormat(s.Type, s.Format) {
				out = append(out, s.Format)
			}
			return false
		})
	}
	return out
}

func nonScalarSetWarnings(schemas []*apiextv1.JSONSchemaProps) []string {
	seen := map[string]bool{}
	for _, s := range schemas {
		Has(s, func(s *apiextv1.JSONSchemaProps) bool {
			if s.XListType != nil && *s.XListType == "set" && s.Items != nil && s.Items.Schema != nil {
				switch t := s.Items.Schema.Type; t {
				case "object", "array":
					seen[fmt.Sprintf("x-kubernetes-list-type: set for items of type %q is not supported by server-side apply or CEL validation rules", t)] = true
				}
			}
			return false
		})
	}
	out := make([]string, 0, len(seen))
	for w := range seen {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}
