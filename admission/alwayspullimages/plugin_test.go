package alwayspullimages

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-io/capstan/admission"
)

func pod(image string, policy corev1.PullPolicy) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Image: "init:1", ImagePullPolicy: policy}},
		Containers:     []corev1.Container{{Name: "c", Image: image, ImagePullPolicy: policy}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "debug", Image: "debug:1", ImagePullPolicy: policy}}},
		Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "data:1", PullPolicy: policy}}}},
	}}
}

func attrs(op admission.Operation, obj, old *corev1.Pod) *admission.Attributes {
	a := &admission.Attributes{Operation: op, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Name: "p", Object: obj}
	if old != nil {
		a.OldObject = old
	}
	return a
}

// TestAdmit: every container and image volume pulls always; an update
// that brings no new image is left alone.
func TestAdmit(t *testing.T) {
	p := pod("app:1", corev1.PullIfNotPresent)
	if err := (Plugin{}).Admit(context.Background(), attrs(admission.Create, p, nil)); err != nil {
		t.Fatal(err)
	}
	if err := (Plugin{}).Validate(context.Background(), attrs(admission.Create, p, nil)); err != nil {
		t.Errorf("after Admit: %v", err)
	}
	old := pod("app:1", corev1.PullNever)
	same := pod("app:1", corev1.PullNever)
	if err := (Plugin{}).Admit(context.Background(), attrs(admission.Update, same, old)); err != nil ||
		same.Spec.Containers[0].ImagePullPolicy != corev1.PullNever {
		t.Errorf("an update with the same images: %v, %s", err, same.Spec.Containers[0].ImagePullPolicy)
	}
	newer := pod("app:2", corev1.PullNever)
	if err := (Plugin{}).Admit(context.Background(), attrs(admission.Update, newer, old)); err != nil ||
		newer.Spec.InitContainers[0].ImagePullPolicy != corev1.PullAlways {
		t.Errorf("an update with a new image: %v, %s", err, newer.Spec.InitContainers[0].ImagePullPolicy)
	}
}

// TestValidate: each policy other than Always is named with its path.
func TestValidate(t *testing.T) {
	err := Plugin{}.Validate(context.Background(), attrs(admission.Create, pod("app:1", corev1.PullNever), nil))
	if err == nil {
		t.Fatal("Never was accepted")
	}
	for _, path := range []string{"spec.initContainers[0].imagePullPolicy", "spec.containers[0].imagePullPolicy",
		"spec.ephemeralContainers[0].imagePullPolicy", "spec.volumes[0].image.pullPolicy"} {
		if !strings.Contains(err.Error(), path+`: Unsupported value: "Never": supported values: "Always"`) {
			t.Errorf("%v does not name %s", err, path)
		}
	}
	sub := attrs(admission.Create, pod("app:1", corev1.PullNever), nil)
	sub.Subresource = "status"
	if err := (Plugin{}).Validate(context.Background(), sub); err != nil {
		t.Errorf("a subresource: %v", err)
	}
}
