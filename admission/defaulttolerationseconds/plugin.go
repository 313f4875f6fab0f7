// Package defaulttolerationseconds is kube's DefaultTolerationSeconds
// plugin: a pod that does not tolerate the not-ready and unreachable
// NoExecute taints tolerates them for a while (five minutes by default), so
// that a node's short outage does not evict it at once.
package defaulttolerationseconds

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/admission"
)

// Plugin adds the two tolerations.
type Plugin struct {
	notReady, unreachable corev1.Toleration
}

// New returns the plugin adding tolerations of the given seconds
// (--default-not-ready-toleration-seconds, --default-unreachable-toleration-seconds).
func New(notReadySeconds, unreachableSeconds int64) *Plugin {
	return &Plugin{
		notReady: corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &notReadySeconds},
		unreachable: corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &unreachableSeconds},
	}
}

var (
	_ admission.Mutator = (*Plugin)(nil)
	_ admission.Handles = (*Plugin)(nil)
)

// Handles creates and updates.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Admit adds the tolerations the pod lacks.
func (p *Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected *api.Pod but got %T", a.Object))
	}
	notReady, unreachable := false, false
	for _, t := range pod.Spec.Tolerations {
		noExecute := t.Effect == corev1.TaintEffectNoExecute || t.Effect == ""
		notReady = notReady || (noExecute && (t.Key == corev1.TaintNodeNotReady || t.Key == ""))
		unreachable = unreachable || (noExecute && (t.Key == corev1.TaintNodeUnreachable || t.Key == ""))
	}
	if !notReady {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, copyOf(p.notReady))
	}
	if !unreachable {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, copyOf(p.unreachable))
	}
	return nil
}

// copyOf gives each pod its own seconds: pods are stored and changed apart.
func copyOf(t corev1.Toleration) corev1.Toleration {
	s := *t.TolerationSeconds
	t.TolerationSeconds = &s
	return t
}
