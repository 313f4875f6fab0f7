package mutating

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	arv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/match"
	"github.com/capstan-io/capstan/admission/policy/expr"
	"github.com/capstan-io/capstan/admission/policy/generic"
)

// run is one pass of the plugin over one write.
type run struct {
	plugin *Plugin
	a      *admission.Attributes
	// namespaces reads the write's namespace once for every policy.
	namespaces match.NamespaceGetter
	state      *admission.PluginReinvocation
	again      bool // the chain's second run
	// base is the activation the policies see, its object kept current
	// as mutations change it; made when a policy first matches, and again
	// when one sees the write at another version.
	base map[string]any
	// view is the write as base shows it: a, or its conversion to version
	// (matchPolicy Equivalent).
	view    *admission.Attributes
	version admission.Version
	errs    []policyError
}

func (r *run) fail(pol *policy, binding string, err error, reason metav1.StatusReason) {
	r.errs = append(r.errs, policyError{policy: pol, binding: binding, err: err, reason: reason})
}

// policy runs one policy for each of its bindings that select the write;
// what it returns ends the admission (a status error), what it records
// in r.errs its failure policy decides.
func (r *run) policy(ctx context.Context, pol *policy, bindings []*generic.Binding[*arv1.MutatingAdmissionPolicyBinding]) error {
	p := r.plugin
	v, ok, err := pol.match.MatchVersion(ctx, r.a, r.namespaces, true)
	if err == nil && ok && pol.err != nil {
		err = pol.err
	}
	if err != nil {
		r.fail(pol, "", fmt.Errorf("failed to configure policy: %w", err), "")
		return nil
	}
	if !ok {
		return nil
	}
	for _, binding := range bindings {
		b := binding.Binding
		ok, err := binding.Matches(ctx, r.a, r.namespaces)
		var params []any
		if err == nil && ok {
			params, err = generic.CollectParams(ctx, p.Params, pol.paramKind, b.Spec.ParamRef, r.a.Namespace)
		}
		if err != nil {
			r.fail(pol, b.Name, fmt.Errorf("failed to configure binding: %w", err), "")
			continue
		}
		for _, param := range params {
			if err := r.invoke(ctx, pol, v, b.Name, param); err != nil {
				return err
			}
		}
	}
	return nil
}

// invoke runs a policy's mutations for one binding and param, if its
// match conditions hold.
func (r *run) invoke(ctx context.Context, pol *policy, v admission.Version, binding string, param any) error {
	if err := r.baseAt(ctx, v); err != nil {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return err
		}
		return apierrors.NewInternalError(err)
	}
	hasParams := pol.paramKind != nil
	ok, err := pol.MatchConditions(pol.NewEvaluation(ctx, r.base, hasParams, param, celconfig.RuntimeCELCostBudgetMatchConditions))
	if err != nil {
		r.fail(pol, binding, err, metav1.StatusReasonInvalid)
		return nil
	}
	if !ok {
		return nil
	}
	key := pol.name + "/" + binding + "/" + paramKey(param)
	if r.again && !r.state.Due(key) {
		return nil
	}
	changed := false
	for _, m := range pol.mutations {
		c, err := r.mutate(ctx, pol, m, param)
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return err
		}
		if err != nil {
			r.fail(pol, binding, err, metav1.StatusReasonInvalid)
			continue
		}
		changed = changed || c
	}
	if changed {
		r.state.Changed()
		r.a.Reinvocation.RequestReinvoke()
	}
	if pol.reinvoke {
		r.state.Invoked(key)
	}
	return nil
}

// baseAt makes r.base the activation of the write at version v.
func (r *run) baseAt(ctx context.Context, v admission.Version) error {
	if r.base != nil && r.version == v {
		return nil
	}
	view, err := r.a.AsVersion(ctx, v)
	if err != nil {
		return err
	}
	base, err := generic.BaseActivation(ctx, view, r.namespaces, r.plugin.Authz)
	if err != nil {
		return err
	}
	r.base, r.view, r.version = base, view, v
	return nil
}

// mutate evaluates one mutation on the object as it is now and puts the
// result in the write's object; it reports whether the object changed.
// Each mutation has a cost budget of its own, as in kube.
func (r *run) mutate(ctx context.Context, pol *policy, m mutation, param any) (bool, error) {
	obj, _ := r.base[expr.ObjectVar].(map[string]any)
	val, err := pol.NewEvaluation(ctx, r.base, pol.paramKind != nil, param, celconfig.RuntimeCELCostBudget).Eval(m.Program)
	if err != nil {
		return false, err
	}
	var data []byte
	if m.apply {
		data, err = applyConfiguration(r.view.Types, obj, r.view.Kind, val)
	} else {
		data, err = jsonPatch(obj, val)
	}
	if err != nil {
		return false, err
	}
	if err := r.view.ReplaceJSON(ctx, data); err != nil {
		return false, apierrors.NewInternalError(err)
	}
	now, err := expr.JSONValue(r.view.Object, r.view.Kind)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	r.base[expr.ObjectVar] = now
	return !reflect.DeepEqual(obj, now), nil
}

// paramKey names a param among a binding's: its namespace and name.
func paramKey(param any) string {
	m, _ := param.(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	return ns + "/" + name
}
