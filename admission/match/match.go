// Package match decides whether an admission rule, namespace selector or
// object selector selects a write, as kube's webhooks and admission
// policies match.
package match

import (
	"context"
	"fmt"
	"slices"
	"strings"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
)

// NamespaceGetter reads a namespace for namespaceSelector.
type NamespaceGetter func(ctx context.Context, name string) (*corev1.Namespace, error)

var namespacesResource = schema.GroupResource{Resource: "namespaces"}

// Rule reports whether a rule of a webhook covers the write.
func Rule(r *arv1.RuleWithOperations, a *admission.Attributes) bool {
	return operation(r.Operations, a.Operation) &&
		word(r.APIGroups, a.Resource.Group) && word(r.APIVersions, a.Resource.Version) &&
		resource(r.Resources, a.Resource.Resource, a.Subresource) && scope(r.Scope, a)
}

func operation(ops []arv1.OperationType, op admission.Operation) bool {
	return slices.ContainsFunc(ops, func(o arv1.OperationType) bool {
		return o == arv1.OperationAll || string(o) == string(op)
	})
}

func word(words []string, w string) bool {
	return slices.ContainsFunc(words, func(s string) bool { return s == "*" || s == w })
}

// resource: "*" is every resource without subresource, "*/*" every
// resource and subresource, "x/*", "*/y" and "x/y" as they read.
func resource(patterns []string, res, sub string) bool {
	for _, p := range patterns {
		r, s, hasSub := strings.Cut(p, "/")
		if !hasSub {
			if sub == "" && (p == "*" || p == res) {
				return true
			}
			continue
		}
		if (r == "*" || r == res) && (s == "*" || s == sub) {
			return true
		}
	}
	return false
}

// scope: a namespace object is cluster scoped, whatever namespace its
// request names.
func scope(sc *arv1.ScopeType, a *admission.Attributes) bool {
	isNamespace := a.Resource.GroupResource() == namespacesResource
	switch {
	case sc == nil || *sc == arv1.AllScopes:
		return true
	case *sc == arv1.NamespacedScope:
		return !isNamespace && a.Namespace != ""
	default:
		return isNamespace || a.Namespace == ""
	}
}

// Namespace applies a namespaceSelector: an empty one, and any to a
// cluster-scoped object other than a namespace, matches; a namespace is
// matched by its own labels.
func Namespace(ctx context.Context, sel labels.Selector, a *admission.Attributes, get NamespaceGetter) (bool, error) {
	if sel.Empty() {
		return true, nil
	}
	if a.Resource.GroupResource() == namespacesResource && a.Subresource == "" {
		obj := a.Object
		if obj == nil {
			obj = a.OldObject
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return false, apierrors.NewInternalError(err)
		}
		return sel.Matches(labels.Set(m.GetLabels())), nil
	}
	if a.Namespace == "" {
		return true, nil
	}
	ns, err := get(ctx, a.Namespace)
	if err != nil {
		return false, apierrors.NewInternalError(fmt.Errorf("namespace %q: %w", a.Namespace, err))
	}
	return sel.Matches(labels.Set(ns.Labels)), nil
}

// Memo is get reading each namespace once while the same one is asked
// for: the plugins of one write read its namespace once, not once per
// webhook or policy. It is for one goroutine.
func Memo(get NamespaceGetter) NamespaceGetter {
	var name string
	var ns *corev1.Namespace
	var err error
	return func(ctx context.Context, n string) (*corev1.Namespace, error) {
		if ns == nil && err == nil || n != name {
			name = n
			ns, err = get(ctx, n)
		}
		return ns, err
	}
}

// Object applies an objectSelector to the object and the old object:
// either may match.
func Object(sel labels.Selector, a *admission.Attributes) bool {
	if sel.Empty() {
		return true
	}
	return labelsMatch(sel, a.Object) || labelsMatch(sel, a.OldObject)
}

func labelsMatch(sel labels.Selector, obj runtime.Object) bool {
	if obj == nil {
		return false
	}
	m, err := meta.Accessor(obj)
	return err == nil && sel.Matches(labels.Set(m.GetLabels()))
}
