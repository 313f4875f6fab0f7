package authz

import (
	"context"
	"fmt"
	"slices"
	"strings"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/capstan-io/capstan/authn"
)

// Named is an authorizer and the name a union gives it in reasons, as
// kube names its modes ("rbac", "alwaysdeny", "node").
type Named struct {
	Name       string
	Authorizer Authorizer
}

// Union asks each authorizer in order: the first Allow or Deny is the
// answer, with that authorizer's reason; NoOpinion moves on. When all have
// no opinion, the union has none either, and its reason joins theirs as
// "<name>: <reason>" lines (the authorization filter then refuses the
// request). A union of none has no opinion on anything, so it denies; a
// union of one is that one.
//
// The union is also a RuleResolver: it lists the rules of every member
// that can list its own.
func Union(as ...Named) Authorizer {
	if len(as) == 1 {
		return as[0].Authorizer
	}
	return union(slices.Clone(as))
}

type union []Named

func (u union) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	var (
		errs    []error
		reasons []string
	)
	for _, n := range u {
		d, reason, err := n.Authorizer.Authorize(ctx, a)
		if d == Allow || d == Deny {
			return d, reason, err
		}
		if err != nil {
			errs = append(errs, err)
		}
		if reason != "" {
			reasons = append(reasons, fmt.Sprintf("%s: %s", n.Name, reason))
		}
	}
	return NoOpinion, strings.Join(reasons, "\n"), utilerrors.NewAggregate(errs)
}

// RulesFor gathers the rules of the members that are RuleResolvers. The
// answer is incomplete if any member's is.
func (u union) RulesFor(ctx context.Context, user *authn.User, namespace string) (Rules, error) {
	var (
		out  Rules
		errs []error
	)
	for _, n := range u {
		r, ok := n.Authorizer.(RuleResolver)
		if !ok {
			continue
		}
		rules, err := r.RulesFor(ctx, user, namespace)
		if err != nil {
			errs = append(errs, err)
		}
		out.Resource = append(out.Resource, rules.Resource...)
		out.NonResource = append(out.NonResource, rules.NonResource...)
		out.Incomplete = out.Incomplete || rules.Incomplete
	}
	return out, utilerrors.NewAggregate(errs)
}
