package noderestriction

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
)

// admitPodCertificateRequest: a kubelet asks for the certificates of the
// pods it runs, as their service accounts, for the signers they mount.
// kube's PodCertificateRequest gate is GA and on in 1.37 (capstan does not
// let it be turned off), so there is no refusal for it being off.
//
// Where the request names a pod, node or service account whose UID differs
// or that is not found yet, kube suspects its informers lag and answers
// with a plain error (500) rather than a 403, so that the kubelet retries.
// Those are written with %v: a wrapped API error would be answered as
// itself, where kube answers any wrapped error as a 500.
func (p *Plugin) admitPodCertificateRequest(ctx context.Context, nodeName string, a *admission.Attributes) error {
	if a.Operation != admission.Create {
		return forbidden(a, "unexpected operation %v", a.Operation)
	}
	if a.Subresource != "" {
		return forbidden(a, "unexpected subresource %v", a.Subresource)
	}
	spec, ok := podCertificateSpec(a.Object)
	if !ok {
		return forbidden(a, "unexpected type %T", a.Object)
	}
	if string(spec.NodeName) != nodeName {
		return forbidden(a, "PodCertificateRequest.Spec.NodeName=%q, which is not the requesting node %q", spec.NodeName, nodeName)
	}
	n, err := p.get.Nodes(ctx, nodeName)
	if err != nil {
		return lagOrForbidden(a, err, "while retrieving node %q named in the PodCertificateRequest: %v", nodeName, err)
	}
	podRef := a.Namespace + "/" + spec.PodName
	if n.UID != spec.NodeUID {
		return fmt.Errorf("PodCertificateRequest for pod %q names node UID %q, inconsistent with the running node (%q)", podRef, spec.NodeUID, n.UID)
	}
	pod, err := p.get.Pods(ctx, a.Namespace, spec.PodName)
	if err != nil {
		return lagOrForbidden(a, err, "while retrieving pod %q named in the PodCertificateRequest: %v", podRef, err)
	}
	if pod.UID != spec.PodUID {
		return fmt.Errorf("PodCertificateRequest for pod %q contains pod UID (%q) which differs from running pod %q", podRef, spec.PodUID, pod.UID)
	}
	if pod.Spec.NodeName != nodeName {
		return forbidden(a, "pod %q is not running on node %q named in the PodCertificateRequest", podRef, spec.NodeName)
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return forbidden(a, "pod %q is a mirror pod", podRef)
	}
	// The pod's UID matched, so a different name is no lag: a 403.
	if spec.ServiceAccountName != pod.Spec.ServiceAccountName {
		return forbidden(a, "PodCertificateRequest for pod %q contains serviceAccountName (%q) that differs from running pod (%q)", podRef, spec.ServiceAccountName, pod.Spec.ServiceAccountName)
	}
	saRef := a.Namespace + "/" + spec.ServiceAccountName
	sa, err := p.get.ServiceAccounts(ctx, a.Namespace, spec.ServiceAccountName)
	if err != nil {
		return lagOrForbidden(a, err, "while retrieving service account %q named in the PodCertificateRequest: %v", saRef, err)
	}
	if sa.UID != spec.ServiceAccountUID {
		return fmt.Errorf("PodCertificateRequest for pod %q names service account UID %q, which differs from the running service account (%q)", podRef, spec.ServiceAccountUID, sa.UID)
	}
	if err := p.checkSigner(ctx, pod, spec, a); err != nil {
		return admission.NewForbidden(a, err)
	}
	return nil
}

// lagOrForbidden is the refusal of a failed lookup: a plain error (500)
// for one not found, which a retry may find; a 403 otherwise.
func lagOrForbidden(a *admission.Attributes, err error, format string, args ...any) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf(format, args...)
	}
	return forbidden(a, format, args...)
}

// checkSigner: the pod mounts a certificate from the signer, or the
// kubelet is authorized to ask for the signer's certificates for the
// service account.
func (p *Plugin) checkSigner(ctx context.Context, pod *corev1.Pod, spec *certificatesv1.PodCertificateRequestSpec, a *admission.Attributes) error {
	if mountsSigner(pod, spec.SignerName) {
		return nil
	}
	// A signer name has a slash, which RBAC resource names may not: the
	// resource is the name with colons, as ClusterTrustBundle names are.
	resource := strings.ReplaceAll(spec.SignerName, "/", ":")
	allowed, user, err := p.allowed(ctx, a, "request-serviceaccounts-podcertificate-signer", resource, spec.ServiceAccountName)
	switch {
	case allowed:
		return nil
	case err != nil:
		return fmt.Errorf("error authorizing %s to request podcertificaterequests for signer %q: %w", user, spec.SignerName, err)
	}
	return fmt.Errorf("pod %q does not mount a podCertificate projected volume for signer %q", a.Namespace+"/"+spec.PodName, spec.SignerName)
}

// mountsSigner: pod projects a certificate from signer into a volume.
func mountsSigner(pod *corev1.Pod, signer string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.PodCertificate != nil && s.PodCertificate.SignerName == signer {
				return true
			}
		}
	}
	return false
}

// podCertificateSpec is the spec of a PodCertificateRequest at v1 or
// v1beta1, as v1 (the fields checked here are the same in both).
func podCertificateSpec(obj runtime.Object) (*certificatesv1.PodCertificateRequestSpec, bool) {
	switch r := obj.(type) {
	case *certificatesv1.PodCertificateRequest:
		return &r.Spec, true
	case *certificatesv1beta1.PodCertificateRequest:
		s := r.Spec
		return &certificatesv1.PodCertificateRequestSpec{SignerName: s.SignerName, PodName: s.PodName, PodUID: s.PodUID,
			ServiceAccountName: s.ServiceAccountName, ServiceAccountUID: s.ServiceAccountUID, NodeName: s.NodeName, NodeUID: s.NodeUID}, true
	}
	return nil, false
}
