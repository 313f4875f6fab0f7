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

// matches reports whether h is to be called for the write, in kube's
// order: rules, namespace selector, object selector, match conditions.
func matches(ctx context.Context, h *hook, a *admission.Attributes, req *request, namespaces match.NamespaceGetter) (bool, error) {
	if !slices.ContainsFunc(h.rules, func(r arv1.RuleWithOperations) bool { return match.Rule(&r, a) }) {
		return false, nil
	}
	if h.broken != nil {
		// Its failure policy decides when it is called.
		return true, nil
	}
	if ok, err := match.Namespace(ctx, h.namespaceSel, a, namespaces); !ok || err != nil {
		return false, err
	}
	if !match.Object(h.objectSel, a) {
		return false, nil
	}
	ok, err := conditionsMatch(ctx, h, req)
	if err != nil {
		if h.failOpen {
			return false, nil
		}
		return false, apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, err)
	}
	return ok, nil
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
	req, err := newRequest(ctx, a, v.authz)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	var called []*hook
	for _, h := range hooks {
		ok, err := matches(ctx, h, a, req, v.namespaces)
		if err != nil {
			return err
		}
		if ok {
			called = append(called, h)
		}
	}
	errs := make([]error, len(called))
	done := make(chan struct{}, len(called))
	for i, h := range called {
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
