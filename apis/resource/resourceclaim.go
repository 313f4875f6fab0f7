package resource

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/request"
)

// NamespaceGetter reads a namespace; admin access to devices depends on
// its labels.
type NamespaceGetter func(ctx context.Context, name string) (*corev1.Namespace, error)

// Access is what the claim strategies consult beyond the object: the
// namespace of a claim asking for admin access, and the authorizer that
// decides who may bind a claim.
type Access struct {
	Namespaces NamespaceGetter
	Authorizer authz.Authorizer
}

var (
	_ registry.Strategy = ResourceClaimStrategy{}
	_ registry.Strategy = ResourceClaimStatusStrategy{}
	_ registry.Strategy = ResourceClaimTemplateStrategy{}
)

// ResourceClaimStrategy is the strategy of the namespaced resourceclaims
// resource: a request for devices, allocated by the scheduler in the
// status; the spec never changes.
type ResourceClaimStrategy struct{ Access Access }

// NamespaceScoped is true.
func (ResourceClaimStrategy) NamespaceScoped() bool { return true }

// PrepareForCreate clears the status and drops the fields of features
// v1.37 has off.
func (ResourceClaimStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	c := obj.(*resourcev1.ResourceClaim)
	c.Status = resourcev1.ResourceClaimStatus{}
	dropClaimAlphaFields(&c.Spec, nil)
}

// PrepareForUpdate keeps the status.
func (ResourceClaimStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	c, oldC := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
	c.Status = oldC.Status
	dropClaimAlphaFields(&c.Spec, &oldC.Spec)
}

// Validate checks admin access against the namespace, then the spec.
func (s ResourceClaimStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	c := obj.(*resourcev1.ResourceClaim)
	errs := s.Access.adminAccess(ctx, c.Namespace, adminRequestPath(c.Spec.Devices.Requests, field.NewPath("spec")))
	return append(errs, validateClaimSpec(&c.Spec, field.NewPath("spec"))...)
}

// ValidateUpdate refuses a change of the spec.
func (ResourceClaimStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return immutableSpec(obj.(*resourcev1.ResourceClaim).Spec, old.(*resourcev1.ResourceClaim).Spec)
}

// ResourceClaimStatusStrategy is the strategy of resourceclaims/status.
type ResourceClaimStatusStrategy struct{ ResourceClaimStrategy }

// PrepareForUpdate keeps the spec and the metadata of old, drops the fields
// of features v1.37 has off and the statuses of deallocated devices.
func (ResourceClaimStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	c, oldC := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
	c.Spec = oldC.Spec
	metav1.ResetObjectMetaForStatus(&c.ObjectMeta, &oldC.ObjectMeta)
	dropClaimStatusAlphaFields(&c.Status, &oldC.Status)
	dropDeallocatedDevices(&c.Status, &oldC.Status)
}

// ValidateUpdate checks admin access of a new allocation against the
// namespace, that the user may bind claims when the allocation or the
// consumers change, then the status.
func (s ResourceClaimStatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
	var errs field.ErrorList
	if adminResultPath(oldC.Status.Allocation) == nil {
		errs = append(errs, s.Access.adminAccess(ctx, c.Namespace, adminResultPath(c.Status.Allocation))...)
	}
	errs = append(errs, s.Access.binding(ctx, &c.Status, &oldC.Status)...)
	return append(errs, validateClaimStatus(c, oldC)...)
}

// ResourceClaimTemplateStrategy is the strategy of the namespaced
// resourceclaimtemplates resource; the spec never changes.
type ResourceClaimTemplateStrategy struct{ Access Access }

// NamespaceScoped is true.
func (ResourceClaimTemplateStrategy) NamespaceScoped() bool { return true }

// PrepareForCreate drops the fields of features v1.37 has off.
func (ResourceClaimTemplateStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	dropClaimAlphaFields(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec, nil)
}

// PrepareForUpdate drops the fields of features v1.37 has off, unless the
// template used them already.
func (ResourceClaimTemplateStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	dropClaimAlphaFields(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec, &old.(*resourcev1.ResourceClaimTemplate).Spec.Spec)
}

// Validate checks admin access against the namespace, then the template's
// metadata and claim spec.
func (s ResourceClaimTemplateStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	t := obj.(*resourcev1.ResourceClaimTemplate)
	errs := s.Access.adminAccess(ctx, t.Namespace, adminRequestPath(t.Spec.Spec.Devices.Requests, field.NewPath("spec")))
	return append(errs, validateClaimSpec(&t.Spec.Spec, field.NewPath("spec", "spec"))...)
}

// ValidateUpdate refuses a change of the spec.
func (ResourceClaimTemplateStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return immutableSpec(obj.(*resourcev1.ResourceClaimTemplate).Spec, old.(*resourcev1.ResourceClaimTemplate).Spec)
}

// adminRequestPath is the path of the first request asking for admin
// access, or nil. kube reports it at spec.devices..., for a template too.
func adminRequestPath(requests []resourcev1.DeviceRequest, spec *field.Path) *field.Path {
	for i, r := range requests {
		if r.Exactly != nil && r.Exactly.AdminAccess != nil && *r.Exactly.AdminAccess {
			return spec.Child("devices", "requests").Index(i).Child("adminAccess")
		}
	}
	return nil
}

func adminResultPath(a *resourcev1.AllocationResult) *field.Path {
	if a == nil {
		return nil
	}
	for i, r := range a.Devices.Results {
		if r.AdminAccess != nil && *r.AdminAccess {
			return field.NewPath("status", "allocation", "devices", "results").Index(i).Child("adminAccess")
		}
	}
	return nil
}

// adminAccess requires the namespace label kube requires of admin access,
// when path (the request asking for it) is not nil.
func (a Access) adminAccess(ctx context.Context, namespace string, path *field.Path) field.ErrorList {
	if path == nil {
		return nil
	}
	if a.Namespaces == nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("could not retrieve namespace to verify admin access: no namespace reader"))}
	}
	ns, err := a.Namespaces(ctx, namespace)
	if err != nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("could not retrieve namespace to verify admin access: %w", err))}
	}
	if ns.Labels[resourcev1.DRAAdminNamespaceLabelKey] != "true" {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("admin access to devices requires the `%s: true` label on the containing namespace",
			resourcev1.DRAAdminNamespaceLabelKey))}
	}
	return nil
}

// binding requires, of a change to the allocation or the consumers, that
// the user may do the request's verb on the synthetic resourceclaims/binding
// subresource, as kube v1.37 does (DRAResourceClaimGranularStatusAuthorization).
func (a Access) binding(ctx context.Context, s, old *resourcev1.ResourceClaimStatus) field.ErrorList {
	if apiequality.Semantic.DeepEqual(s.Allocation, old.Allocation) && apiequality.Semantic.DeepEqual(s.ReservedFor, old.ReservedFor) {
		return nil
	}
	path := field.NewPath("status", "allocation")
	info, ok := request.InfoFrom(ctx)
	u, uok := authn.UserFrom(ctx)
	if !ok || !uok || a.Authorizer == nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("cannot build authorizer attributes: no request or user"))}
	}
	synthetic := *info
	synthetic.Subresource = "binding"
	d, reason, err := a.Authorizer.Authorize(ctx, authz.Attributes{User: u, Info: &synthetic})
	if err == nil && d == authz.Allow {
		return nil
	}
	if reason == "" && err != nil {
		reason = err.Error()
	}
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf(`changing status.allocation or status.reservedFor requires resource="resourceclaims/binding", verb="%s" permission: %s`,
		info.Verb, reason))}
}
