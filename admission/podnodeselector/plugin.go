// Package podnodeselector is kube's PodNodeSelector plugin: a new pod gains
// its namespace's node selector (the scheduler.alpha.kubernetes.io/node-selector
// annotation, or the configuration's clusterDefaultNodeSelector), must not
// conflict with it, and must stay within the configuration's per-namespace
// whitelist.
package podnodeselector

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/admission"
)

// Annotation is the namespace annotation holding its node selector.
const Annotation = "scheduler.alpha.kubernetes.io/node-selector"

// clusterDefault is the configuration key of the default node selector.
const clusterDefault = "clusterDefaultNodeSelector"

// NamespaceGetter reads a namespace by name.
type NamespaceGetter func(ctx context.Context, name string) (*corev1.Namespace, error)

// Plugin is the PodNodeSelector plugin.
type Plugin struct {
	namespaces NamespaceGetter
	// selectors maps a namespace to the selector its pods must stay within;
	// clusterDefault to the default selector.
	selectors map[string]string
}

// config is the plugin's file: {podNodeSelectorPluginConfig: {...}}.
type config struct {
	PodNodeSelectorPluginConfig map[string]string `json:"podNodeSelectorPluginConfig"`
}

// New returns the plugin configured by data (nil: no defaults, no whitelists).
func New(data []byte, namespaces NamespaceGetter) (*Plugin, error) {
	var c config
	if len(data) > 0 {
		if err := yaml.Unmarshal(data, &c); err != nil {
			return nil, fmt.Errorf("reading PodNodeSelector configuration: %w", err)
		}
	}
	for ns, sel := range c.PodNodeSelectorPluginConfig {
		if _, err := labels.ConvertSelectorToLabelsMap(sel); err != nil {
			return nil, fmt.Errorf("PodNodeSelector configuration of %q: %w", ns, err)
		}
	}
	return &Plugin{namespaces: namespaces, selectors: c.PodNodeSelectorPluginConfig}, nil
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles creates.
func (*Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit merges the namespace's selector into the pod's, then validates.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	nsSelector, err := p.agreeing(ctx, a, pod)
	if err != nil {
		return err
	}
	pod.Spec.NodeSelector = labels.Merge(nsSelector, pod.Spec.NodeSelector)
	return p.Validate(ctx, a)
}

// Validate refuses a pod whose selector conflicts with its namespace's or
// leaves the namespace's whitelist.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	if _, err := p.agreeing(ctx, a, pod); err != nil {
		return err
	}
	whitelist, err := labels.ConvertSelectorToLabelsMap(p.selectors[a.Namespace])
	if err != nil {
		return err
	}
	if !within(pod.Spec.NodeSelector, whitelist) {
		return apierrors.NewForbidden(a.Resource.GroupResource(), pod.Name, fmt.Errorf("pod node label selector labels conflict with its namespace whitelist"))
	}
	return nil
}

// agreeing returns the namespace's node selector, refusing a pod whose own
// selector conflicts with it.
func (p *Plugin) agreeing(ctx context.Context, a *admission.Attributes, pod *corev1.Pod) (labels.Set, error) {
	nsSelector, err := p.namespaceSelector(ctx, a.Namespace)
	if err != nil {
		return nil, err
	}
	if labels.Conflicts(nsSelector, labels.Set(pod.Spec.NodeSelector)) {
		return nil, apierrors.NewForbidden(a.Resource.GroupResource(), pod.Name, fmt.Errorf("pod node label selector conflicts with its namespace node label selector"))
	}
	return nsSelector, nil
}

// podOf is the pod of a write to pods itself.
func podOf(a *admission.Attributes) (*corev1.Pod, bool) {
	if a.Resource.GroupResource().String() != "pods" || a.Subresource != "" {
		return nil, false
	}
	pod, ok := a.Object.(*corev1.Pod)
	return pod, ok
}

// namespaceSelector is the namespace's annotation, or the cluster default
// when it has none. A namespace that cannot be read is kube's 500 (its
// live read's error, whatever it was, says the namespace does not exist).
func (p *Plugin) namespaceSelector(ctx context.Context, name string) (labels.Set, error) {
	ns, err := p.namespaces(ctx, name)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("namespace %s does not exist", name))
	}
	if sel, ok := ns.Annotations[Annotation]; ok {
		return labels.ConvertSelectorToLabelsMap(sel)
	}
	return labels.ConvertSelectorToLabelsMap(p.selectors[clusterDefault])
}

// within reports whether every label of sub is in super; an empty super
// allows anything.
func within(sub, super labels.Set) bool {
	if len(super) == 0 {
		return true
	}
	for k, v := range sub {
		if w, ok := super[k]; !ok || w != v {
			return false
		}
	}
	return true
}
