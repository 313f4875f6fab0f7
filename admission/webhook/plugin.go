// Package webhook is admission by webhooks: MutatingAdmissionWebhook and
// ValidatingAdmissionWebhook. Each write that a webhook's rules, selectors
// and match conditions select is sent to it as an AdmissionReview (v1 or
// v1beta1); mutating webhooks are called in order and their JSON patches
// applied, validating webhooks are called in parallel.
package webhook

import (
	"context"
	"fmt"
	"slices"

	arv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/match"
	"github.com/capstan-io/capstan/apis/admissionregistration"
	"github.com/capstan-io/capstan/authz"
)

// Plugin names, kube's.
const (
	MutatingPluginName   = "MutatingAdmissionWebhook"
	ValidatingPluginName = "ValidatingAdmissionWebhook"
)

// exempt reports whether no webhook may see writes of a's resource:
// admission's own configuration, so that a broken webhook cannot lock
// itself in, and the virtual resources kube excludes.
func exempt(a *admission.Attributes) bool {
	gr := a.Resource.GroupResource()
	return gr.Group == arv1.GroupName || slices.Contains(admissionregistration.ExcludedResources, gr)
}

// invocation reports whether h is to be called for the write, and with
// which request: the write as requested when a rule selects it, else,
// with matchPolicy Equivalent, the write converted to the first other
// version of its resource a rule selects. Kube's order: rules, namespace
// selector, object selector, match conditions (on the converted write).
func invocation(ctx context.Context, h *hook, a *admission.Attributes, rs *requests, namespaces match.NamespaceGetter) (*request, error) {
	v, ok := selected(h, a)
	if !ok {
		return nil, nil
	}
	if h.broken != nil {
		// Its failure policy decides when it is called.
		return rs.base, nil
	}
	if ok, err := match.Namespace(ctx, h.namespaceSel, a, namespaces); !ok || err != nil {
		return nil, err
	}
	if !match.Object(h.objectSel, a) {
		return nil, nil
	}
	req, err := rs.at(ctx, v)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	ok, err = conditionsMatch(ctx, h, req)
	switch {
	case err != nil && h.failOpen:
		return nil, nil
	case err != nil:
		return nil, apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, err)
	case !ok:
		return nil, nil
	}
	return req, nil
}

// selected is the version of the write h's rules select: its own, or
// with matchPolicy Equivalent another version of its resource.
func selected(h *hook, a *admission.Attributes) (admission.Version, bool) {
	if slices.ContainsFunc(h.rules, func(r arv1.RuleWithOperations) bool { return match.Rule(&r, a) }) {
		return admission.Version{Resource: a.Resource, Kind: a.Kind}, true
	}
	if !h.equivalent {
		return admission.Version{}, false
	}
	return admission.Equivalent(a, h.rules, match.Rule)
}

// Validating is the ValidatingAdmissionWebhook plugin.
type Validating struct {
	source     *Source
	namespaces match.NamespaceGetter
	authz      authz.Authorizer
}

// NewValidating returns the plugin over source.
func NewValidating(source *Source, namespaces match.NamespaceGetter, az authz.Authorizer) *Validating {
	return &Validating{source: source, namespaces: namespaces, authz: az}
}

// Validate calls every webhook that selects the write, at once, and
// refuses the write with the first refusal in the webhooks' order.
func (v *Validating) Validate(ctx context.Context, a *admission.Attributes) error {
	if exempt(a) {
		return nil
	}
	hooks, err := v.source.current(ctx, a)
	if err != nil || len(hooks) == 0 {
		return err
	}
	rs, err := newRequests(ctx, a, v.authz)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	var called []*hook
	var reqs []*request
	for _, h := range hooks {
		req, err := invocation(ctx, h, a, rs, v.namespaces)
		if err != nil {
			return err
		}
		if req != nil {
			called, reqs = append(called, h), append(reqs, req)
		}
	}
	errs := make([]error, len(called))
	done := make(chan struct{}, len(called))
	for i, h := range called {
		req := reqs[i]
		go func() {
			defer func() { done <- struct{}{} }()
			defer func() {
				if r := recover(); r != nil {
					errs[i] = failure(h, &callError{h.name, fmt.Errorf("panic: %v", r)})
				}
			}()
			_, err := call(ctx, h, req, false)
			errs[i] = failure(h, err)
		}()
	}
	for range called {
		<-done
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Handles: every operation.
func (v *Validating) Handles(admission.Operation) bool { return true }
