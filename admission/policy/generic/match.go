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
	equivalent              bool // matchPolicy Equivalent
}

// CompileMatch compiles m; nil stays nil.
func CompileMatch(m *arv1.MatchResources) (*Matcher, error) {
	if m == nil {
		return nil, nil
	}
	out := &Matcher{rules: m.ResourceRules, exclude: m.ExcludeResourceRules,
		equivalent: m.MatchPolicy != nil && *m.MatchPolicy == arv1.Equivalent}
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
	_, ok, err := m.MatchVersion(ctx, a, namespaces, policy)
	return ok, err
}

// MatchVersion is Matches, with the version of the write the rules
// select: its own, or with matchPolicy Equivalent another version of its
// resource, which the policy then sees the write converted to.
func (m *Matcher) MatchVersion(ctx context.Context, a *admission.Attributes, namespaces match.NamespaceGetter, policy bool) (admission.Version, bool, error) {
	own := admission.Version{Resource: a.Resource, Kind: a.Kind}
	if m == nil {
		return own, !policy, nil
	}
	if ok, err := match.Namespace(ctx, m.namespaceSel, a, namespaces); !ok || err != nil {
		return own, false, err
	}
	if !match.Object(m.objectSel, a) {
		return own, false, nil
	}
	if _, excluded := m.rulesMatch(m.exclude, a); excluded {
		return own, false, nil
	}
	if len(m.rules) == 0 {
		return own, !policy, nil
	}
	v, ok := m.rulesMatch(m.rules, a)
	return v, ok, nil
}

func (m *Matcher) rulesMatch(rules []arv1.NamedRuleWithOperations, a *admission.Attributes) (admission.Version, bool) {
	if slices.ContainsFunc(rules, func(r arv1.NamedRuleWithOperations) bool { return namedRule(&r, a) }) {
		return admission.Version{Resource: a.Resource, Kind: a.Kind}, true
	}
	if !m.equivalent {
		return admission.Version{}, false
	}
	return admission.Equivalent(a, rules, namedRule)
}

func namedRule(r *arv1.NamedRuleWithOperations, a *admission.Attributes) bool {
	return match.Rule(&r.RuleWithOperations, a) && (len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, a.Name))
}
