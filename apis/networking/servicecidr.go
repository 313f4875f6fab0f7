package networking

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/capstan-io/capstan/registry"
)

// ServiceCIDRStrategy is the strategy of the servicecidrs resource.
type ServiceCIDRStrategy struct{}

var _ registry.Strategy = ServiceCIDRStrategy{}

// NamespaceScoped is false.
func (ServiceCIDRStrategy) NamespaceScoped() bool { return false }

// PrepareForCreate resets the status, which changes through the status
// subresource only.
func (ServiceCIDRStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*networkingv1.ServiceCIDR).Status = networkingv1.ServiceCIDRStatus{}
}

// PrepareForUpdate keeps the status.
func (ServiceCIDRStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*networkingv1.ServiceCIDR).Status = old.(*networkingv1.ServiceCIDR).Status
}

// Validate validates a new service CIDR.
func (ServiceCIDRStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateServiceCIDRSpec(obj.(*networkingv1.ServiceCIDR).Spec.CIDRs, field.NewPath("spec", "cidrs"))
}

// ValidateUpdate: the CIDRs never change, but a single-stack one may gain
// a CIDR of the other family.
func (ServiceCIDRStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	cidrs, oldCIDRs := obj.(*networkingv1.ServiceCIDR).Spec.CIDRs, old.(*networkingv1.ServiceCIDR).Spec.CIDRs
	path := field.NewPath("spec", "cidrs")
	var errs field.ErrorList
	switch {
	case len(oldCIDRs) == len(cidrs):
		for i := range oldCIDRs {
			if oldCIDRs[i] != cidrs[i] {
				errs = append(errs, field.Invalid(path.Index(i), cidrs[i], apivalidation.FieldImmutableErrorMsg))
			}
		}
	case len(oldCIDRs) == 1 && len(cidrs) == 2:
		if cidrs[0] != oldCIDRs[0] {
			errs = append(errs, field.Invalid(path.Index(0), cidrs[0], apivalidation.FieldImmutableErrorMsg))
		}
		errs = append(errs, validateServiceCIDRSpec(cidrs, path)...)
	default:
		errs = append(errs, field.Invalid(path, cidrs, apivalidation.FieldImmutableErrorMsg))
	}
	return errs
}

// validateServiceCIDRSpec: one or two valid CIDRs, of two families.
func validateServiceCIDRSpec(cidrs []string, path *field.Path) field.ErrorList {
	switch {
	case len(cidrs) == 0:
		return field.ErrorList{field.Required(path, "at least one CIDR required")}
	case len(cidrs) > 2:
		return field.ErrorList{field.Invalid(path, networkingv1.ServiceCIDRSpec{CIDRs: cidrs}, "may only hold up to 2 values")}
	}
	var errs field.ErrorList
	for i, c := range cidrs {
		errs = append(errs, validation.IsValidCIDR(path.Index(i), c)...)
	}
	if len(cidrs) == 2 {
		f0, f1 := netutils.IPFamilyOfCIDRString(cidrs[0]), netutils.IPFamilyOfCIDRString(cidrs[1])
		if f0 == f1 && f0 != netutils.IPFamilyUnknown {
			errs = append(errs, field.Invalid(path, cidrs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
	}
	return errs
}

// ServiceCIDRStatusStrategy is the strategy of servicecidrs/status: an
// update changes the status only.
type ServiceCIDRStatusStrategy struct{ ServiceCIDRStrategy }

// PrepareForUpdate keeps the spec and the metadata but for managed fields.
func (ServiceCIDRStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	cidr, oldCIDR := obj.(*networkingv1.ServiceCIDR), old.(*networkingv1.ServiceCIDR)
	cidr.Spec = oldCIDR.Spec
	metav1.ResetObjectMetaForStatus(&cidr.ObjectMeta, &oldCIDR.ObjectMeta)
}

// ValidateUpdate has nothing to check beyond metadata.
func (ServiceCIDRStatusStrategy) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return nil
}

// ServiceCIDRReady reports whether new cluster IPs may come from cidr: it
// is not being deleted and its Ready condition is not False (a CIDR
// without the condition is ready, as kube assumes when no controller
// manages it).
func ServiceCIDRReady(cidr *networkingv1.ServiceCIDR) bool {
	if cidr.DeletionTimestamp != nil {
		return false
	}
	c := findCondition(cidr.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	return c == nil || c.Status != metav1.ConditionFalse
}

func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
