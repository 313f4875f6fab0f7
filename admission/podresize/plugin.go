// Package podresize is kube's PodResizeValidator plugin: a resize
// (pods/resize) of a pod bound to a node is refused when the node is not
// a Linux node or cannot hold the pod's new requests. kube runs it by
// default, its InPlacePodVerticalScaling gate being on and locked in 1.37.
package podresize

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/resource"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/internal/boundpod"
)

// NodeGetter reads a node by name.
type NodeGetter = boundpod.NodeGetter

// The causes kube adds to a refused resize's Status.
const (
	ReasonNodeCapacity        metav1.CauseType = "NodeCapacity"
	ReasonUnsupportedPlatform metav1.CauseType = "UnsupportedPlatform"
)

// Plugin is the PodResizeValidator plugin.
type Plugin struct {
	nodes NodeGetter
}

// New returns the plugin reading nodes.
func New(nodes NodeGetter) *Plugin { return &Plugin{nodes: nodes} }

var (
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles updates.
func (*Plugin) Handles(op admission.Operation) bool { return op == admission.Update }

// Validate checks a resize of a bound pod whose spec changed (its
// generation moved) against its node.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.GroupResource().String() != "pods" || a.Subresource != "resize" {
		return nil
	}
	pod, _, err := boundpod.SpecChanged(a)
	if pod == nil {
		return err
	}
	node, err := boundpod.Node(ctx, p.nodes, a, pod.Spec.NodeName)
	if err != nil {
		return err
	}
	if os, ok := node.Labels[corev1.LabelOSStable]; ok && os != "linux" {
		return refused(a, fmt.Errorf("pod resize is only supported on linux nodes, node %q is %q", node.Name, os), ReasonUnsupportedPlatform)
	}
	if err := fits(pod, node.Status.Allocatable); err != nil {
		return refused(a, err, ReasonNodeCapacity)
	}
	return nil
}

// refused is kube's 403 with the reason as a cause.
func refused(a *admission.Attributes, err error, reason metav1.CauseType) error {
	forbidden := admission.NewForbidden(a, err)
	var status *apierrors.StatusError
	if errors.As(forbidden, &status) && status.ErrStatus.Details != nil {
		status.ErrStatus.Details.Causes = append(status.ErrStatus.Details.Causes, metav1.StatusCause{Type: reason})
	}
	return forbidden
}

// fits reports, in kube's words, the pod's cpu and memory requests (as the
// scheduler sums them, by component-helpers' PodRequests, the function
// kube's plugin calls) that exceed the node's allocatable.
func fits(pod *corev1.Pod, allocatable corev1.ResourceList) error {
	requests := resource.PodRequests(pod, resource.PodResourcesOptions{})
	cpu, mem := requests[corev1.ResourceCPU], requests[corev1.ResourceMemory]
	var msg []string
	if cpuAlloc := allocatable.Cpu(); cpu.Cmp(*cpuAlloc) > 0 {
		msg = append(msg, fmt.Sprintf("cpu, requested: %d, allocatable: %d", cpu.MilliValue(), cpuAlloc.MilliValue()))
	}
	if memAlloc := allocatable.Memory(); mem.Cmp(*memAlloc) > 0 {
		msg = append(msg, fmt.Sprintf("memory, requested: %d, allocatable: %d", mem.Value(), memAlloc.Value()))
	}
	if len(msg) > 0 {
		return fmt.Errorf("node didn't have enough allocatable resources: %s", strings.Join(msg, "; "))
	}
	return nil
}
