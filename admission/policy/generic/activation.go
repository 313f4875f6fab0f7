package generic

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/match"
	"github.com/capstan-io/capstan/admission/policy/expr"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
)

// BaseActivation is what every policy of a write sees: object, oldObject,
// request, namespaceObject and, with an authorizer, authorizer and
// authorizer.requestResource.
func BaseActivation(ctx context.Context, a *admission.Attributes, namespaces match.NamespaceGetter, az authz.Authorizer) (map[string]any, error) {
	obj, err := expr.JSONValue(a.Object, a.Kind)
	if err != nil {
		return nil, err
	}
	old, err := expr.JSONValue(a.OldObject, a.Kind)
	if err != nil {
		return nil, err
	}
	opts, err := expr.JSONValue(a.Options, schema.GroupVersionKind{})
	if err != nil {
		return nil, err
	}
	user, _ := authn.UserFrom(ctx)
	base := expr.AuthorizerValues(az, user, a)
	base[expr.ObjectVar], base[expr.OldObjectVar] = obj, old
	base[expr.RequestVar], base[expr.NamespaceVar] = expr.RequestValue(a, user, opts), nil
	// A Namespace names itself as its namespace; kube gives it none.
	if a.Namespace != "" && !(a.Kind.Group == "" && a.Kind.Kind == "Namespace") {
		ns, err := namespaces(ctx, a.Namespace)
		if err != nil {
			return nil, err
		}
		if base[expr.NamespaceVar], err = expr.JSONValue(ns, corev1.SchemeGroupVersion.WithKind("Namespace")); err != nil {
			return nil, err
		}
	}
	return base, nil
}

// Activations are the base activations of one write, one per version
// policies see it at (matchPolicy Equivalent), each made once.
type Activations map[admission.Version]map[string]any

// At is the base activation of the write a at version v.
func (as Activations) At(ctx context.Context, a *admission.Attributes, v admission.Version, d Deps) (map[string]any, error) {
	if base := as[v]; base != nil {
		return base, nil
	}
	va, err := a.AsVersion(ctx, v)
	if err != nil {
		return nil, err
	}
	base, err := BaseActivation(ctx, va, d.Namespaces, d.Authz)
	if err != nil {
		return nil, err
	}
	as[v] = base
	return base, nil
}

// Deps are what a policy plugin reads besides its policies: namespaces,
// params, and the authorizer that answers the expressions' checks.
type Deps struct {
	Namespaces match.NamespaceGetter
	Params     ParamLookup
	Authz      authz.Authorizer
}
