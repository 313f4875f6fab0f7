// Package podtopologylabels is kube's PodTopologyLabels plugin: a pod
// bound to a node (by a Binding, or created with spec.nodeName) gains the
// node's zone and region labels, so that workloads can read their topology
// through the downward API.
package podtopologylabels

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/admission"
)

// NodeGetter reads a node by name.
type NodeGetter func(ctx context.Context, name string) (*corev1.Node, error)

// copied are the node labels a pod gains, kube's default.
var copied = []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion}

// Plugin is the PodTopologyLabels plugin.
type Plugin struct {
	nodes NodeGetter
}

// New returns the plugin reading nodes.
func New(nodes NodeGetter) *Plugin { return &Plugin{nodes: nodes} }

var (
	_ admission.Mutator = (*Plugin)(nil)
	_ admission.Handles = (*Plugin)(nil)
)

// Handles creates (of pods and of their bindings).
func (*Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit copies the node's topology labels onto the pod or its Binding
// (whose labels the binding writes onto the pod).
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.GroupResource().String() != "pods" {
		return nil
	}
	var node string
	var labels *map[string]string
	switch a.Subresource {
	case "":
		pod, ok := a.Object.(*corev1.Pod)
		if !ok {
			return fmt.Errorf("expected Pod but got %T", a.Object)
		}
		node, labels = pod.Spec.NodeName, &pod.Labels
	case "binding":
		b, ok := a.Object.(*corev1.Binding)
		if !ok {
			return fmt.Errorf("expected Binding but got %s", a.Kind.Kind)
		}
		if b.Target.Kind != "Node" {
			return nil
		}
		node, labels = b.Target.Name, &b.Labels
	default:
		return nil
	}
	if node == "" {
		return nil
	}
	return p.copyLabels(ctx, node, labels)
}

func (p *Plugin) copyLabels(ctx context.Context, name string, labels *map[string]string) error {
	node, err := p.nodes(ctx, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range copied {
		v, ok := node.Labels[k]
		if !ok {
			continue
		}
		if *labels == nil {
			*labels = map[string]string{}
		}
		(*labels)[k] = v
	}
	return nil
}
