package networking

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// IPAddressStrategy is the strategy of the ipaddresses resource. The name
// of an IPAddress is the address, in canonical form.
type IPAddressStrategy struct{}

var (
	_ registry.Strategy      = IPAddressStrategy{}
	_ registry.NameValidator = IPAddressStrategy{}
)

// NamespaceScoped is false.
func (IPAddressStrategy) NamespaceScoped() bool { return false }

// ValidateName accepts IP addresses in canonical form.
func (IPAddressStrategy) ValidateName(name string, _ bool) []string {
	var msgs []string
	for _, e := range validation.IsValidIP(&field.Path{}, name) {
		msgs = append(msgs, e.Detail)
	}
	return msgs
}

// PrepareForCreate does nothing: an IPAddress has no status.
func (IPAddressStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing: an IPAddress has no status.
func (IPAddressStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate checks the parent reference.
func (IPAddressStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateParentRef(obj.(*networkingv1.IPAddress).Spec.ParentRef, field.NewPath("spec"))
}

// ValidateUpdate checks the parent reference, which never changes.
func (IPAddressStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ip, oldIP := obj.(*networkingv1.IPAddress), old.(*networkingv1.IPAddress)
	errs := validateParentRef(ip.Spec.ParentRef, field.NewPath("spec"))
	return append(errs, apivalidation.ValidateImmutableField(ip.Spec.ParentRef, oldIP.Spec.ParentRef, field.NewPath("spec", "parentRef"))...)
}

// validateParentRef: a reference with a resource and a name; the group may
// be empty (the core group of services).
func validateParentRef(ref *networkingv1.ParentReference, fldPath *field.Path) field.ErrorList {
	if ref == nil {
		return field.ErrorList{field.Required(fldPath.Child("parentRef"), "")}
	}
	p := fldPath.Child("parentRef")
	var errs field.ErrorList
	if ref.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(ref.Group) {
			errs = append(errs, field.Invalid(p.Child("group"), ref.Group, msg))
		}
	}
	errs = append(errs, requiredSegment(ref.Resource, p.Child("resource"))...)
	errs = append(errs, requiredSegment(ref.Name, p.Child("name"))...)
	if ref.Namespace != "" {
		for _, msg := range content.IsPathSegmentName(ref.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), ref.Namespace, msg))
		}
	}
	return errs
}

func requiredSegment(value string, p *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsPathSegmentName(value) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}
