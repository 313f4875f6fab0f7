// Package extendedresourcetoleration is kube's ExtendedResourceToleration
// plugin: a pod that asks for an extended resource (example.com/gpu)
// tolerates the NoSchedule taint of that name, which nodes offering it
// carry.
package extendedresourcetoleration

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/capstan-io/capstan/admission"
)

// Plugin is the ExtendedResourceToleration plugin.
type Plugin struct{}

var (
	_ admission.Mutator = Plugin{}
	_ admission.Handles = Plugin{}
)

// Handles creates and updates.
func (Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Admit adds a toleration per extended resource the containers request.
func (Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	if a.Subresource != "" || a.Resource.GroupResource().String() != "pods" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected *core.Pod but got %T", a.Object))
	}
	var names []string
	for _, c := range append(slices.Clone(pod.Spec.Containers), pod.Spec.InitContainers...) {
		for n := range c.Resources.Requests {
			if extended(n) && !slices.Contains(names, string(n)) {
				names = append(names, string(n))
			}
		}
	}
	slices.Sort(names)
	for _, n := range names {
		addOrUpdate(pod, corev1.Toleration{Key: n, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	return nil
}

// extended is kube's extended resource name: one with a domain outside
// kubernetes.io, which is a qualified name as requests.<name>.
func extended(n corev1.ResourceName) bool {
	s := string(n)
	if !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+s)) == 0
}

// addOrUpdate replaces the pod's toleration of the same key, operator,
// value and effect, or adds t, as kube's helper does.
func addOrUpdate(pod *corev1.Pod, t corev1.Toleration) {
	for i, old := range pod.Spec.Tolerations {
		if old.Key == t.Key && old.Operator == t.Operator && old.Value == t.Value && old.Effect == t.Effect {
			if !equality.Semantic.DeepEqual(old, t) {
				pod.Spec.Tolerations[i] = t
			}
			return
		}
	}
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, t)
}
