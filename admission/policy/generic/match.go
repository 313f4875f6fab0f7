package generic

import (
	"context"
	"slices"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/match"
)

// Matcher is a compiled MatchResources.
type Matcher struct {
	namespaceSel, objectSel labels.Selector
	rules, exclude          []arv1.NamedRuleWithOperations
}

// CompileMatch compiles m; nil stays nil.
func CompileMatch(m *arv1.MatchResources) (*Matcher, error) {
	if m == nil {
		return nil, nil
	}
	out := &Matcher{rules: m.ResourceRules, exclude: m.ExcludeResourceRules}
	var err error
	if out.namespaceSel, err = selector(m.NamespaceSelector); err != nil {
		return nil, err
	}
	if out.objectSel, err = selector(m.ObjectSelector); err != nil {
		return nil, err
	}
	return out, nil
}

func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

// Matches applies match resources to the write: selectors, then excluded
// rules, then rules. A policy's matchConstraints (policy true) match
// nothing without rules or when nil; a binding's match everything.
func (m *Matcher) Matches(ctx context.Context, a *admission.Attributes, namespaces match.NamespaceGetter, policy bool) (bool, error) {
	if m == nil {
		return !policy, nil
	}
	if ok, err := match.Namespace(ctx, m.namespaceSel, a, namespaces); !ok || err != nil {
		return false, err
	}
	if !match.Object(m.objectSel, a) {
		return false, nil
	}
	if slices.ContainsFunc(m.exclude, func(r arv1.NamedRuleWithOperations) bool { return namedRule(&r, a) }) {
		return false, nil
	}
	if len(m.rules) == 0 {
		return !policy, nil
	}
	return slices.ContainsFunc(m.rules, func(r arv1.NamedRuleWithOperations) bool { return namedRule(&r, a) }), nil
}

func namedRule(r *arv1.NamedRuleWithOperations, a *admission.Attributes) bool {
	return match.Rule(&r.RuleWithOperations, a) && (len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, a.Name))
}

// BindingMatches compiles a binding's match resources and applies them.
func BindingMatches(ctx context.Context, m *arv1.MatchResources, a *admission.Attributes, namespaces match.NamespaceGetter) (bool, error) {
	if m == nil {
		return true, nil
	}
	compiled, err := CompileMatch(m)
	if err != nil {
		return false, err
	}
	return compiled.Matches(ctx, a, namespaces, false)
}
