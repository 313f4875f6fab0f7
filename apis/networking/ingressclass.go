package networking

import (
	"context"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/registry"
)

// maxControllerLength is kube's bound on spec.controller.
const maxControllerLength = 250

var parametersScopes = []string{networkingv1.IngressClassParametersReferenceScopeCluster, networkingv1.IngressClassParametersReferenceScopeNamespace}

// IngressClassStrategy is the strategy of the cluster-scoped ingressclasses
// resource.
type IngressClassStrategy struct{}

var (
	_ registry.Strategy  = IngressClassStrategy{}
	_ registry.Defaulter = IngressClassStrategy{}
)

// NamespaceScoped is false.
func (IngressClassStrategy) NamespaceScoped() bool { return false }

// Default makes parameters cluster-scoped unless they say otherwise.
func (IngressClassStrategy) Default(obj runtime.Object) {
	if p := obj.(*networkingv1.IngressClass).Spec.Parameters; p != nil && p.Scope == nil {
		p.Scope = ptr.To(networkingv1.IngressClassParametersReferenceScopeCluster)
	}
}

// PrepareForCreate starts the generation at 1.
func (IngressClassStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*networkingv1.IngressClass).Generation = 1
}

// PrepareForUpdate bumps the generation when the spec changed.
func (IngressClassStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	c, oldC := obj.(*networkingv1.IngressClass), old.(*networkingv1.IngressClass)
	registry.CountSpecChange(c, oldC, &c.Spec, &oldC.Spec)
}

// Validate validates a new ingress class.
func (IngressClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateIngressClassSpec(&obj.(*networkingv1.IngressClass).Spec, field.NewPath("spec"))
}

// ValidateUpdate validates an update: an immutable controller, then the
// rules of a new class.
func (IngressClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	spec, oldSpec := &obj.(*networkingv1.IngressClass).Spec, &old.(*networkingv1.IngressClass).Spec
	errs := apivalidation.ValidateImmutableField(spec.Controller, oldSpec.Controller, field.NewPath("spec", "controller"))
	return append(errs, ValidateIngressClassSpec(spec, field.NewPath("spec"))...)
}

// ValidateIngressClassSpec validates a controller (a domain-prefixed path)
// and the parameters reference.
func ValidateIngressClassSpec(spec *networkingv1.IngressClassSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Controller) > maxControllerLength {
		errs = append(errs, field.TooLong(fldPath.Child("controller"), "", maxControllerLength))
	}
	errs = append(errs, validation.IsDomainPrefixedPath(fldPath.Child("controller"), spec.Controller)...)
	return append(errs, validateParametersReference(spec.Parameters, fldPath.Child("parameters"))...)
}

// validateParametersReference validates a reference to the parameters of a
// class: a typed reference with a scope, and a namespace exactly when the
// scope is Namespace.
func validateParametersReference(p *networkingv1.IngressClassParametersReference, fldPath *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	errs := validateTypedLocalObjectReference(p.APIGroup, p.Kind, p.Name, fldPath)
	if p.Scope == nil {
		return append(errs, field.Required(fldPath.Child("scope"), ""))
	}
	switch scope := *p.Scope; {
	case !slices.Contains(parametersScopes, scope):
		errs = append(errs, field.NotSupported(fldPath.Child("scope"), scope, parametersScopes))
	case scope == networkingv1.IngressClassParametersReferenceScopeNamespace && p.Namespace == nil:
		errs = append(errs, field.Required(fldPath.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
	case scope == networkingv1.IngressClassParametersReferenceScopeNamespace:
		for _, msg := range apivalidation.ValidateNamespaceName(*p.Namespace, false) {
			errs = append(errs, field.Invalid(fldPath.Child("namespace"), *p.Namespace, msg))
		}
	case p.Namespace != nil:
		errs = append(errs, field.Forbidden(fldPath.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
	}
	return errs
}
