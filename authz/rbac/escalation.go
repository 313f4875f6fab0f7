package rbac

import (
	"context"
	"errors"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-io/capstan/authn"
)

// ConfirmNoEscalation returns an error unless u already holds, in
// namespace, every permission of rules: nobody may grant (in a role, or by
// binding one) what they could not do themselves. The message is kube's,
// listing the missing permissions one per line.
func (r *Resolver) ConfirmNoEscalation(ctx context.Context, u *authn.User, namespace string, rules []rbacv1.PolicyRule) error {
	if u == nil {
		return errors.New("no user on context")
	}
	owned, resolveErr := r.RulesFor(ctx, u, namespace)
	ok, missing := Covers(owned, rules)
	if ok {
		return nil
	}
	descriptions := sets.New[string]()
	for _, m := range CompactRules(missing) {
		descriptions.Insert(CompactString(m))
	}
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s",
		u.Name, u.Groups, strings.Join(sets.List(descriptions), "\n"))
	if resolveErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", []error{resolveErr})
	}
	return errors.New(msg)
}

// FullAuthority is cluster-admin's rules: setting an aggregationRule, which
// can gather any permission, needs them.
var FullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{rbacv1.VerbAll}, APIGroups: []string{rbacv1.APIGroupAll}, Resources: []string{rbacv1.ResourceAll}},
	{Verbs: []string{rbacv1.VerbAll}, NonResourceURLs: []string{rbacv1.NonResourceAll}},
}
