// Package nodedeclaredfeatures is kube's NodeDeclaredFeatureValidator
// plugin: an update of a bound pod that needs a node feature (an in-place
// resize of pod-level resources, of a non-sidecar init container, ...) is
// refused unless the pod's node lists that feature in
// status.declaredFeatures. kube runs it by default (its NodeDeclaredFeatures
// gate is on and locked in 1.37). Which update needs which feature is
// k8s.io/component-helpers/nodedeclaredfeatures' registry, the library
// kube's plugin and the kubelet share, so that capstan infers exactly what
// kubelets declare.
//
// kube's plugin also checks ResourceSlices' node-allocatable devices, but
// only under the DRANodeAllocatableResources gate, alpha and off; capstan
// does not.
package nodedeclaredfeatures

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/internal/boundpod"
)

// NodeGetter reads a node by name.
type NodeGetter = boundpod.NodeGetter

// Plugin is the NodeDeclaredFeatureValidator plugin.
type Plugin struct {
	nodes     NodeGetter
	framework *ndf.Framework
	version   *version.Version
}

// New returns the plugin reading nodes, for a server of the given version
// (kube's binary version, "v1.37.2"): features past their MaxVersion are
// no longer required.
func New(nodes NodeGetter, serverVersion string) (*Plugin, error) {
	v, err := version.Parse(serverVersion)
	if err != nil {
		return nil, fmt.Errorf("failed to parse version: %w", err)
	}
	return &Plugin{nodes: nodes, framework: ndf.DefaultFramework, version: v}, nil
}

var (
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles updates (kube's also handles creates, for ResourceSlices).
func (*Plugin) Handles(op admission.Operation) bool { return op == admission.Update }

// Validate checks an update of a bound pod, or its resize, whose spec
// changed (its generation moved).
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.GroupResource().String() != "pods" || (a.Subresource != "" && a.Subresource != "resize") {
		return nil
	}
	pod, old, err := boundpod.SpecChanged(a)
	if pod == nil {
		return err
	}
	reqs, err := p.framework.InferForPodUpdate(&ndf.PodInfo{Spec: &old.Spec, Status: &old.Status}, &ndf.PodInfo{Spec: &pod.Spec, Status: &pod.Status}, p.version)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to infer pod capability requirements: %w", err))
	}
	if reqs.IsEmpty() {
		return nil
	}
	node, err := boundpod.Node(ctx, p.nodes, a, pod.Spec.NodeName)
	if err != nil {
		return err
	}
	result, err := p.framework.MatchNode(reqs, node)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to match pod requirements against node %q: %w", node.Name, err))
	}
	if !result.IsMatch {
		return admission.NewForbidden(a, fmt.Errorf("pod update requires features %s which are not available on node %q", strings.Join(result.UnsatisfiedRequirements, ", "), node.Name))
	}
	return nil
}
