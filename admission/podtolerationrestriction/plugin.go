// Package podtolerationrestriction is kube's PodTolerationRestriction
// plugin: a new pod gains its namespace's default tolerations (the
// scheduler.alpha.kubernetes.io/defaultTolerations annotation, or the
// configuration's default), a pod that is not BestEffort tolerates memory
// pressure, and a pod's tolerations must stay within its namespace's
// whitelist (scheduler.alpha.kubernetes.io/tolerationsWhitelist, or the
// configuration's).
package podtolerationrestriction

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/internal/qos"
	"github.com/capstan-io/capstan/admission/internal/tolerations"
)

// The namespace annotations the plugin reads.
const (
	DefaultAnnotation   = "scheduler.alpha.kubernetes.io/defaultTolerations"
	WhitelistAnnotation = "scheduler.alpha.kubernetes.io/tolerationsWhitelist"
)

// NamespaceGetter reads a namespace by name.
type NamespaceGetter func(ctx context.Context, name string) (*corev1.Namespace, error)

// Plugin is the PodTolerationRestriction plugin.
type Plugin struct {
	namespaces NamespaceGetter
	config     *Configuration
}

// New returns the plugin configured by data (a
// podtolerationrestriction.admission.k8s.io/v1alpha1 Configuration; nil:
// no defaults, no whitelist).
func New(data []byte, namespaces NamespaceGetter) (*Plugin, error) {
	c, err := readConfiguration(data)
	if err != nil {
		return nil, err
	}
	return &Plugin{namespaces: namespaces, config: c}, nil
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles creates and updates.
func (*Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Admit merges the namespace's default tolerations (on create) and the
// memory-pressure toleration (a pod that is not BestEffort) into the pod's,
// then validates.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	var extra []corev1.Toleration
	if a.Operation == admission.Create {
		ts, err := p.annotated(ctx, a.Namespace, DefaultAnnotation)
		if err != nil {
			return err
		}
		if ts == nil {
			ts = p.config.Default
		}
		extra = ts
	}
	if !qos.BestEffort(pod) {
		extra = append(extra, corev1.Toleration{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	if len(extra) > 0 {
		pod.Spec.Tolerations = tolerations.Merge(pod.Spec.Tolerations, extra)
	}
	return p.Validate(ctx, a)
}

// Validate refuses a pod with a toleration its namespace's whitelist (or
// the cluster's, when the namespace has none) does not cover.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	pod, ok := podOf(a)
	if !ok || len(pod.Spec.Tolerations) == 0 {
		return nil
	}
	whitelist, err := p.annotated(ctx, a.Namespace, WhitelistAnnotation)
	if err != nil {
		return err
	}
	scope := "namespace"
	if whitelist == nil {
		whitelist, scope = p.config.Whitelist, "cluster"
	}
	if !tolerations.Whitelisted(pod.Spec.Tolerations, whitelist) {
		return fmt.Errorf("pod tolerations (possibly merged with namespace default tolerations) conflict with its %s whitelist", scope)
	}
	return nil
}

// podOf is the pod of a write to pods itself.
func podOf(a *admission.Attributes) (*corev1.Pod, bool) {
	if a.Resource.GroupResource().String() != "pods" || a.Subresource != "" {
		return nil, false
	}
	pod, ok := a.Object.(*corev1.Pod)
	return pod, ok
}

// annotated reads the tolerations of the namespace's annotation key: nil
// without the annotation, none when it is empty.
func (p *Plugin) annotated(ctx context.Context, namespace, key string) ([]corev1.Toleration, error) {
	ns, err := p.namespaces(ctx, namespace)
	if apierrors.IsNotFound(err) {
		return nil, err
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	v, ok := ns.Annotations[key]
	if !ok {
		return nil, nil
	}
	var ts []corev1.Toleration
	if v != "" {
		if err := json.Unmarshal([]byte(v), &ts); err != nil {
			return nil, err
		}
	}
	if ts == nil {
		// An empty annotation, or "null", is no tolerations: not the
		// configuration's.
		ts = []corev1.Toleration{}
	}
	return ts, nil
}
