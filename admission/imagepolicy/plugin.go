// Package imagepolicy is kube's ImagePolicyWebhook plugin: the images of a
// pod (and of its ephemeral containers) are sent in an
// imagepolicy.k8s.io/v1alpha1 ImageReview to a backend named by a
// kubeconfig, whose answer is cached (allowTTL, denyTTL); a denial is 403,
// and a backend that cannot answer denies, or with defaultAllow admits the
// pod annotated alpha.image-policy.k8s.io/failed-open.
package imagepolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/cache"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/audit"
)

// The annotations kube writes: on the audit event (AuditKeyPrefix and the
// backend's audit annotations) and on a pod admitted while the backend
// failed (FailedOpenAnnotation).
const (
	AuditKeyPrefix       = "imagepolicywebhook.image-policy.k8s.io/"
	FailedOpenAnnotation = "alpha.image-policy.k8s.io/failed-open"
)

// Reviewer asks the backend about one review.
type Reviewer func(ctx context.Context, review *imagepolicyv1alpha1.ImageReview) (imagepolicyv1alpha1.ImageReviewStatus, error)

// Plugin is the ImagePolicyWebhook plugin.
type Plugin struct {
	review            Reviewer
	cache             *cache.LRUExpireCache
	allowTTL, denyTTL time.Duration
	defaultAllow      bool
}

// New returns the plugin configured by data ({imagePolicy: {kubeConfigFile,
// allowTTL, denyTTL, retryBackoff, defaultAllow}}).
func New(data []byte) (*Plugin, error) {
	c, err := readConfig(data)
	if err != nil {
		return nil, err
	}
	review, err := newClient(c.KubeConfigFile, c.RetryBackoff)
	if err != nil {
		return nil, err
	}
	return &Plugin{review: review, cache: cache.NewLRUExpireCache(1024), allowTTL: c.AllowTTL, denyTTL: c.DenyTTL, defaultAllow: c.DefaultAllow}, nil
}

var (
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles creates and updates.
func (*Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate reviews the images of a pod write, or of an ephemeral
// containers update.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if (a.Subresource != "" && a.Subresource != "ephemeralcontainers") || a.Resource.GroupResource().String() != "pods" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	review := &imagepolicyv1alpha1.ImageReview{Spec: imagepolicyv1alpha1.ImageReviewSpec{
		Containers: images(pod, a.Subresource), Annotations: policyAnnotations(pod.Annotations), Namespace: a.Namespace}}
	if err := p.admit(ctx, pod, review); err != nil {
		return admission.NewForbidden(a, err)
	}
	return nil
}

func images(pod *corev1.Pod, subresource string) []imagepolicyv1alpha1.ImageReviewContainerSpec {
	var out []imagepolicyv1alpha1.ImageReviewContainerSpec
	if subresource != "" {
		for _, c := range pod.Spec.EphemeralContainers {
			out = append(out, imagepolicyv1alpha1.ImageReviewContainerSpec{Image: c.Image})
		}
		return out
	}
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.Containers...), pod.Spec.InitContainers...) {
		out = append(out, imagepolicyv1alpha1.ImageReviewContainerSpec{Image: c.Image})
	}
	return out
}

// policyAnnotations are the pod's annotations meant for image policies.
func policyAnnotations(all map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range all {
		if strings.Contains(k, ".image-policy.k8s.io/") {
			out[k] = v
		}
	}
	return out
}

// admit asks the cache, else the backend, and turns the answer into nil
// or the reason for a refusal.
func (p *Plugin) admit(ctx context.Context, pod *corev1.Pod, review *imagepolicyv1alpha1.ImageReview) error {
	key, err := json.Marshal(review.Spec)
	if err != nil {
		return err
	}
	if entry, ok := p.cache.Get(string(key)); ok {
		review.Status = entry.(imagepolicyv1alpha1.ImageReviewStatus)
	} else {
		status, err := p.review(ctx, review)
		if err != nil {
			return p.failed(ctx, pod, err)
		}
		review.Status = status
		ttl := p.denyTTL
		if status.Allowed {
			ttl = p.allowTTL
		}
		p.cache.Add(string(key), status, ttl)
	}
	for k, v := range review.Status.AuditAnnotations {
		audit.AddAnnotation(ctx, AuditKeyPrefix+k, v)
	}
	if !review.Status.Allowed {
		if review.Status.Reason != "" {
			return fmt.Errorf("image policy webhook backend denied one or more images: %s", review.Status.Reason)
		}
		return errors.New("one or more images rejected by webhook backend")
	}
	return nil
}

// failed is kube's answer when the backend cannot: the error, or with
// defaultAllow the pod admitted and marked. kube's plugin annotates the
// pod from its validating phase, so the stored pod carries the mark.
func (p *Plugin) failed(ctx context.Context, pod *corev1.Pod, err error) error {
	if !p.defaultAllow {
		return err
	}
	audit.AddAnnotation(ctx, AuditKeyPrefix+"failed-open", "true")
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[FailedOpenAnnotation] = "true"
	return nil
}
