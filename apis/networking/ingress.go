package networking

import (
	"context"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// ingressClassAnnotation is the deprecated way to name an ingress's class.
const ingressClassAnnotation = "kubernetes.io/ingress.class"

// IngressStrategy is the strategy of the ingresses resource. Ingresses have
// no defaults in networking.k8s.io/v1: a path's pathType is required.
type IngressStrategy struct{}

var (
	_ registry.Strategy         = IngressStrategy{}
	_ registry.WarningsOnCreate = IngressStrategy{}
)

// NamespaceScoped is true.
func (IngressStrategy) NamespaceScoped() bool { return true }

// PrepareForCreate clears the status and starts the generation at 1.
func (IngressStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	ing := obj.(*networkingv1.Ingress)
	ing.Status = networkingv1.IngressStatus{}
	ing.Generation = 1
}

// PrepareForUpdate keeps the status and bumps the generation when the spec
// changed.
func (IngressStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	ing, oldIng := obj.(*networkingv1.Ingress), old.(*networkingv1.Ingress)
	ing.Status = oldIng.Status
	registry.CountSpecChange(ing, oldIng, &ing.Spec, &oldIng.Spec)
}

// Validate validates a new ingress: its spec, and a class annotation that
// agrees with spec.ingressClassName.
func (IngressStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	ing := obj.(*networkingv1.Ingress)
	errs := ValidateIngressSpec(&ing.Spec, field.NewPath("spec"), ingressOptions{})
	if v, ok := ing.Annotations[ingressClassAnnotation]; ok && ing.Spec.IngressClassName != nil && v != *ing.Spec.IngressClassName {
		// kube's path omits metadata.
		errs = append(errs, field.Invalid(field.NewPath("annotations").Child(ingressClassAnnotation), v,
			"must match `ingressClassName` when both are specified"))
	}
	return errs
}

// ValidateUpdate validates an updated ingress; what old already had that
// the rules no longer accept stays accepted.
func (IngressStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	oldIng := old.(*networkingv1.Ingress)
	opts := ingressOptions{
		allowInvalidSecretName:       hasInvalidSecretName(oldIng),
		allowInvalidWildcardHostRule: hasInvalidWildcardHostRule(oldIng),
	}
	return ValidateIngressSpec(&obj.(*networkingv1.Ingress).Spec, field.NewPath("spec"), opts)
}

// WarningsOnCreate warns about the deprecated class annotation.
func (IngressStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	ing := obj.(*networkingv1.Ingress)
	if _, ok := ing.Annotations[ingressClassAnnotation]; ok && ing.Spec.IngressClassName == nil {
		return []string{fmt.Sprintf("annotation %q is deprecated, please use 'spec.ingressClassName' instead", ingressClassAnnotation)}
	}
	return nil
}

// IngressStatusStrategy is the strategy of ingresses/status.
type IngressStatusStrategy struct{ IngressStrategy }

var _ registry.WarningsOnUpdate = IngressStatusStrategy{}

// PrepareForUpdate keeps the spec of old.
func (IngressStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*networkingv1.Ingress).Spec = old.(*networkingv1.Ingress).Spec
}

// ValidateUpdate validates the load balancer status.
func (IngressStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateIngressLoadBalancerStatus(&obj.(*networkingv1.Ingress).Status.LoadBalancer,
		&old.(*networkingv1.Ingress).Status.LoadBalancer, field.NewPath("status", "loadBalancer"))
}

// WarningsOnUpdate warns about load balancer IPs in ambiguous forms.
func (IngressStatusStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	var warnings []string
	fldPath := field.NewPath("status", "loadBalancer", "ingress")
	for i, lb := range obj.(*networkingv1.Ingress).Status.LoadBalancer.Ingress {
		if lb.IP != "" {
			warnings = append(warnings, validation.GetWarningsForIP(fldPath.Index(i), lb.IP)...)
		}
	}
	return warnings
}
