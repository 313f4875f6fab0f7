package apiextensions

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apiextensions/cel"
	"github.com/capstan-io/capstan/apiextensions/schema"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// validateSelectableFields checks a version's selectable fields against its
// schema: each a path of properties (no array notation) outside metadata
// that ends on a string, boolean or integer; unique; at most
// MaxSelectableFields unless allowTooMany. schemaPath is where an
// unconvertible schema is reported.
func validateSelectableFields(fields []apiextv1.SelectableField, props *apiextv1.JSONSchemaProps, schemaPath, fldPath *field.Path, allowTooMany bool) field.ErrorList {
	var errs field.ErrorList
	s, err := schema.NewStructural(props)
	if err != nil {
		// kube goes on with no schema; nothing then resolves.
		errs = append(errs, field.Invalid(schemaPath, "", err.Error()))
	}
	unique := sets.New[string]()
	for i, f := range fields {
		p := fldPath.Index(i).Child("jsonPath")
		if f.JSONPath == "" {
			errs = append(errs, field.Required(p, ""))
			continue
		}
		path, found, err := cel.ValidFieldPath(f.JSONPath, s, cel.WithFieldPathAllowArrayNotation(false))
		if err != nil {
			errs = append(errs, field.Invalid(p, f.JSONPath, fmt.Sprintf("is an invalid path: %v", err)))
			continue
		}
		if path.Root().String() == "metadata" {
			errs = append(errs, field.Invalid(p, f.JSONPath, "must not point to fields in metadata"))
		}
		if found == nil || (found.Type != "string" && found.Type != "boolean" && found.Type != "integer") {
			errs = append(errs, field.Invalid(p, f.JSONPath, "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."))
		}
		if unique.Has(path.String()) {
			errs = append(errs, field.Duplicate(p, f.JSONPath))
		} else {
			unique.Insert(path.String())
		}
	}
	if unique.Len() > MaxSelectableFields && !allowTooMany {
		errs = append(errs, field.TooMany(fldPath, unique.Len(), MaxSelectableFields))
	}
	return errs
}
