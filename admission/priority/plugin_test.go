package priority

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/admission"
)

func TestOnlyOneGlobalDefault(t *testing.T) {
	existing := []schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Value: 1},
		{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Value: 10, GlobalDefault: true},
	}
	p := New(func(context.Context) ([]schedulingv1.PriorityClass, error) { return existing, nil })
	attrs := func(op admission.Operation, name string, def bool) *admission.Attributes {
		return &admission.Attributes{Operation: op, Name: name,
			Resource: schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"),
			Object:   &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, GlobalDefault: def}}
	}
	tests := []struct {
		name      string
		a         *admission.Attributes
		forbidden bool
	}{
		{"create non-default", attrs(admission.Create, "x", false), false},
		{"create second default", attrs(admission.Create, "x", true), true},
		{"make another the default", attrs(admission.Update, "low", true), true},
		{"update the default", attrs(admission.Update, "default", true), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.Validate(context.Background(), tt.a)
			if apierrors.IsForbidden(err) != tt.forbidden || (!tt.forbidden && err != nil) {
				t.Errorf("Validate = %v, forbidden want %v", err, tt.forbidden)
			}
		})
	}
	if !p.Handles(admission.Create) || p.Handles(admission.Delete) {
		t.Error("Handles")
	}
}

func TestPodPriority(t *testing.T) {
	never := corev1.PreemptNever
	classes := []schedulingv1.PriorityClass{{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000, PreemptionPolicy: &never}}
	p := New(func(context.Context) ([]schedulingv1.PriorityClass, error) { return classes, nil })
	create := func(pod *corev1.Pod) error {
		return p.Admit(context.Background(), &admission.Attributes{Operation: admission.Create,
			Resource: corev1.SchemeGroupVersion.WithResource("pods"), Object: pod})
	}
	pod := &corev1.Pod{}
	if err := create(pod); err != nil || *pod.Spec.Priority != 0 || *pod.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Fatalf("no class: %v %+v", err, pod.Spec)
	}
	pod = &corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "high"}}
	if err := create(pod); err != nil || *pod.Spec.Priority != 1000 || *pod.Spec.PreemptionPolicy != never {
		t.Fatalf("class high: %v %+v", err, pod.Spec)
	}
	pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "web-"}, Spec: corev1.PodSpec{PriorityClassName: "missing"}}
	if err := create(pod); !apierrors.IsForbidden(err) || err.Error() != `pods "web-" is forbidden: no PriorityClass with name missing was found` {
		t.Fatalf("missing class: %v", err)
	}
	pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{PriorityClassName: "high", Priority: ptr.To[int32](5)}}
	if err := create(pod); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000") {
		t.Fatalf("explicit priority: %v", err)
	}

	classes = append(classes, schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Value: 7, GlobalDefault: true})
	pod = &corev1.Pod{}
	if err := create(pod); err != nil || *pod.Spec.Priority != 7 || pod.Spec.PriorityClassName != "default" || pod.Spec.PreemptionPolicy != nil {
		t.Fatalf("global default: %v %+v", err, pod.Spec)
	}

	// An update that leaves them out keeps the values the pod was created with.
	old := &corev1.Pod{Spec: corev1.PodSpec{Priority: ptr.To[int32](7), PreemptionPolicy: &never}}
	pod = &corev1.Pod{}
	if err := p.Admit(context.Background(), &admission.Attributes{Operation: admission.Update,
		Resource: corev1.SchemeGroupVersion.WithResource("pods"), Object: pod, OldObject: old}); err != nil || *pod.Spec.Priority != 7 || *pod.Spec.PreemptionPolicy != never {
		t.Fatalf("update: %v %+v", err, pod.Spec)
	}
}
