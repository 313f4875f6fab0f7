// Package nodetaint is kube's TaintNodesByCondition plugin: a new Node is
// tainted not-ready (NoSchedule) until its kubelet reports it ready, so
// that nothing is scheduled onto it before.
package nodetaint

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-io/capstan/admission"
)

// Plugin adds the taint.
type Plugin struct{}

var (
	_ admission.Mutator = Plugin{}
	_ admission.Handles = Plugin{}
)

// Handles creates.
func (Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit taints a new node not-ready unless it is already.
func (Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "nodes" || a.Subresource != "" {
		return nil
	}
	node, ok := a.Object.(*corev1.Node)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	taint := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	for _, t := range node.Spec.Taints {
		if t.MatchTaint(&taint) {
			return nil
		}
	}
	node.Spec.Taints = append(node.Spec.Taints, taint)
	return nil
}
