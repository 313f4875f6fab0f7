// Package alwayspullimages is kube's AlwaysPullImages plugin: every
// container (and image volume) of a pod pulls its image always, so that a
// pod cannot use an image another pod's credentials pulled onto the node.
package alwayspullimages

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/admission"
)

// Plugin sets and checks the pull policies.
type Plugin struct{}

var (
	_ admission.Mutator   = Plugin{}
	_ admission.Validator = Plugin{}
	_ admission.Handles   = Plugin{}
)

// Handles creates and updates.
func (Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

var errNotPod = apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")

// container is one container of a pod with its field path.
type container struct {
	c    *corev1.Container
	path *field.Path
}

// containers are pod's containers in kube's visiting order: init, regular,
// then ephemeral ones (as far as a container: their common fields).
func containers(pod *corev1.Pod) []container {
	var out []container
	spec := field.NewPath("spec")
	for i := range pod.Spec.InitContainers {
		out = append(out, container{&pod.Spec.InitContainers[i], spec.Child("initContainers").Index(i)})
	}
	for i := range pod.Spec.Containers {
		out = append(out, container{&pod.Spec.Containers[i], spec.Child("containers").Index(i)})
	}
	for i := range pod.Spec.EphemeralContainers {
		c := (*corev1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		out = append(out, container{c, spec.Child("ephemeralContainers").Index(i)})
	}
	return out
}

// Admit makes every pull policy Always.
func (Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	pod, err := podOf(a)
	if pod == nil {
		return err
	}
	for _, c := range containers(pod) {
		c.c.ImagePullPolicy = corev1.PullAlways
	}
	for i := range pod.Spec.Volumes {
		if v := pod.Spec.Volumes[i].Image; v != nil {
			v.PullPolicy = corev1.PullAlways
		}
	}
	return nil
}

// Validate refuses any other pull policy (one a later mutating plugin set).
func (Plugin) Validate(_ context.Context, a *admission.Attributes) error {
	pod, err := podOf(a)
	if pod == nil {
		return err
	}
	var errs []error
	always := []string{string(corev1.PullAlways)}
	for _, c := range containers(pod) {
		if c.c.ImagePullPolicy != corev1.PullAlways {
			errs = append(errs, admission.NewForbidden(a, field.NotSupported(c.path.Child("imagePullPolicy"), c.c.ImagePullPolicy, always)))
		}
	}
	for i, v := range pod.Spec.Volumes {
		if v.Image != nil && v.Image.PullPolicy != corev1.PullAlways {
			p := field.NewPath("spec").Child("volumes").Index(i).Child("image").Child("pullPolicy")
			errs = append(errs, admission.NewForbidden(a, field.NotSupported(p, v.Image.PullPolicy, always)))
		}
	}
	// kube answers the aggregate as it is (a 500 naming each container).
	return utilerrors.NewAggregate(errs)
}

// podOf is the pod of a write the plugin looks at: not subresources, not
// updates that bring no new image.
func podOf(a *admission.Attributes) (*corev1.Pod, error) {
	if a.Subresource != "" || a.Resource.Group != "" || a.Resource.Resource != "pods" {
		return nil, nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil, errNotPod
	}
	if a.Operation == admission.Update {
		if old, ok := a.OldObject.(*corev1.Pod); ok && !newImages(pod, old) {
			return nil, nil
		}
	}
	return pod, nil
}

func newImages(pod, old *corev1.Pod) bool {
	images := map[string]bool{}
	for _, c := range containers(old) {
		images[c.c.Image] = true
	}
	for _, c := range containers(pod) {
		if !images[c.c.Image] {
			return true
		}
	}
	return false
}
