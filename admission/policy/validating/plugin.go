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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/match"
	"github.com/capstan-io/capstan/admission/policy/expr"
	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/warning"
)

// PluginName is kube's name of the plugin.
const PluginName = "ValidatingAdmissionPolicy"

// ParamLookup reads param objects, as JSON values.
type ParamLookup interface {
	// Namespaced reports whether objects of gvk live in namespaces.
	Namespaced(gvk schema.GroupVersionKind) (bool, error)
	Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (map[string]any, error)
	List(ctx context.Context, gvk schema.GroupVersionKind, namespace string, sel labels.Selector) ([]map[string]any, error)
}

// Plugin is the ValidatingAdmissionPolicy plugin.
type Plugin struct {
	source     *Source
	namespaces match.NamespaceGetter
	params     ParamLookup
}

// New returns the plugin over source.
func New(source *Source, namespaces match.NamespaceGetter, params ParamLookup) *Plugin {
	return &Plugin{source: source, namespaces: namespaces, params: params}
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
	bound, err := p.source.current(ctx, a)
	if err != nil || len(bound) == 0 {
		return err
	}
	var base map[string]any
	var denials, audits []denial
	for _, bp := range bound {
		ok, err := matchResources(ctx, bp.match, a, p.namespaces, true)
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
		if base == nil {
			if base, err = p.baseActivation(ctx, a); err != nil {
				return apierrors.NewInternalError(err)
			}
		}
		for _, b := range bp.bindings {
			d, au := p.runBinding(ctx, bp.policy, b, a, base)
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
func (p *Plugin) runBinding(ctx context.Context, pol *policy, b *arv1.ValidatingAdmissionPolicyBinding, a *admission.Attributes, base map[string]any) (denials, audits []denial) {
	configError := func(err error) []denial {
		if pol.failOpen {
			return nil
		}
		return []denial{{decision: decision{message: "failed to configure binding: " + err.Error()}, policy: pol.name, binding: b.Name}}
	}
	if b.Spec.MatchResources != nil {
		m, err := compileMatch(b.Spec.MatchResources)
		if err != nil {
			return configError(err), nil
		}
		ok, err := matchResources(ctx, m, a, p.namespaces, false)
		if err != nil {
			return configError(err), nil
		}
		if !ok {
			return nil, nil
		}
	}
	params, err := p.collectParams(ctx, pol, b.Spec.ParamRef, a.Namespace)
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
	e := pol.newEvaluation(ctx, base, param)
	ok, err := pol.matchConditions(e)
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

// baseActivation is what every policy of the write sees.
func (p *Plugin) baseActivation(ctx context.Context, a *admission.Attributes) (map[string]any, error) {
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
	base := map[string]any{expr.ObjectVar: obj, expr.OldObjectVar: old, expr.RequestVar: expr.RequestValue(a, user, opts),
		expr.NamespaceVar: nil}
	if a.Namespace != "" && a.Kind.Kind != "Namespace" {
		ns, err := p.namespaces(ctx, a.Namespace)
		if err != nil {
			return nil, err
		}
		if base[expr.NamespaceVar], err = expr.JSONValue(ns, corev1.SchemeGroupVersion.WithKind("Namespace")); err != nil {
			return nil, err
		}
	}
	return base, nil
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
