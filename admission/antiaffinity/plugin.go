// Package antiaffinity is kube's LimitPodHardAntiAffinityTopology plugin: a
// pod's required anti-affinity terms may spread it only across hosts
// (kubernetes.io/hostname), so that one pod cannot keep a whole zone to
// itself.
package antiaffinity

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/admission"
)

// Plugin is the LimitPodHardAntiAffinityTopology plugin.
type Plugin struct{}

var (
	_ admission.Validator = Plugin{}
	_ admission.Handles   = Plugin{}
)

// Handles creates and updates.
func (Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate refuses a required anti-affinity term of another topology key.
func (Plugin) Validate(_ context.Context, a *admission.Attributes) error {
	if a.Subresource != "" || a.Resource.GroupResource().String() != "pods" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.PodAntiAffinity == nil {
		return nil
	}
	for _, term := range pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if term.TopologyKey != corev1.LabelHostname {
			return apierrors.NewForbidden(a.Resource.GroupResource(), pod.Name,
				fmt.Errorf("affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey %v but only key %v is allowed", term.TopologyKey, corev1.LabelHostname))
		}
	}
	return nil
}
