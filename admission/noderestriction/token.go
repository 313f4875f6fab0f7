package noderestriction

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/admission"
)

// admitToken: a kubelet asks for service account tokens on behalf of the
// pods it runs, so each token it gets is bound to one of them. Binding to
// the pod also keeps it from binding a token to some other node: the server
// infers the node from the pod.
func (p *Plugin) admitToken(ctx context.Context, nodeName string, a *admission.Attributes) error {
	if a.Operation != admission.Create || a.Subresource != "token" {
		return nil
	}
	tr, ok := a.Object.(*authenticationv1.TokenRequest)
	if !ok {
		return forbidden(a, "unexpected type %T", a.Object)
	}
	ref := tr.Spec.BoundObjectRef
	if ref == nil || ref.APIVersion != "v1" || ref.Kind != "Pod" || ref.Name == "" {
		return forbidden(a, "node requested token not bound to a pod")
	}
	if ref.UID == "" {
		return forbidden(a, "node requested token with a pod binding without a uid")
	}
	pod, err := p.get.Pods(ctx, a.Namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if ref.UID != pod.UID {
		return forbidden(a, "the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID)
	}
	if pod.Spec.NodeName != nodeName {
		return forbidden(a, "node requested token bound to a pod scheduled on a different node")
	}
	// kube checks the audience under ServiceAccountNodeAudienceRestriction,
	// a beta gate on by default in 1.37 that capstan does not let be turned
	// off.
	if err := p.checkAudience(ctx, tr, pod, a); err != nil {
		return admission.NewForbidden(a, err)
	}
	return nil
}

// checkAudience: a kubelet may ask for a token for the audience a pod of
// its uses (in a projected token or through a CSI driver's token
// requests), or for one it is authorized for. The API server's own
// audiences are no exception: without one asked for, the audience checked
// is "".
func (p *Plugin) checkAudience(ctx context.Context, tr *authenticationv1.TokenRequest, pod *corev1.Pod, a *admission.Attributes) error {
	var audience string
	switch len(tr.Spec.Audiences) {
	case 0:
	case 1:
		audience = tr.Spec.Audiences[0]
	default:
		return fmt.Errorf("node may only request 0 or 1 audiences")
	}
	used, err := p.podUsesAudience(ctx, pod, audience)
	if err != nil {
		return fmt.Errorf("error validating audience %q: %w", audience, err)
	}
	if used {
		return nil
	}
	// The service account is the object of the request: the path names it.
	allowed, user, err := p.allowed(ctx, a, "request-serviceaccounts-token-audience", audience, a.Name)
	switch {
	case allowed:
		return nil
	case err != nil:
		return fmt.Errorf("error authorizing %s to request tokens for audience %q: %w", user, audience, err)
	}
	return fmt.Errorf("%s is not authorized to request tokens for audience %q", user, audience)
}
