package apiextensions

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/capstan-io/capstan/apiextensions/schema"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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

// internalVersion is a version as kube's internal type, which has no JSON
// tags: kube prints spec.versions in the value of its errors as this
// encodes, with the fields that moved to the spec level null.
type internalVersion struct {
	Name                     string
	Served                   bool
	Storage                  bool
	Deprecated               bool
	DeprecationWarning       *string
	Schema                   *internalValidation
	Subresources             *internalSubresources
	AdditionalPrinterColumns []internalColumn
	SelectableFields         []internalSelectableField
}

type internalValidation struct {
	OpenAPIV3Schema any
}

type internalSubresources struct {
	Status *struct{}
	Scale  *internalScale
}

type internalScale struct {
	SpecReplicasPath   string
	StatusReplicasPath string
	LabelSelectorPath  *string
}

type internalColumn struct {
	Name        string
	Type        string
	Format      string
	Description string
	Priority    int32
	JSONPath    string
}

type internalSelectableField struct {
	JSONPath string
}

// internalVersions is spec.versions as kube prints it in errors.
func (v specView) internalVersions() []internalVersion {
	if v.spec.Versions == nil {
		return nil
	}
	out := make([]internalVersion, len(v.spec.Versions))
	for i, ver := range v.spec.Versions {
		iv := internalVersion{Name: ver.Name, Served: ver.Served, Storage: ver.Storage,
			Deprecated: ver.Deprecated, DeprecationWarning: ver.DeprecationWarning}
		if s := v.versionSchema(i); s != nil {
			iv.Schema = &internalValidation{OpenAPIV3Schema: schema.InternalForm(s.OpenAPIV3Schema)}
		}
		if sub := v.versionSubresources(i); sub != nil {
			iv.Subresources = &internalSubresources{}
			if sub.Status != nil {
				iv.Subresources.Status = &struct{}{}
			}
			if sc := sub.Scale; sc != nil {
				iv.Subresources.Scale = &internalScale{SpecReplicasPath: sc.SpecReplicasPath,
					StatusReplicasPath: sc.StatusReplicasPath, LabelSelectorPath: sc.LabelSelectorPath}
			}
		}
		if cols := v.versionColumns(i); cols != nil {
			iv.AdditionalPrinterColumns = make([]internalColumn, len(cols))
			for j, c := range cols {
				iv.AdditionalPrinterColumns[j] = internalColumn{Name: c.Name, Type: c.Type, Format: c.Format,
					Description: c.Description, Priority: c.Priority, JSONPath: c.JSONPath}
			}
		}
		if sfs := v.versionSelectable(i); sfs != nil {
			iv.SelectableFields = make([]internalSelectableField, len(sfs))
			for j, f := range sfs {
				iv.SelectableFields[j] = internalSelectableField{JSONPath: f.JSONPath}
			}
		}
		out[i] = iv
	}
	return out
}
