// Package customresource holds what the generic registry needs to serve the
// custom resources of one version of a CustomResourceDefinition: the
// Strategy (status reset, generation, schema, CEL and scale validation,
// selectable fields), the status strategy, the scale subresource and the
// table of additionalPrinterColumns. Custom resources are
// *unstructured.Unstructured throughout.
package customresource

import (
	"context"
	"fmt"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apiextensions/cel"
	crschema "github.com/capstan-io/capstan/apiextensions/schema"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/warning"
)

// StrategyOptions describe one served version of a CRD.
type StrategyOptions struct {
	// Namespaced is the CRD's scope.
	Namespaced bool
	// Kind is the group, version and kind of the custom resources.
	Kind schema.GroupVersionKind
	// Schema is the version's structural schema; nil accepts everything.
	Schema *crschema.Structural
	// CEL evaluates the schema's x-kubernetes-validations; nil when there
	// are none. Build it with cel.NewValidator(Schema, true, cel.PerCallLimit).
	CEL *cel.Validator
	// Status is true when the status subresource is enabled.
	Status bool
	// Scale is the scale subresource, nil when it is disabled.
	Scale *apiextv1.CustomResourceSubresourceScale
	// SelectableFields are the version's field selector fields, besides
	// metadata.name and metadata.namespace.
	SelectableFields []apiextv1.SelectableField
}

// Strategy is the registry strategy of the custom resources of one CRD
// version.
type Strategy struct {
	namespaced bool
	kind       schema.GroupVersionKind
	schema     *crschema.Structural
	// validator is the OpenAPI validation of the whole object.
	validator *crschema.Validator
	// statusValidator is the OpenAPI validation of .status alone, for
	// the status subresource.
	statusValidator *crschema.Validator
	cel             *cel.Validator
	status          bool
	scale           *apiextv1.CustomResourceSubresourceScale
	selectable      []selectableField
}

var (
	_ registry.Strategy             = (*Strategy)(nil)
	_ registry.Defaulter            = (*Strategy)(nil)
	_ registry.FieldSelectable      = (*Strategy)(nil)
	_ registry.WarningsOnCreate     = (*Strategy)(nil)
	_ registry.WarningsOnUpdate     = (*Strategy)(nil)
	_ registry.UnconditionalUpdater = (*Strategy)(nil)
)

// NewStrategy returns the strategy of a CRD version.
func NewStrategy(o StrategyOptions) *Strategy {
	s := &Strategy{
		namespaced: o.Namespaced, kind: o.Kind, schema: o.Schema, cel: o.CEL,
		status: o.Status, scale: o.Scale, selectable: prepareSelectableFields(o.SelectableFields),
	}
	var statusSchema *crschema.Structural
	if o.Schema != nil {
		if st, ok := o.Schema.Properties["status"]; ok {
			statusSchema = &st
		}
	}
	s.validator = crschema.NewValidator(o.Schema)
	s.statusValidator = crschema.NewValidator(statusSchema)
	return s
}

// StatusStrategy returns the strategy of the status subresource.
func (s *Strategy) StatusStrategy() *StatusStrategy { return &StatusStrategy{Strategy: s} }

// NamespaceScoped reports the CRD's scope.
func (s *Strategy) NamespaceScoped() bool { return s.namespaced }

// AllowUnconditionalUpdate is false: an update of a custom resource must
// name the resourceVersion it updates, as in kube.
func (s *Strategy) AllowUnconditionalUpdate() bool { return false }

// Default applies the schema's defaults.
func (s *Strategy) Default(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok && s.schema != nil {
		crschema.Default(u.Object, s.schema)
	}
}

// PrepareForCreate drops the status when it has its own subresource and
// starts the generation at 1.
func (s *Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	u := obj.(*unstructured.Unstructured)
	if s.status {
		delete(u.Object, "status")
	}
	u.SetGeneration(1)
}

// PrepareForUpdate keeps the old status when it has its own subresource,
// and bumps the generation when anything but metadata changed.
func (s *Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	u, oldU := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
	if s.status {
		if status, ok := oldU.Object["status"]; ok {
			u.Object["status"] = status
		} else {
			delete(u.Object, "status")
		}
	}
	if !apiequality.Semantic.DeepEqual(withoutMetadata(u.Object), withoutMetadata(oldU.Object)) {
		u.SetGeneration(oldU.GetGeneration() + 1)
	}
}

// withoutMetadata is a shallow copy of obj without its metadata.
func withoutMetadata(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "metadata" {
			out[k] = v
		}
	}
	return out
}

// Validate checks a new custom resource: apiVersion and kind, the schema
// (with embedded resources and list sets and maps), the scale paths and,
// unless the schema already failed in a way that makes rules meaningless,
// the CEL rules. The Store validates the root ObjectMeta.
func (s *Strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return field.ErrorList{notUnstructured(obj)}
	}
	errs := s.validateTypeMeta(u)
	// The Store reports the errors of ObjectMeta; they only decide here,
	// as in kube, whether CEL rules run.
	var metaErrs field.ErrorList
	if len(errs) == 0 {
		metaErrs = s.metaErrors(u, nil)
		errs = append(errs, validateMetadataShape(u)...)
		errs = append(errs, s.validator.Validate(u.Object, nil)...)
		errs = append(errs, s.validateScaleSpec(u)...)
		errs = append(errs, s.validateScaleStatus(u)...)
	}
	errs = append(errs, crschema.ValidateEmbeddedResources(nil, u.Object, s.schema, false)...)
	errs = append(errs, crschema.ValidateListSetsAndMaps(nil, s.schema, u.Object)...)
	return append(errs, s.validateCEL(ctx, hasBlockingErr(metaErrs) || hasBlockingErr(errs), u, nil)...)
}

// ValidateUpdate checks an update as Validate does a create, with kube's
// ratcheting: schema errors and CEL rule failures about values that did
// not change do not fail the update.
func (s *Strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	// kube times the comparisons of old and new values; they are spread
	// through capstan's validation of an update, so it is timed whole.
	defer func(start time.Time) { metrics.CRDRatcheting(time.Since(start)) }(time.Now())
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return field.ErrorList{notUnstructured(obj)}
	}
	oldU, ok := old.(*unstructured.Unstructured)
	if !ok {
		return field.ErrorList{notUnstructured(old)}
	}
	errs := s.validateTypeMeta(u)
	// The Store reports the errors of ObjectMeta; they only decide here,
	// as in kube, whether CEL rules run.
	var metaErrs field.ErrorList
	if len(errs) == 0 {
		metaErrs = s.metaErrors(u, oldU)
		errs = append(errs, validateMetadataShape(u)...)
		errs = append(errs, s.validator.ValidateUpdate(u.Object, oldU.Object, nil)...)
		errs = append(errs, s.validateScaleSpec(u)...)
		errs = append(errs, s.validateScaleStatus(u)...)
	}
	// Embedded resources do not ratchet; list sets and maps are checked
	// only when the old object passed them.
	errs = append(errs, crschema.ValidateEmbeddedResources(nil, u.Object, s.schema, false)...)
	if len(crschema.ValidateListSetsAndMaps(nil, s.schema, oldU.Object)) == 0 {
		errs = append(errs, crschema.ValidateListSetsAndMaps(nil, s.schema, u.Object)...)
	}
	return append(errs, s.validateCEL(ctx, hasBlockingErr(metaErrs) || hasBlockingErr(errs), u, oldU)...)
}

// validateCEL runs the CEL rules within kube's runtime cost budget, or,
// when blocked by an error that rules could trip over (a wrong type, a
// missing required field, ...), says that they were not run. A non-nil old
// ratchets the rules: a ratcheted failure is a Warning header of the
// request, not an error.
func (s *Strategy) validateCEL(ctx context.Context, blocked bool, u, old *unstructured.Unstructured) field.ErrorList {
	if s.cel == nil {
		return nil
	}
	if blocked {
		return field.ErrorList{field.Invalid(nil, nil,
			"some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")}
	}
	var opts []cel.Option
	var oldObj any
	if old != nil {
		oldObj = old.Object
		// kube warns of the failures it ratchets (schema errors it ratchets
		// silently)
		warn := func(msg string) { warning.Add(ctx, msg) }
		opts = append(opts, cel.WithRatcheting(cel.NewCorrelatedObject(u.Object, old.Object, s.schema), warn))
	}
	celErrs, _ := s.cel.Validate(ctx, nil, u.Object, oldObj, cel.RuntimeCELCostBudget, opts...)
	return celErrs
}

// metaErrors are the errors of the ObjectMeta of u (an update of old when
// old is not nil) that kube's custom resource validation finds before it
// runs CEL rules.
func (s *Strategy) metaErrors(u, old *unstructured.Unstructured) field.ErrorList {
	if validateMetadataShape(u) != nil {
		return nil
	}
	if old == nil {
		return apivalidation.ValidateObjectMetaAccessor(u, s.namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	}
	if validateMetadataShape(old) != nil {
		return nil
	}
	return apivalidation.ValidateObjectMetaAccessorUpdate(u, old, field.NewPath("metadata"))
}

// hasBlockingErr reports whether errs hold an error of the kinds kube
// lets block CEL rules: those of types, required fields, enums and sizes.
func hasBlockingErr(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong,
			field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// WarningsOnCreate warns about finalizers whose names kube advises against.
func (s *Strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return finalizerWarnings(obj, nil)
}

// WarningsOnUpdate warns about the added finalizers whose names kube
// advises against.
func (s *Strategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	return finalizerWarnings(obj, old)
}

// Fields returns the values of the CRD's selectable fields.
func (s *Strategy) Fields(obj runtime.Object) fields.Set {
	return s.selectableFields(obj)
}

func notUnstructured(obj runtime.Object) *field.Error {
	return field.Invalid(field.NewPath(""), obj, fmt.Sprintf("has type %T. Must be a pointer to an Unstructured type", obj))
}

// validateTypeMeta checks that apiVersion and kind are those of the CRD
// version.
func (s *Strategy) validateTypeMeta(u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if kind := u.GetKind(); kind != s.kind.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), kind, "must be "+s.kind.Kind))
	}
	want := s.kind.Group + "/" + s.kind.Version
	if apiVersion := u.GetAPIVersion(); apiVersion != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), apiVersion, "must be "+want))
	}
	return errs
}

// validateMetadataShape reports metadata that does not decode as
// ObjectMeta. The Store validates ObjectMeta's content.
func validateMetadataShape(u *unstructured.Unstructured) field.ErrorList {
	raw := u.Object["metadata"]
	if raw == nil {
		return nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, fmt.Sprintf("expected map[string]interface{}, got %T", raw))}
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &metav1.ObjectMeta{}); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
	}
	return nil
}
