package validating

import (
	"context"
	"errors"
	"fmt"
	"slices"

	arv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/match"
)

// matchResources applies match resources to the write: selectors, then
// excluded rules, then rules (none: every resource, for a binding).
func matchResources(ctx context.Context, m *matcher, a *admission.Attributes, namespaces match.NamespaceGetter, policy bool) (bool, error) {
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

// collectParams finds the params a binding's paramRef names: [nil] for a
// policy without paramKind, none when parameterNotFoundAction allows it.
func (p *Plugin) collectParams(ctx context.Context, pol *policy, ref *arv1.ParamRef, requestNamespace string) ([]any, error) {
	if !pol.hasParams {
		return []any{nil}, nil
	}
	if ref == nil {
		return nil, fmt.Errorf("paramKind kind `%v` is specified but binding does not specify paramRef", pol.paramKind.Kind)
	}
	gv, err := schema.ParseGroupVersion(pol.paramKind.APIVersion)
	if err != nil {
		return nil, err
	}
	gvk := gv.WithKind(pol.paramKind.Kind)
	namespaced, err := p.params.Namespaced(gvk)
	if err != nil {
		return nil, err
	}
	namespace := ""
	if namespaced {
		if namespace = ref.Namespace; namespace == "" {
			namespace = requestNamespace
		}
		if namespace == "" {
			return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	}
	var params []any
	switch {
	case ref.Name != "":
		obj, err := p.params.Get(ctx, gvk, namespace, ref.Name)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		if err == nil {
			params = append(params, obj)
		}
	case ref.Selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(ref.Selector)
		if err != nil {
			return nil, err
		}
		objs, err := p.params.List(ctx, gvk, namespace, sel)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			params = append(params, o)
		}
	}
	if len(params) == 0 && (ref.ParameterNotFoundAction == nil || *ref.ParameterNotFoundAction == arv1.DenyAction) {
		return nil, errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
	}
	return params, nil
}
