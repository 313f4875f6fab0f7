// Package boundpod is what kube's node-checking pod plugins
// (PodResizeValidator, NodeDeclaredFeatureValidator) share: the update of a
// pod already bound to a node whose spec changed, and its node.
package boundpod

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/admission"
)

// NodeGetter reads a node by name.
type NodeGetter func(ctx context.Context, name string) (*corev1.Node, error)

// SpecChanged returns the new and old pod of an update of a bound pod
// whose generation moved (the spec changed); nil pods when there is
// nothing to check. A write of another type is kube's 400.
func SpecChanged(a *admission.Attributes) (pod, old *corev1.Pod, err error) {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("expected a pod but got a %T", a.Object))
	}
	if pod.Spec.NodeName == "" {
		return nil, nil, nil
	}
	old, ok = a.OldObject.(*corev1.Pod)
	if !ok {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("expected an old pod but got a %T", a.OldObject))
	}
	if old.Generation == pod.Generation {
		return nil, nil, nil
	}
	return pod, old, nil
}

// Node reads the pod's node, refusing the write with kube's 403 when it
// cannot.
func Node(ctx context.Context, nodes NodeGetter, a *admission.Attributes, name string) (*corev1.Node, error) {
	node, err := nodes(ctx, name)
	if apierrors.IsNotFound(err) {
		return nil, admission.NewForbidden(a, fmt.Errorf("node %q not found", name))
	}
	if err != nil {
		return nil, admission.NewForbidden(a, fmt.Errorf("failed to get node %q: %w", name, err))
	}
	return node, nil
}
