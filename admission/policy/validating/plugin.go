// Package validating is the ValidatingAdmissionPolicy plugin: each write a
// policy and one of its bindings select is checked by the policy's CEL
// validations, once per param the binding names, and refused, warned of
// or audited as the binding's validationActions say.
package validating

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	arv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/match"
	"github.com/capstan-io/capstan/admission/policy/generic"
	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/warning"
)

// PluginName is kube's name of the plugin.
const PluginName = "ValidatingAdmissionPolicy"

// Plugin is the ValidatingAdmissionPolicy plugin.
type Plugin struct {
	source *Source
	generic.Deps
}

// New returns the plugin over source.
func New(source *Source, deps generic.Deps) *Plugin {
	return &Plugin{source: source, Deps: deps}
}

// Handles: every operation.
func (p *Plugin) Handles(admission.Operation) bool { return true }

// denial is a failed validation of a policy with a binding.
type denial struct {
	decision
	policy, binding string
	actions         []arv1.ValidationAction
}

// Validate checks the write against every bound policy that selects it.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.Group == arv1.GroupName {
		// Like kube, admission's own configuration is never checked by
		// policies, so that a broken one cannot lock itself in.
		return nil
	}
	bound, err := p.source.Current(ctx, a)
	if err != nil || len(bound) == 0 {
		return err
	}
	deps := p.Deps
	deps.Namespaces = match.Memo(p.Namespaces)
	bases := generic.Activations{}
	var denials, audits []denial
	for _, b := range bound {
		bp := b.Policy
		v, ok, err := bp.match.MatchVersion(ctx, a, deps.Namespaces, true)
		if err != nil || !ok {
			if err != nil && !bp.failOpen {
				denials = append(denials, denial{decision: decision{message: "failed to configure policy: " + err.Error()}, policy: bp.name})
			}
			continue
		}
		if bp.err != nil {
			if !bp.failOpen {
				denials = append(denials, denial{decision: decision{message: "failed to configure policy: " + bp.err.Error()}, policy: bp.name})
			}
			continue
		}
		base, err := bases.At(ctx, a, v, deps)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		for _, binding := range b.Bindings {
			d, au := p.runBinding(ctx, deps, bp, binding, a, base)
			denials, audits = append(denials, d...), append(audits, au...)
		}
	}
	publishAudits(ctx, audits)
	if len(denials) == 0 {
		return nil
	}
	return denialError(a, denials[0])
}

// runBinding runs a policy for one binding: what it denies, and what it
// only audits. Warnings go out at once.
func (p *Plugin) runBinding(ctx context.Context, deps generic.Deps, pol *policy, binding *generic.Binding[*arv1.ValidatingAdmissionPolicyBinding], a *admission.Attributes, base map[string]any) (denials, audits []denial) {
	b := binding.Binding
	configError := func(err error) []denial {
		if pol.failOpen {
			return nil
		}
		return []denial{{decision: decision{message: "failed to configure binding: " + err.Error()}, policy: pol.name, binding: b.Name}}
	}
	ok, err := binding.Matches(ctx, a, deps.Namespaces)
	if err != nil {
		return configError(err), nil
	}
	if !ok {
		return nil, nil
	}
	params, err := generic.CollectParams(ctx, p.Params, pol.paramKind, b.Spec.ParamRef, a.Namespace)
	if err != nil {
		return configError(err), nil
	}
	for _, param := range params {
		for _, d := range p.runPolicy(ctx, pol, base, param) {
			if d.errored && pol.failOpen {
				continue
			}
			dn := denial{decision: d, policy: pol.name, binding: b.Name, actions: b.Spec.ValidationActions}
			for _, action := range b.Spec.ValidationActions {
				switch action {
				case arv1.Deny:
					denials = append(denials, dn)
				case arv1.Warn:
					warning.Add(ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", pol.name, b.Name, d.message))
				case arv1.Audit:
					audits = append(audits, dn)
				}
			}
		}
	}
	return denials, audits
}

// runPolicy evaluates the policy on one param: match conditions, then
// validations, then audit annotations.
func (p *Plugin) runPolicy(ctx context.Context, pol *policy, base map[string]any, param any) []decision {
	e := pol.NewEvaluation(ctx, base, pol.paramKind != nil, param, celconfig.RuntimeCELCostBudget)
	ok, err := pol.MatchConditions(e)
	if err != nil {
		return []decision{{message: err.Error(), errored: true}}
	}
	if !ok {
		return nil
	}
	decisions := pol.validate(e)
	annotations, err := pol.auditAnnotations(e)
	if err != nil {
		return append(decisions, decision{message: err.Error(), errored: true})
	}
	for k, v := range annotations {
		audit.AddAnnotation(ctx, pol.name+"/"+k, v)
	}
	return decisions
}

// denialError is kube's refusal of a write by a policy.
func denialError(a *admission.Attributes, d denial) error {
	msg := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy, d.binding, d.message)
	if d.binding == "" {
		msg = fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", d.policy, d.message)
	}
	name := a.Name
	if name == "" && a.Object != nil {
		if m, err := meta.Accessor(a.Object); err == nil {
			name = m.GetName()
		}
	}
	err := apierrors.NewForbidden(a.Resource.GroupResource(), name, errors.New(msg))
	reason := d.reason
	if reason == "" {
		reason = metav1.StatusReasonInvalid
	}
	err.ErrStatus.Reason, err.ErrStatus.Code = reason, reasonCode(reason)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Message: msg})
	return err
}

func reasonCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return http.StatusForbidden
	case metav1.StatusReasonRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	default:
		return http.StatusUnprocessableEntity
	}
}

// publishAudits records the failures of Audit bindings in kube's audit
// annotation (at most 50).
func publishAudits(ctx context.Context, audits []denial) {
	if len(audits) == 0 {
		return
	}
	type failure struct {
		Message           string                  `json:"message"`
		Policy            string                  `json:"policy"`
		Binding           string                  `json:"binding"`
		ExpressionIndex   int                     `json:"expressionIndex"`
		ValidationActions []arv1.ValidationAction `json:"validationActions"`
	}
	out := make([]failure, 0, min(len(audits), 50))
	for _, d := range audits[:min(len(audits), 50)] {
		out = append(out, failure{d.message, d.policy, d.binding, d.index, slices.Clone(d.actions)})
	}
	if data, err := json.Marshal(out); err == nil {
		audit.AddAnnotation(ctx, "validation.policy.admission.k8s.io/validation_failure", string(data))
	}
}
