// Package mutating is the MutatingAdmissionPolicy plugin: each write a
// policy and one of its bindings select is changed by the policy's CEL
// mutations (ApplyConfiguration merged as server-side apply merges, or
// JSONPatch), once per param the binding names, in order.
package mutating

import (
	"context"
	"errors"
	"fmt"

	arv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/match"
	"github.com/capstan-io/capstan/admission/policy/generic"
)

// PluginName is kube's name of the plugin.
const PluginName = "MutatingAdmissionPolicy"

// Plugin is the MutatingAdmissionPolicy plugin.
type Plugin struct {
	source *Source
	generic.Deps
}

// New returns the plugin over source.
func New(source *Source, deps generic.Deps) *Plugin {
	return &Plugin{source: source, Deps: deps}
}

// Handles: every operation; a delete has no object to change.
func (p *Plugin) Handles(admission.Operation) bool { return true }

// Admit runs the mutations of every bound policy that selects the write,
// policies by name, bindings by name, params in order. On the chain's
// second run only IfNeeded policies that a later change made due run.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.Group == arv1.GroupName || a.Object == nil {
		// Like kube, admission's own configuration is never changed by
		// policies.
		return nil
	}
	bound, err := p.source.Current(ctx, a)
	if err != nil || len(bound) == 0 {
		return err
	}
	r := &run{plugin: p, a: a, namespaces: match.Memo(p.Namespaces)}
	r.state, r.again = a.Begin(PluginName)
	defer r.state.SetOutput(a.Object)
	for _, b := range bound {
		if err := r.policy(ctx, b.Policy, b.Bindings); err != nil {
			return err
		}
	}
	return r.denial()
}

// policyError is a policy's failure; its failure policy decides.
type policyError struct {
	policy  *policy
	binding string // "" for the policy's own
	err     error
	reason  metav1.StatusReason
}

func (e policyError) message() string {
	if e.binding == "" {
		return fmt.Sprintf("policy %q denied request: %s", e.policy.name, e.err)
	}
	return fmt.Sprintf("policy '%s' with binding '%s' denied request: %s", e.policy.name, e.binding, e.err)
}

// denial is kube's refusal for the failures of policies whose failure
// policy is Fail: 403 with the first one's message (and reason), each
// failure a cause.
func (r *run) denial() error {
	var failed []policyError
	for _, e := range r.errs {
		if !e.policy.failOpen {
			failed = append(failed, e)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	var status *apierrors.StatusError
	if !errors.As(admission.NewForbidden(r.a, errors.New("admission request denied by policy")), &status) {
		return apierrors.NewInternalError(errors.New("failed to create status error"))
	}
	status.ErrStatus.Message = failed[0].message()
	if failed[0].reason != "" {
		status.ErrStatus.Reason = failed[0].reason
	}
	for _, e := range failed {
		status.ErrStatus.Details.Causes = append(status.ErrStatus.Details.Causes, metav1.StatusCause{Message: e.message()})
	}
	return status
}
