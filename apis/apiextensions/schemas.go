package apiextensions

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apiextensions/cel"
	"github.com/capstan-io/capstan/apiextensions/schema"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// schemaOptions are the switches of the schema checks of one CRD
// validation.
type schemaOptions struct {
	ctx context.Context
	// ratchet relaxes the checks an old CRD already failed.
	ratchet schema.ValidationOptions
	// existing are the CEL expressions of the old CRD (nil on create).
	existing *cel.Expressions
	// unchanged are the versions whose schema an update leaves alone:
	// their expressions are not held to the per-expression cost limit.
	unchanged sets.Set[string]

	// suppressCost is set by forVersion.
	suppressCost bool
}

func createSchemaOptions(ctx context.Context) schemaOptions {
	return schemaOptions{ctx: ctx}
}

func updateSchemaOptions(ctx context.Context, spec, oldSpec *apiextv1.CustomResourceDefinitionSpec) schemaOptions {
	opts := schemaOptions{
		ctx:       ctx,
		ratchet:   schema.RatchetOptions(specSchemas(oldSpec)...),
		existing:  &cel.Expressions{},
		unchanged: sets.New[string](),
	}
	for _, s := range specSchemas(oldSpec) {
		schema.Has(s, func(s *apiextv1.JSONSchemaProps) bool {
			opts.existing.Add(s.XValidations)
			return false
		})
	}
	for _, v := range spec.Versions {
		for _, o := range oldSpec.Versions {
			if o.Name == v.Name {
				if apiequality.Semantic.DeepEqual(v.Schema, o.Schema) {
					opts.unchanged.Insert(v.Name)
				}
				break
			}
		}
	}
	return opts
}

// forVersion returns the options for the schema of the named version.
func (o schemaOptions) forVersion(name string) schemaOptions {
	if o.unchanged.Has(name) {
		o.suppressCost = true
	}
	return o
}

// validateSchema validates the schema of a version (or the schema shared
// by all, at spec.validation) as kube does: the OpenAPI and structural
// rules and defaults (apiextensions/schema), then the compilation and cost
// of the CEL rules (apiextensions/cel). fldPath is the
// CustomResourceValidation's path; errors name its openAPIV3Schema.
func validateSchema(val *apiextv1.CustomResourceValidation, statusEnabled bool, opts schemaOptions, fldPath *field.Path) field.ErrorList {
	if val == nil || val.OpenAPIV3Schema == nil {
		return nil
	}
	props := val.OpenAPIV3Schema
	schemaPath := fldPath.Child("openAPIV3Schema")
	vopts := opts.ratchet
	vopts.StatusSubresource = statusEnabled
	vopts.ValidateDefault = defaultRules(opts.ctx)
	// The schema package always checks structure: a CRD with
	// preserveUnknownFields true and a non-structural schema is the one
	// kube still accepts and capstan does not (see the report).
	errs := schema.ValidateSchema(props, schemaPath, vopts)
	if len(errs) > 0 {
		// kube compiles the rules of the parts of a structural schema
		// without errors; capstan waits for the whole schema to be valid,
		// which also keeps the rules' field errors from being reported
		// twice.
		return errs
	}
	s, err := schema.NewStructural(props)
	if err != nil {
		return field.ErrorList{field.Invalid(schemaPath, "", err.Error())}
	}
	return cel.ValidateRules(s, schemaPath, cel.CompileOptions{
		Existing:                  opts.existing,
		SuppressPerExpressionCost: opts.suppressCost,
	})
}

// defaultRules checks defaults against the CEL rules of their nodes, as
// kube does, within one runtime cost budget for the whole schema: as a
// create (old value the default) and as an update from nothing.
func defaultRules(ctx context.Context) schema.DefaultValidator {
	if ctx == nil {
		ctx = context.Background()
	}
	remaining := int64(cel.RuntimeCELCostBudget)
	return func(path *field.Path, s *schema.Structural, isResourceRoot bool, value any) field.ErrorList {
		if remaining < 0 {
			return nil
		}
		v := cel.NewValidator(s, isResourceRoot, cel.PerCallLimit)
		if v == nil {
			return nil
		}
		errs, left := v.Validate(ctx, path, value, value, remaining)
		if len(errs) == 0 {
			more, leftNoOld := v.Validate(ctx, path, value, nil, remaining)
			errs = append(errs, more...)
			left = min(left, leftNoOld)
		}
		remaining = left
		return errs
	}
}
