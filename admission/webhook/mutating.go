package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/match"
)

// Mutating is the MutatingAdmissionWebhook plugin.
type Mutating struct {
	source     *Source
	namespaces match.NamespaceGetter
}

// NewMutating returns the plugin over source.
func NewMutating(source *Source, namespaces match.NamespaceGetter) *Mutating {
	return &Mutating{source: source, namespaces: namespaces}
}

// Handles: every operation.
func (m *Mutating) Handles(admission.Operation) bool { return true }

// Admit calls the webhooks that select the write in order, each seeing the
// object as the ones before it left it. A webhook with reinvocationPolicy
// IfNeeded is called once more at the end if a later one changed the
// object after it.
func (m *Mutating) Admit(ctx context.Context, a *admission.Attributes) error {
	if exempt(a) {
		return nil
	}
	hooks, err := m.source.current(ctx, a)
	if err != nil || len(hooks) == 0 {
		return err
	}
	req, err := newRequest(ctx, a)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	changes := 0            // how many calls changed the object
	seen := map[*hook]int{} // changes before each IfNeeded webhook's call
	for _, h := range hooks {
		changed, err := m.callIfMatches(ctx, h, a, req)
		if err != nil {
			return err
		}
		if h.reinvoke {
			seen[h] = changes
		}
		if changed {
			changes++
		}
	}
	for _, h := range hooks {
		if before, ok := seen[h]; !ok || before == changes {
			continue
		}
		if _, err := m.callIfMatches(ctx, h, a, req); err != nil {
			return err
		}
	}
	return nil
}

// callIfMatches calls h if it selects the write and applies its patch.
func (m *Mutating) callIfMatches(ctx context.Context, h *hook, a *admission.Attributes, req *request) (bool, error) {
	ok, err := matches(ctx, h, a, req, m.namespaces)
	if err != nil || !ok {
		return false, err
	}
	resp, err := call(ctx, h, req, true)
	if err != nil {
		return false, failure(h, err)
	}
	changed, err := applyPatch(h, a, req, resp)
	if err != nil {
		return false, failure(h, err)
	}
	return changed, nil
}

// applyPatch applies a webhook's JSON patch to the object in place (the
// handler holds it), then prunes and defaults it as the handler did the
// body, and encodes it again for the webhooks after.
func applyPatch(h *hook, a *admission.Attributes, req *request, resp *admissionv1.AdmissionResponse) (bool, error) {
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
	patched, err := patch.Apply(req.object)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if err := replaceObject(a.Object, patched); err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if a.Pruner != nil {
		if _, err := a.Pruner(a.Object); err != nil {
			return false, apierrors.NewInternalError(err)
		}
	}
	if a.Defaulter != nil {
		a.Defaulter(a.Object)
	}
	before := req.object
	if req.object, err = encodeObject(a.Object, a.Kind); err != nil {
		return false, apierrors.NewInternalError(err)
	}
	req.vars = nil
	return string(before) != string(req.object), nil
}

// replaceObject decodes data into obj, replacing what obj held but its
// type meta.
func replaceObject(obj runtime.Object, data []byte) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		var m map[string]any
		if err := utiljson.Unmarshal(data, &m); err != nil {
			return err
		}
		u.Object = m
		return nil
	}
	typeMeta := obj.GetObjectKind().GroupVersionKind()
	fresh := reflect.New(reflect.TypeOf(obj).Elem())
	if err := json.Unmarshal(data, fresh.Interface()); err != nil {
		return err
	}
	reflect.ValueOf(obj).Elem().Set(fresh.Elem())
	obj.GetObjectKind().SetGroupVersionKind(typeMeta)
	return nil
}
