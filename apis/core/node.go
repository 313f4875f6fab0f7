package core

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// NodeStrategy is the strategy of the nodes resource. Unlike most
// resources, a node may be created with its status: the kubelet registers
// itself with what it knows.
type NodeStrategy struct{}

var (
	_ registry.Strategy         = NodeStrategy{}
	_ registry.Defaulter        = NodeStrategy{}
	_ registry.FieldSelectable  = NodeStrategy{}
	_ registry.WarningsOnCreate = NodeStrategy{}
	_ registry.WarningsOnUpdate = NodeStrategy{}
)

// NamespaceScoped is false: nodes are cluster scoped.
func (NodeStrategy) NamespaceScoped() bool { return false }

// Default applies kube's node defaults: allocatable defaults to capacity,
// and quantities are rounded up to milli precision.
func (NodeStrategy) Default(obj runtime.Object) { DefaultNode(obj.(*corev1.Node)) }

// DefaultNode applies kube's node defaults.
func DefaultNode(n *corev1.Node) {
	s := &n.Status
	if s.Allocatable == nil && s.Capacity != nil {
		s.Allocatable = s.Capacity.DeepCopy()
	}
	roundResourceList(s.Capacity)
	roundResourceList(s.Allocatable)
}

// PrepareForCreate drops the removed dynamic kubelet configuration and the
// pod preemption policy of a disabled alpha feature.
func (NodeStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	n := obj.(*corev1.Node)
	n.Spec.ConfigSource = nil
	n.Status.Config = nil
	n.Spec.PodPreemptionPolicy = nil
}

// PrepareForUpdate keeps the status, which changes through nodes/status,
// and drops the fields above unless the node already had them.
func (NodeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	n, oldNode := obj.(*corev1.Node), old.(*corev1.Node)
	n.Status = oldNode.Status
	if oldNode.Spec.ConfigSource == nil {
		n.Spec.ConfigSource = nil
	}
	if oldNode.Spec.PodPreemptionPolicy == nil {
		n.Spec.PodPreemptionPolicy = nil
	}
}

// Validate validates a new node.
func (NodeStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateNode(obj.(*corev1.Node))
}

// ValidateUpdate validates an update of a node.
func (NodeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	n, oldNode := obj.(*corev1.Node), old.(*corev1.Node)
	return append(ValidateNode(n), validateNodeSpecUpdate(n, oldNode)...)
}

// WarningsOnCreate warns of deprecated fields and of pod CIDRs written in
// ambiguous forms.
func (NodeStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return nodeWarnings(obj.(*corev1.Node))
}

// WarningsOnUpdate is WarningsOnCreate.
func (NodeStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return nodeWarnings(obj.(*corev1.Node))
}

func nodeWarnings(n *corev1.Node) []string {
	var out []string
	if n.Spec.ConfigSource != nil {
		out = append(out, "spec.configSource: the feature is removed")
	}
	if n.Spec.DoNotUseExternalID != "" {
		out = append(out, "spec.externalID: this field is deprecated, and is unused by Kubernetes")
	}
	path := field.NewPath("spec", "podCIDRs")
	for i, cidr := range n.Spec.PodCIDRs {
		out = append(out, validation.GetWarningsForCIDR(path.Index(i), cidr)...)
	}
	return out
}

// Fields returns spec.unschedulable, the node field selector beyond
// metadata.name.
func (NodeStrategy) Fields(obj runtime.Object) fields.Set {
	return fields.Set{"spec.unschedulable": strconv.FormatBool(obj.(*corev1.Node).Spec.Unschedulable)}
}

// NodeStatusStrategy is the strategy of nodes/status: an update changes the
// status only.
type NodeStatusStrategy struct{ NodeStrategy }

// PrepareForUpdate keeps the spec of old, and drops the fields of disabled
// features the node did not have.
func (NodeStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	n, oldNode := obj.(*corev1.Node), old.(*corev1.Node)
	n.Spec = oldNode.Spec
	if oldNode.Status.Config == nil {
		n.Status.Config = nil
	}
	if oldNode.Status.NodeInfo.RunningInUserNamespace == nil {
		n.Status.NodeInfo.RunningInUserNamespace = nil
	}
}

// ValidateUpdate validates a status update.
func (NodeStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateNodeUpdate(obj.(*corev1.Node), old.(*corev1.Node))
}

// WarningsOnUpdate has nothing to say of a status.
func (NodeStatusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
