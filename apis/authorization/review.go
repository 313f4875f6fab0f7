// Package authorization serves authorization.k8s.io/v1: reviews that ask
// the server's authorizer whether a user may do something (kubectl auth
// can-i) or what a user may do in a namespace (kubectl auth can-i --list).
// Nothing is stored.
package authorization

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
)

// invalid is kube's 422 for a review: its message and details name no kind
// (".authorization.k8s.io \"\" is invalid"), as kube's reviews lose theirs
// on decoding.
func invalid(errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: authorizationv1.GroupName}, "", errs)
}

func notA(kind string) error { return apierrors.NewBadRequest("not a " + kind) }

// admit runs admission's validation on a copy of the review.
func admit(ctx context.Context, validate rest.ValidateObjectFunc, obj runtime.Object) error {
	if validate == nil {
		return nil
	}
	return validate(ctx, obj.DeepCopyObject())
}

// SubjectAccessReviewREST answers whether a given user may do something.
type SubjectAccessReviewREST struct{ Authorizer authz.Authorizer }

var _ rest.Creater = SubjectAccessReviewREST{}

// New returns an empty SubjectAccessReview.
func (SubjectAccessReviewREST) New() runtime.Object { return &authorizationv1.SubjectAccessReview{} }

// NamespaceScoped is false.
func (SubjectAccessReviewREST) NamespaceScoped() bool { return false }

// Create returns the review with its status.
func (s SubjectAccessReviewREST) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.SubjectAccessReview)
	if !ok {
		return nil, notA("SubjectAccessReview")
	}
	errs := validateSpec(&sar.Spec)
	if errs = append(errs, validateEmptyMeta(sar.ObjectMeta, false)...); len(errs) > 0 {
		return nil, invalid(errs)
	}
	if err := admit(ctx, validate, obj); err != nil {
		return nil, err
	}
	d, reason, err := s.Authorizer.Authorize(ctx, attributesOf(userOf(&sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes))
	sar.Status = statusOf(d, reason, err, sar.Spec.ResourceAttributes)
	return sar, nil
}

// SelfSubjectAccessReviewREST answers whether the requesting user may do
// something.
type SelfSubjectAccessReviewREST struct{ Authorizer authz.Authorizer }

var _ rest.Creater = SelfSubjectAccessReviewREST{}

// New returns an empty SelfSubjectAccessReview.
func (SelfSubjectAccessReviewREST) New() runtime.Object {
	return &authorizationv1.SelfSubjectAccessReview{}
}

// NamespaceScoped is false.
func (SelfSubjectAccessReviewREST) NamespaceScoped() bool { return false }

// Create returns the review with its status.
func (s SelfSubjectAccessReviewREST) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	ssar, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
	if !ok {
		return nil, notA("SelfSubjectAccessReview")
	}
	spec := &ssar.Spec
	errs := validateAttributes(spec.ResourceAttributes, spec.NonResourceAttributes, field.NewPath("spec"))
	if errs = append(errs, validateEmptyMeta(ssar.ObjectMeta, false)...); len(errs) > 0 {
		return nil, invalid(errs)
	}
	u, ok := authn.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	if err := admit(ctx, validate, obj); err != nil {
		return nil, err
	}
	d, reason, err := s.Authorizer.Authorize(ctx, attributesOf(u, spec.ResourceAttributes, spec.NonResourceAttributes))
	ssar.Status = statusOf(d, reason, err, spec.ResourceAttributes)
	return ssar, nil
}

// LocalSubjectAccessReviewREST is SubjectAccessReviewREST limited to the
// namespace of the request, so that namespace admins may be allowed it.
type LocalSubjectAccessReviewREST struct{ Authorizer authz.Authorizer }

var _ rest.Creater = LocalSubjectAccessReviewREST{}

// New returns an empty LocalSubjectAccessReview.
func (LocalSubjectAccessReviewREST) New() runtime.Object {
	return &authorizationv1.LocalSubjectAccessReview{}
}

// NamespaceScoped is true.
func (LocalSubjectAccessReviewREST) NamespaceScoped() bool { return true }

// Create returns the review with its status.
func (s LocalSubjectAccessReviewREST) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	lsar, ok := obj.(*authorizationv1.LocalSubjectAccessReview)
	if !ok {
		return nil, notA("LocalSubjectAccessReview")
	}
	ns := request.NamespaceFrom(ctx)
	if lsar.Namespace == "" {
		lsar.Namespace = ns
	} else if ns != "" && lsar.Namespace != ns {
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if errs := validateLocal(lsar); len(errs) > 0 {
		return nil, invalid(errs)
	}
	if ns == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is required on this type: %v", ns))
	}
	if err := admit(ctx, validate, obj); err != nil {
		return nil, err
	}
	d, reason, err := s.Authorizer.Authorize(ctx, attributesOf(userOf(&lsar.Spec), lsar.Spec.ResourceAttributes, nil))
	lsar.Status = statusOf(d, reason, err, lsar.Spec.ResourceAttributes)
	return lsar, nil
}

// validateLocal: a SubjectAccessReview's rules, the namespace of the
// resource is the review's, and non-resource attributes have no place.
func validateLocal(lsar *authorizationv1.LocalSubjectAccessReview) field.ErrorList {
	errs := validateSpec(&lsar.Spec)
	errs = append(errs, validateEmptyMeta(lsar.ObjectMeta, true)...)
	if res := lsar.Spec.ResourceAttributes; res != nil && res.Namespace != lsar.Namespace {
		errs = append(errs, field.Invalid(field.NewPath("spec.resourceAttributes.namespace"), res.Namespace, "must match metadata.namespace"))
	}
	if nonRes := lsar.Spec.NonResourceAttributes; nonRes != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec.nonResourceAttributes"), nonRes, "disallowed on this kind of request"))
	}
	return errs
}

// SelfSubjectRulesReviewREST lists what the requesting user may do in a
// namespace, from the authorizers that can list their rules.
type SelfSubjectRulesReviewREST struct{ Authorizer authz.Authorizer }

var _ rest.Creater = SelfSubjectRulesReviewREST{}

// New returns an empty SelfSubjectRulesReview.
func (SelfSubjectRulesReviewREST) New() runtime.Object {
	return &authorizationv1.SelfSubjectRulesReview{}
}

// NamespaceScoped is false.
func (SelfSubjectRulesReviewREST) NamespaceScoped() bool { return false }

// Create returns a review holding only the status, as kube does.
func (s SelfSubjectRulesReviewREST) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	ssrr, ok := obj.(*authorizationv1.SelfSubjectRulesReview)
	if !ok {
		return nil, notA("SelfSubjectRulesReview")
	}
	u, ok := authn.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	if ssrr.Spec.Namespace == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	if err := admit(ctx, validate, obj); err != nil {
		return nil, err
	}
	resolver, ok := s.Authorizer.(authz.RuleResolver)
	if !ok {
		status := authorizationv1.SubjectRulesReviewStatus{Incomplete: true, EvaluationError: "the authorizer cannot list rules"}
		return &authorizationv1.SelfSubjectRulesReview{Status: status}, nil
	}
	rules, err := resolver.RulesFor(ctx, u, ssrr.Spec.Namespace)
	out := &authorizationv1.SelfSubjectRulesReview{Status: authorizationv1.SubjectRulesReviewStatus{
		ResourceRules: orEmpty(rules.Resource), NonResourceRules: orEmpty(rules.NonResource), Incomplete: rules.Incomplete,
	}}
	if err != nil {
		out.Status.EvaluationError = err.Error()
	}
	return out, nil
}

// orEmpty makes a nil list an empty one: the fields are required, and kube
// always sends them.
func orEmpty[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
