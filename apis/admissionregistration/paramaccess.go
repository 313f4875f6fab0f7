package admissionregistration

import (
	"context"
	"errors"
	"fmt"
	"slices"

	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// ParamAccess is kube's check of who writes admission policies and their
// bindings: a policy's paramKind only by a user who may get every object
// of that kind, a binding's paramRef only by one who may get (or, for a
// selector, list) the params it names, so that a policy cannot be made to
// read what its author may not. system:masters is not checked. A refusal
// is a Forbidden field error of the write's validation, as kube's.
type ParamAccess struct {
	Authorizer authz.Authorizer
	// Resolve finds the resource of a kind in discovery.
	Resolve func(schema.GroupVersionKind) (schema.GroupVersionResource, error)
	// ValidatingParamKind and MutatingParamKind read the paramKind of the
	// policy a binding names (nil: none). They may be set after the
	// strategies are made, before the first write.
	ValidatingParamKind, MutatingParamKind func(ctx context.Context, policy string) (*arv1.ParamKind, error)
}

// ValidatingAdmissionPolicy is ValidatingAdmissionPolicyStrategy with the
// paramKind check.
func (pa *ParamAccess) ValidatingAdmissionPolicy() Strategy[*arv1.ValidatingAdmissionPolicy] {
	return withKindCheck(pa, ValidatingAdmissionPolicyStrategy, func(p *arv1.ValidatingAdmissionPolicy) *arv1.ParamKind {
		if p == nil {
			return nil
		}
		return p.Spec.ParamKind
	})
}

// MutatingAdmissionPolicy is MutatingAdmissionPolicyStrategy with the
// paramKind check.
func (pa *ParamAccess) MutatingAdmissionPolicy() Strategy[*arv1.MutatingAdmissionPolicy] {
	return withKindCheck(pa, MutatingAdmissionPolicyStrategy, func(p *arv1.MutatingAdmissionPolicy) *arv1.ParamKind {
		if p == nil {
			return nil
		}
		return p.Spec.ParamKind
	})
}

// ValidatingAdmissionPolicyBinding is its strategy with the paramRef check.
func (pa *ParamAccess) ValidatingAdmissionPolicyBinding() Strategy[*arv1.ValidatingAdmissionPolicyBinding] {
	return withRefCheck(pa, ValidatingAdmissionPolicyBindingStrategy, func(b *arv1.ValidatingAdmissionPolicyBinding) (string, *arv1.ParamRef) {
		if b == nil {
			return "", nil
		}
		return b.Spec.PolicyName, b.Spec.ParamRef
	}, func(ctx context.Context, name string) (*arv1.ParamKind, error) {
		return pa.ValidatingParamKind(ctx, name)
	}, false)
}

// MutatingAdmissionPolicyBinding is its strategy with the paramRef check.
func (pa *ParamAccess) MutatingAdmissionPolicyBinding() Strategy[*arv1.MutatingAdmissionPolicyBinding] {
	return withRefCheck(pa, MutatingAdmissionPolicyBindingStrategy, func(b *arv1.MutatingAdmissionPolicyBinding) (string, *arv1.ParamRef) {
		if b == nil {
			return "", nil
		}
		return b.Spec.PolicyName, b.Spec.ParamRef
	}, func(ctx context.Context, name string) (*arv1.ParamKind, error) {
		return pa.MutatingParamKind(ctx, name)
	}, true)
}

// withKindCheck adds the paramKind check to a policy strategy; kindOf
// reads a policy's paramKind (nil for no policy).
func withKindCheck[T runtime.Object](pa *ParamAccess, s Strategy[T], kindOf func(T) *arv1.ParamKind) Strategy[T] {
	s.validate = withCheck(s.validate, field.NewPath("spec", "paramKind"), func(ctx context.Context, p, old T) error {
		return pa.checkKind(ctx, kindOf(p), kindOf(old))
	})
	return s
}

// withRefCheck adds the paramRef check to a binding strategy; refOf reads
// a binding's policy and paramRef (none for no binding). An update that
// keeps both is not checked again.
func withRefCheck[T runtime.Object](pa *ParamAccess, s Strategy[T], refOf func(T) (string, *arv1.ParamRef),
	paramKind func(context.Context, string) (*arv1.ParamKind, error), mutating bool) Strategy[T] {
	s.validate = withCheck(s.validate, field.NewPath("spec", "paramRef"), func(ctx context.Context, b, old T) error {
		policy, ref := refOf(b)
		oldPolicy, oldRef := refOf(old)
		if ref == nil || (oldRef != nil && *oldRef == *ref && oldPolicy == policy) {
			return nil
		}
		return pa.checkRef(ctx, policy, ref, paramKind, mutating)
	})
	return s
}

// withCheck runs check after validate, only on a well-formed object.
func withCheck[T runtime.Object](validate func(ctx context.Context, obj, old T) field.ErrorList, path *field.Path,
	check func(ctx context.Context, obj, old T) error) func(ctx context.Context, obj, old T) field.ErrorList {
	return func(ctx context.Context, obj, old T) field.ErrorList {
		errs := validate(ctx, obj, old)
		if len(errs) == 0 {
			if err := check(ctx, obj, old); err != nil {
				errs = append(errs, field.Forbidden(path, err.Error()))
			}
		}
		return errs
	}
}

// checkKind: the writer of a policy whose paramKind is new must be allowed
// to get every object of the kind.
func (pa *ParamAccess) checkKind(ctx context.Context, kind, was *arv1.ParamKind) error {
	if kind == nil || (was != nil && *was == *kind) || pa.Authorizer == nil || privileged(ctx) {
		return nil
	}
	u, ok := authn.UserFrom(ctx)
	if !ok {
		return errors.New("cannot identify user to authorize read access to paramKind resources")
	}
	info := pa.target(kind)
	info.Verb, info.Name, info.Namespace = "get", "*", "*"
	d, _, err := pa.Authorizer.Authorize(ctx, authz.Attributes{User: u, Info: info})
	if err != nil {
		return err
	}
	if d != authz.Allow {
		return fmt.Errorf(`user %s must have "get" permission on all objects of the referenced paramKind (kind=%s, apiVersion=%s)`, userString(u), kind.Kind, kind.APIVersion)
	}
	return nil
}

// target is the resource of a param kind: every group, version and
// resource when the kind cannot be parsed or resolved.
func (pa *ParamAccess) target(kind *arv1.ParamKind) *request.Info {
	info := &request.Info{IsResourceRequest: true, APIGroup: "*", APIVersion: "*", Resource: "*"}
	gv, err := schema.ParseGroupVersion(kind.APIVersion)
	if err != nil {
		return info
	}
	info.APIGroup, info.APIVersion = gv.Group, gv.Version
	if pa.Resolve != nil {
		if gvr, err := pa.Resolve(gv.WithKind(kind.Kind)); err == nil {
			info.Resource = gvr.Resource
		}
	}
	return info
}

// checkRef: the writer of a binding must be allowed to get the param its
// paramRef names, or to list them for a selector.
func (pa *ParamAccess) checkRef(ctx context.Context, policy string, ref *arv1.ParamRef,
	paramKind func(context.Context, string) (*arv1.ParamKind, error), mutating bool) error {
	if pa.Authorizer == nil || privileged(ctx) {
		return nil
	}
	u, ok := authn.UserFrom(ctx)
	if !ok {
		return errors.New("cannot identify user to authorize read access to paramRef object")
	}
	info := &request.Info{IsResourceRequest: true, APIGroup: "*", APIVersion: "*", Resource: "*"}
	kind, policyErr := paramKind(ctx, policy)
	if policyErr == nil && kind != nil {
		info = pa.target(kind)
	}
	info.Verb, info.Name, info.Namespace = "get", ref.Name, ref.Namespace
	if ref.Name == "" {
		info.Verb = "list"
	}
	d, _, err := pa.Authorizer.Authorize(ctx, authz.Attributes{User: u, Info: info})
	if err != nil {
		return fmt.Errorf("failed to authorize request: %w", err)
	}
	if d == authz.Allow {
		return nil
	}
	return refDenied(policy, kind, policyErr, info, userString(u), mutating)
}

// refDenied is kube's message of a refused paramRef.
func refDenied(policy string, kind *arv1.ParamKind, policyErr error, info *request.Info, user string, mutating bool) error {
	everything := fmt.Sprintf(`user %s does not have "%s" permission for all groups, versions and resources`, user, info.Verb)
	switch {
	case policyErr != nil:
		return fmt.Errorf("unable to get policy %s to determine minimum required permissions and %s", policy, everything)
	case kind != nil && info.APIGroup == "*":
		return fmt.Errorf("unable to parse paramKind %v to determine minimum required permissions and %s", kind, everything)
	case kind != nil && info.Resource == "*":
		return fmt.Errorf("unable to resolve paramKind %v to determine minimum required permissions and %s", kind, everything)
	case mutating:
		// kube's MutatingAdmissionPolicyBinding message names the verb
		// and the user the other way round.
		return fmt.Errorf(`user %s does not have "%s" permission on the object referenced by paramRef`, info.Verb, user)
	default:
		return fmt.Errorf(`user %s does not have "%s" permission on the object referenced by paramRef`, user, info.Verb)
	}
}

// privileged: system:masters may write any policy.
func privileged(ctx context.Context) bool {
	u, ok := authn.UserFrom(ctx)
	return ok && slices.Contains(u.Groups, authn.SystemPrivilegedGroup)
}

// userString prints a user as kube's messages print its user.Info (a
// *DefaultInfo printed with %v).
func userString(u *authn.User) string {
	return fmt.Sprintf("&{%s %s %v %v}", u.Name, u.UID, u.Groups, u.Extra)
}
