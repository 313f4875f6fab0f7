package apiextensions

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	apiextv1 "github.com/capstan-io/capstan/apis/apiextensions/v1"
)

// specView is a v1 spec as kube's validation sees it. kube validates its
// internal version, into which a v1 CRD converts with every per-version
// field (schema, subresources, printer columns, selectable fields) that is
// the same in all versions moved up to a spec-level field. Errors about
// such a field name the spec-level path (spec.validation.openAPIV3Schema,
// spec.subresources, spec.additionalPrinterColumns[i], spec.selectableFields)
// rather than spec.versions[i]; the view keeps track of that.
type specView struct {
	spec *apiextv1.CustomResourceDefinitionSpec

	// Which fields are shared by all versions (and so live at spec level).
	sharedSchema, sharedSubresources, sharedColumns, sharedSelectable bool
}

func newSpecView(spec *apiextv1.CustomResourceDefinitionSpec) specView {
	v := specView{spec: spec}
	if len(spec.Versions) == 0 {
		return v
	}
	v.sharedSchema, v.sharedSubresources, v.sharedColumns, v.sharedSelectable = true, true, true, true
	first := &spec.Versions[0]
	for i := range spec.Versions[1:] {
		ver := &spec.Versions[i+1]
		v.sharedSchema = v.sharedSchema && apiequality.Semantic.DeepEqual(ver.Schema, first.Schema)
		v.sharedSubresources = v.sharedSubresources && apiequality.Semantic.DeepEqual(ver.Subresources, first.Subresources)
		v.sharedColumns = v.sharedColumns && apiequality.Semantic.DeepEqual(ver.AdditionalPrinterColumns, first.AdditionalPrinterColumns)
		v.sharedSelectable = v.sharedSelectable && apiequality.Semantic.DeepEqual(ver.SelectableFields, first.SelectableFields)
	}
	return v
}

// topVersion is the name kube's internal spec.version gets: the first
// version's, or "" without versions.
func (v specView) topVersion() string {
	if len(v.spec.Versions) == 0 {
		return ""
	}
	return v.spec.Versions[0].Name
}

// topSchema is the spec-level schema (nil unless shared).
func (v specView) topSchema() *apiextv1.CustomResourceValidation {
	if !v.sharedSchema {
		return nil
	}
	return v.spec.Versions[0].Schema
}

// topSubresources is the spec-level subresources (nil unless shared).
func (v specView) topSubresources() *apiextv1.CustomResourceSubresources {
	if !v.sharedSubresources {
		return nil
	}
	return v.spec.Versions[0].Subresources
}

// topColumns is the spec-level printer columns (nil unless shared).
func (v specView) topColumns() []apiextv1.CustomResourceColumnDefinition {
	if !v.sharedColumns {
		return nil
	}
	return v.spec.Versions[0].AdditionalPrinterColumns
}

// topSelectable is the spec-level selectable fields (nil unless shared).
func (v specView) topSelectable() []apiextv1.SelectableField {
	if !v.sharedSelectable {
		return nil
	}
	return v.spec.Versions[0].SelectableFields
}

// versionSchema is version i's own schema (nil when shared).
func (v specView) versionSchema(i int) *apiextv1.CustomResourceValidation {
	if v.sharedSchema {
		return nil
	}
	return v.spec.Versions[i].Schema
}

// versionSubresources is version i's own subresources (nil when shared).
func (v specView) versionSubresources(i int) *apiextv1.CustomResourceSubresources {
	if v.sharedSubresources {
		return nil
	}
	return v.spec.Versions[i].Subresources
}

// versionColumns is version i's own printer columns (nil when shared).
func (v specView) versionColumns(i int) []apiextv1.CustomResourceColumnDefinition {
	if v.sharedColumns {
		return nil
	}
	return v.spec.Versions[i].AdditionalPrinterColumns
}

// versionSelectable is version i's own selectable fields (nil when shared).
func (v specView) versionSelectable(i int) []apiextv1.SelectableField {
	if v.sharedSelectable {
		return nil
	}
	return v.spec.Versions[i].SelectableFields
}

// anyStatus reports whether any version has the status subresource.
func (v specView) anyStatus() bool {
	for _, ver := range v.spec.Versions {
		if ver.Subresources != nil && ver.Subresources.Status != nil {
			return true
		}
	}
	return false
}
