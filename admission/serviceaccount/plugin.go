// Package serviceaccount is kube's ServiceAccount admission plugin: a pod
// runs as a service account (default: "default", waited for briefly while
// the service account controller creates it), gets the projected
// kube-api-access-* volume of its token, CA and namespace mounted in every
// container, and its account's image pull secrets; mirror pods may refer to
// no account and no secret.
package serviceaccount

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/admission"
)

const (
	// DefaultName is the account a pod that names none runs as.
	DefaultName = "default"
	// enforceMountableSecrets, "true" on an account, limits its pods to
	// the secrets the account lists.
	enforceMountableSecrets = "kubernetes.io/enforce-mountable-secrets"
	mirrorPodAnnotation     = "kubernetes.io/config.mirror"
)

// Getter reads a service account. cached reads may answer from a cache
// that lags; the plugin reads again uncached before it says an account
// does not exist.
type Getter func(ctx context.Context, namespace, name string, cached bool) (*corev1.ServiceAccount, error)

// Plugin is the ServiceAccount plugin.
type Plugin struct {
	get Getter
	// generateName makes the token volume's name; a field for tests.
	generateName func(prefix string) string
	// retries and retryWait are how often and how long between reads the
	// plugin waits for the default account (kube: 10, 100-200 ms).
	retries   int
	retryWait func() time.Duration
}

// New returns the plugin reading accounts with get.
func New(get Getter) *Plugin {
	return &Plugin{
		get: get, generateName: generateName, retries: 10,
		retryWait: func() time.Duration { return time.Duration(100+rand.IntN(100)) * time.Millisecond },
	}
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles creates and updates.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// podOf is the pod a write concerns, nil when the plugin ignores the write.
func podOf(a *admission.Attributes) *corev1.Pod {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || (a.Subresource != "" && a.Subresource != "ephemeralcontainers") {
		return nil
	}
	pod, _ := a.Object.(*corev1.Pod)
	return pod
}

// Admit gives a new pod its account, token volume and pull secrets.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	pod := podOf(a)
	if pod == nil || a.Operation != admission.Create {
		return nil
	}
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		return p.Validate(ctx, a)
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultName
		pod.Spec.DeprecatedServiceAccount = DefaultName //nolint:staticcheck // kube sets it for old clients
	}
	sa, err := p.account(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if automount(sa, pod) {
		mountToken(pod, p.generateName)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 {
		pod.Spec.ImagePullSecrets = make([]corev1.LocalObjectReference, len(sa.ImagePullSecrets))
		for i, s := range sa.ImagePullSecrets {
			pod.Spec.ImagePullSecrets[i].Name = s.Name
		}
	}
	return p.Validate(ctx, a)
}

// Validate refuses mirror pods that refer to accounts or secrets, pods
// without an account, and secrets an enforcing account does not list.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	pod := podOf(a)
	if pod == nil {
		return nil
	}
	if a.Operation == admission.Update && a.Subresource == "ephemeralcontainers" {
		return p.validateEphemeral(ctx, a, pod)
	}
	if a.Operation != admission.Create {
		return nil
	}
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		if err := validateMirror(pod); err != nil {
			return admission.NewForbidden(a, err)
		}
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		return admission.NewForbidden(a, fmt.Errorf("no service account specified for pod %s/%s", a.Namespace, pod.Name))
	}
	sa, err := p.account(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %v", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if enforces(sa) {
		if err := limitSecretReferences(sa, pod); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	return nil
}

func (p *Plugin) validateEphemeral(ctx context.Context, a *admission.Attributes, pod *corev1.Pod) error {
	if pod.Spec.ServiceAccountName == "" {
		return admission.NewForbidden(a, fmt.Errorf("no service account specified for pod %s/%s", a.Namespace, pod.Name))
	}
	sa, err := p.account(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if !enforces(sa) {
		return nil
	}
	// kube answers this one unwrapped: a 500 with the message.
	return limitEphemeralSecretReferences(sa, pod)
}

// account reads the account: from the cache, then (a new namespace's
// default account may still be on its way from the controller) up to
// retries times uncached for the default one, once for others.
func (p *Plugin) account(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	sa, err := p.get(ctx, namespace, name, true)
	if err == nil || !apierrors.IsNotFound(err) {
		return sa, err
	}
	attempts := 1
	if name == DefaultName {
		attempts = p.retries
	}
	wait := p.retryWait()
	for i := range attempts {
		if i > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		sa, err := p.get(ctx, namespace, name, false)
		if err == nil || !apierrors.IsNotFound(err) {
			return sa, err
		}
	}
	return nil, apierrors.NewNotFound(corev1.Resource("serviceaccount"), name)
}

func automount(sa *corev1.ServiceAccount, pod *corev1.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

func enforces(sa *corev1.ServiceAccount) bool {
	v, _ := strconv.ParseBool(sa.Annotations[enforceMountableSecrets])
	return v
}
