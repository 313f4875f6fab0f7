package rbac

import (
	"context"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/capstan-io/capstan/authn"
)

// serviceAccountPrefix starts the user name of a service account:
// system:serviceaccount:<namespace>:<name>.
const serviceAccountPrefix = "system:serviceaccount:"

// Resolver finds the rules that apply to a user: those of the roles bound
// to them by every ClusterRoleBinding, and in a namespace by its
// RoleBindings.
type Resolver struct {
	source Source
}

// NewResolver returns a Resolver reading from s.
func NewResolver(s Source) *Resolver { return &Resolver{source: s} }

// Visitor is called with each rule that applies and where it comes from,
// or with an error met on the way (rule nil). Returning false stops.
type Visitor func(source fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool

// VisitRulesFor calls visit with the rules of u in namespace (the cluster
// bindings' only, when namespace is ""). Errors are visited, not returned:
// rules only ever allow, so the rules found are still good.
func (r *Resolver) VisitRulesFor(ctx context.Context, u *authn.User, namespace string, visit Visitor) {
	crbs, err := r.source.ListClusterRoleBindings(ctx)
	if err != nil {
		if !visit(nil, nil, err) {
			return
		}
	}
	for _, b := range crbs {
		i, ok := appliesTo(u, b.Subjects, "")
		if !ok {
			continue
		}
		src := &clusterBindingSource{binding: b, subject: &b.Subjects[i]}
		if !r.visitRoleRef(ctx, b.RoleRef, "", src, visit) {
			return
		}
	}
	if namespace == "" {
		return
	}
	rbs, err := r.source.ListRoleBindings(ctx, namespace)
	if err != nil {
		visit(nil, nil, err)
		return
	}
	for _, b := range rbs {
		i, ok := appliesTo(u, b.Subjects, namespace)
		if !ok {
			continue
		}
		src := &bindingSource{binding: b, subject: &b.Subjects[i]}
		if !r.visitRoleRef(ctx, b.RoleRef, namespace, src, visit) {
			return
		}
	}
}

// visitRoleRef visits the rules of the role a binding refers to.
func (r *Resolver) visitRoleRef(ctx context.Context, ref rbacv1.RoleRef, namespace string, src fmt.Stringer, visit Visitor) bool {
	rules, err := r.RoleRefRules(ctx, ref, namespace)
	if err != nil {
		return visit(nil, nil, err)
	}
	for i := range rules {
		if !visit(src, &rules[i], nil) {
			return false
		}
	}
	return true
}

// RulesFor returns every rule of u in namespace, and the errors met
// finding them, aggregated.
func (r *Resolver) RulesFor(ctx context.Context, u *authn.User, namespace string) ([]rbacv1.PolicyRule, error) {
	var (
		rules []rbacv1.PolicyRule
		errs  []error
	)
	r.VisitRulesFor(ctx, u, namespace, func(_ fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool {
		if rule != nil {
			rules = append(rules, *rule)
		}
		if err != nil {
			errs = append(errs, err)
		}
		return true
	})
	return rules, utilerrors.NewAggregate(errs)
}

// RoleRefRules returns the rules of the Role or ClusterRole a binding in
// namespace ("" for a ClusterRoleBinding) refers to.
func (r *Resolver) RoleRefRules(ctx context.Context, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		role, err := r.source.GetRole(ctx, namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		return role.Rules, nil
	case "ClusterRole":
		role, err := r.source.GetClusterRole(ctx, ref.Name)
		if err != nil {
			return nil, err
		}
		return role.Rules, nil
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// appliesTo returns the index of the first subject that is u.
func appliesTo(u *authn.User, subjects []rbacv1.Subject, namespace string) (int, bool) {
	for i := range subjects {
		if subjectIs(u, &subjects[i], namespace) {
			return i, true
		}
	}
	return 0, false
}

// subjectIs reports whether s names u: by user name, by one of u's groups,
// or as a service account, whose namespace defaults to the binding's.
func subjectIs(u *authn.User, s *rbacv1.Subject, namespace string) bool {
	switch s.Kind {
	case rbacv1.UserKind:
		return u.Name == s.Name
	case rbacv1.GroupKind:
		for _, g := range u.Groups {
			if g == s.Name {
				return true
			}
		}
		return false
	case rbacv1.ServiceAccountKind:
		ns := namespace
		if s.Namespace != "" {
			ns = s.Namespace
		}
		return ns != "" && isServiceAccount(u.Name, ns, s.Name)
	}
	return false
}

// isServiceAccount reports whether user is system:serviceaccount:<ns>:<name>,
// without building that string.
func isServiceAccount(user, ns, name string) bool {
	rest, ok := strings.CutPrefix(user, serviceAccountPrefix)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, ns)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, ":")
	return ok && rest == name
}

// clusterBindingSource and bindingSource say where an allowing rule came
// from, in kube's words, for the reason of an Allow.
type clusterBindingSource struct {
	binding *rbacv1.ClusterRoleBinding
	subject *rbacv1.Subject
}

func (s *clusterBindingSource) String() string {
	return fmt.Sprintf("ClusterRoleBinding %q of %s %q to %s",
		s.binding.Name, s.binding.RoleRef.Kind, s.binding.RoleRef.Name, describeSubject(s.subject, ""))
}

type bindingSource struct {
	binding *rbacv1.RoleBinding
	subject *rbacv1.Subject
}

func (s *bindingSource) String() string {
	return fmt.Sprintf("RoleBinding %q of %s %q to %s",
		s.binding.Name+"/"+s.binding.Namespace, s.binding.RoleRef.Kind, s.binding.RoleRef.Name,
		describeSubject(s.subject, s.binding.Namespace))
}

func describeSubject(s *rbacv1.Subject, namespace string) string {
	if s.Kind != rbacv1.ServiceAccountKind {
		return fmt.Sprintf("%s %q", s.Kind, s.Name)
	}
	if s.Namespace != "" {
		namespace = s.Namespace
	}
	return fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+namespace)
}
