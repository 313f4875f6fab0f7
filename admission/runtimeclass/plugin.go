// Package runtimeclass is kube's RuntimeClass plugin: a pod naming a
// RuntimeClass must name one that exists; it gets the class's pod overhead
// and the class's node selector and tolerations.
package runtimeclass

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/internal/tolerations"
)

// Getter reads a RuntimeClass.
type Getter func(ctx context.Context, name string) (*nodev1.RuntimeClass, error)

// Plugin applies and checks runtime classes.
type Plugin struct{ get Getter }

// New returns the plugin reading classes with get.
func New(get Getter) *Plugin { return &Plugin{get: get} }

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles creates.
func (*Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

var (
	errOverheadMismatch = errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
	errOverheadAlone    = errors.New("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
)

// Admit sets the class's overhead and scheduling on the pod.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	pod, rc, err := p.objects(ctx, a)
	if pod == nil || rc == nil || err != nil {
		return err
	}
	if rc.Overhead != nil {
		if len(pod.Spec.Overhead) > 0 && !equality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return admission.NewForbidden(a, errOverheadMismatch)
		}
		pod.Spec.Overhead = rc.Overhead.PodFixed
	}
	if rc.Scheduling == nil {
		return nil
	}
	selector := pod.Spec.NodeSelector
	if selector == nil {
		selector = rc.Scheduling.NodeSelector
	} else {
		for k, v := range rc.Scheduling.NodeSelector {
			if pv, ok := selector[k]; ok && pv != v {
				return admission.NewForbidden(a, fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, pv))
			}
			selector[k] = v
		}
	}
	pod.Spec.NodeSelector = selector
	pod.Spec.Tolerations = tolerations.Merge(pod.Spec.Tolerations, rc.Scheduling.Tolerations)
	return nil
}

// Validate checks the pod's overhead is its class's.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	pod, rc, err := p.objects(ctx, a)
	if pod == nil || err != nil {
		return err
	}
	if rc != nil && rc.Overhead != nil {
		if !equality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return admission.NewForbidden(a, errOverheadMismatch)
		}
	} else if pod.Spec.Overhead != nil {
		return admission.NewForbidden(a, errOverheadAlone)
	}
	return nil
}

// objects are the pod and its class (nil if it names none); a nil pod
// when the write is not a pod's.
func (p *Plugin) objects(ctx context.Context, a *admission.Attributes) (*corev1.Pod, *nodev1.RuntimeClass, error) {
	if a.Subresource != "" || a.Resource.Group != "" || a.Resource.Resource != "pods" {
		return nil, nil, nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil, nil, apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if pod.Spec.RuntimeClassName == nil {
		return pod, nil, nil
	}
	rc, err := p.get(ctx, *pod.Spec.RuntimeClassName)
	if apierrors.IsNotFound(err) {
		return pod, nil, admission.NewForbidden(a, fmt.Errorf("pod rejected: RuntimeClass %q not found", *pod.Spec.RuntimeClassName))
	}
	return pod, rc, err
}
