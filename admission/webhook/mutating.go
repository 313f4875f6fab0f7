package webhook

import (
	"context"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/match"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/internal/safejsonpatch"
)

// Mutating is the MutatingAdmissionWebhook plugin.
type Mutating struct {
	source     *Source
	namespaces match.NamespaceGetter
	authz      authz.Authorizer
}

// NewMutating returns the plugin over source; az answers the match
// conditions' authorizer checks.
func NewMutating(source *Source, namespaces match.NamespaceGetter, az authz.Authorizer) *Mutating {
	return &Mutating{source: source, namespaces: namespaces, authz: az}
}

// Handles: every operation.
func (m *Mutating) Handles(admission.Operation) bool { return true }

// PluginName is kube's name of the mutating plugin.
const PluginName = "MutatingAdmissionWebhook"

// Admit calls the webhooks that select the write in order, each seeing the
// object as the ones before it left it. On the chain's second run only
// the webhooks with reinvocationPolicy IfNeeded that an object change
// after them made due are called.
func (m *Mutating) Admit(ctx context.Context, a *admission.Attributes) error {
	if exempt(a) {
		return nil
	}
	hooks, err := m.source.current(ctx, a)
	if err != nil || len(hooks) == 0 {
		return err
	}
	state, again := a.Begin(PluginName)
	defer state.SetOutput(a.Object)
	rs, err := newRequests(ctx, a, m.authz)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	for _, h := range hooks {
		key := h.configuration + "/" + h.name
		if again && !state.Due(key) {
			continue
		}
		matched, changed, err := m.callIfMatches(ctx, h, a, rs)
		if err != nil {
			return err
		}
		if changed {
			state.Changed()
			a.Reinvocation.RequestReinvoke()
		}
		if matched && h.reinvoke {
			state.Invoked(key)
		}
	}
	return nil
}

// callIfMatches calls h if it selects the write and applies its patch.
func (m *Mutating) callIfMatches(ctx context.Context, h *hook, a *admission.Attributes, rs *requests) (matched, changed bool, err error) {
	req, err := invocation(ctx, h, a, rs, m.namespaces)
	if err != nil || req == nil {
		return false, false, err
	}
	resp, err := call(ctx, h, req, true)
	if err != nil {
		return true, false, failure(h, err)
	}
	changed, err = applyPatch(ctx, h, a, rs, req, resp)
	if err != nil {
		return true, false, failure(h, err)
	}
	return true, changed, nil
}

// applyPatch applies a webhook's JSON patch to the object it was sent
// (the write's, or its conversion to the webhook's version, converted
// back), in place (the handler holds it), prunes and defaults it as the
// handler did the body, and encodes it again for the webhooks after.
func applyPatch(ctx context.Context, h *hook, a *admission.Attributes, rs *requests, req *request, resp *admissionv1.AdmissionResponse) (bool, error) {
	if len(resp.Patch) == 0 {
		return false, nil
	}
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		return false, &callError{h.name, fmt.Errorf("received undecodable patch in webhook response: %w", err)}
	}
	if len(patch) == 0 {
		return false, nil
	}
	if a.Object == nil {
		return false, apierrors.NewInternalError(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this operation", h.name))
	}
	patched, err := safejsonpatch.Apply(patch, req.object)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if err := req.attrs.ReplaceJSON(ctx, patched); err != nil {
		return false, apierrors.NewInternalError(err)
	}
	return rs.changed()
}
