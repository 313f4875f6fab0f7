package rbac

import (
	"context"
	"errors"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	authzrbac "github.com/capstan-io/capstan/authz/rbac"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
)

// Guard keeps users from granting permissions they do not hold, as kube's
// RBAC registry does: a role's rules, and the role a binding refers to, must
// be covered by the rules of the user who writes them, unless the user is
// in system:masters or is allowed the escalate verb on the role (the bind
// verb on the referenced role, for a binding).
type Guard struct {
	// Authorizer answers the escalate and bind checks: the server's own.
	Authorizer authz.Authorizer
	// Resolver finds the rules a user holds, reading the registry.
	Resolver *authzrbac.Resolver
}

// checkFunc checks a write; old is nil on create.
type checkFunc func(ctx context.Context, obj, old runtime.Object) error

// guardedStore is a Store whose creates and updates pass a check first,
// unless bypass lets the user through.
type guardedStore struct {
	*registry.Store
	bypass func(ctx context.Context) bool
	check  checkFunc
}

var (
	_ rest.Creater = (*guardedStore)(nil)
	_ rest.Patcher = (*guardedStore)(nil)
)

// Create checks obj, then creates it.
func (s *guardedStore) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	if !s.bypass(ctx) {
		if err := s.check(ctx, obj, nil); err != nil {
			return nil, err
		}
	}
	return s.Store.Create(ctx, obj, validate, opts)
}

// Update checks the updated object inside the update, against the object
// it replaces, unless only the garbage collector's fields change.
func (s *guardedStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	if s.bypass(ctx) {
		return s.Store.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, opts)
	}
	checked := rest.KeepPreconditions(objInfo, func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		obj, err := objInfo.UpdatedObject(ctx, old)
		if err != nil {
			return nil, err
		}
		if old != nil && OnlyGCFieldsChange(obj, old) {
			return obj, nil
		}
		if err := s.check(ctx, obj, old); err != nil {
			return nil, err
		}
		return obj, nil
	})
	return s.Store.Update(ctx, name, checked, createValidation, updateValidation, forceAllowCreate, opts)
}

// OnlyGCFieldsChange reports whether obj differs from old only in the
// fields the garbage collector writes (owner references, finalizers), so
// that deleting a role nobody may write any more still completes.
func OnlyGCFieldsChange(obj, old runtime.Object) bool {
	c := obj.DeepCopyObject()
	m, err1 := meta.Accessor(c)
	o, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil {
		return false
	}
	m.SetOwnerReferences(o.GetOwnerReferences())
	m.SetFinalizers(o.GetFinalizers())
	m.SetSelfLink(o.GetSelfLink())
	m.SetManagedFields(o.GetManagedFields())
	c.GetObjectKind().SetGroupVersionKind(old.GetObjectKind().GroupVersionKind())
	return equality.Semantic.DeepEqual(c, old)
}

// inPrivilegedGroup: system:masters may grant anything; the server's own
// loopback client is in it.
func inPrivilegedGroup(ctx context.Context) bool {
	u, ok := authn.UserFrom(ctx)
	if !ok {
		return false
	}
	for _, g := range u.Groups {
		if g == authn.SystemPrivilegedGroup {
			return true
		}
	}
	return false
}

// allowed asks the authorizer about a verb on a role, as the user of ctx.
func (g *Guard) allowed(ctx context.Context, info *request.Info) bool {
	u, ok := authn.UserFrom(ctx)
	if !ok || g.Authorizer == nil {
		return false
	}
	d, _, _ := g.Authorizer.Authorize(ctx, authz.Attributes{User: u, Info: info})
	return d == authz.Allow
}

// mayEscalate: the user may write any rules into a role if privileged or
// allowed to "escalate" the role the request is about.
func (g *Guard) mayEscalate(ctx context.Context) bool {
	if inPrivilegedGroup(ctx) {
		return true
	}
	info, ok := request.InfoFrom(ctx)
	if !ok || !info.IsResourceRequest || info.APIGroup != rbacv1.GroupName ||
		(info.Resource != "roles" && info.Resource != "clusterroles") {
		return false
	}
	return g.allowed(ctx, &request.Info{IsResourceRequest: true, Verb: "escalate", APIGroup: info.APIGroup,
		APIVersion: "*", Resource: info.Resource, Name: info.Name, Namespace: info.Namespace})
}

// mayBind: the user may bind a role they are allowed to "bind", in the
// binding's namespace ("" for a ClusterRoleBinding).
func (g *Guard) mayBind(ctx context.Context, ref rbacv1.RoleRef, namespace string) bool {
	info := &request.Info{IsResourceRequest: true, Verb: "bind", APIGroup: ref.APIGroup, APIVersion: "*",
		Name: ref.Name, Namespace: namespace}
	switch ref.Kind {
	case "ClusterRole":
		info.Resource = "clusterroles"
	case "Role":
		info.Resource = "roles"
	default:
		return false
	}
	return g.allowed(ctx, info)
}

// confirm returns kube's 403 unless the user holds every rule, in the
// namespace of the request.
func (g *Guard) confirm(ctx context.Context, gr schema.GroupResource, name string, rules []rbacv1.PolicyRule) error {
	u, _ := authn.UserFrom(ctx)
	err := g.Resolver.ConfirmNoEscalation(ctx, u, request.NamespaceFrom(ctx), rules)
	if err != nil {
		return apierrors.NewForbidden(gr, name, err)
	}
	return nil
}

var errAggregationRule = errors.New("must have cluster-admin privileges to use the aggregationRule")
