package extendedresourcetoleration

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
)

func requests(names ...string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}}
	for _, n := range names {
		r.Requests[corev1.ResourceName(n)] = resource.MustParse("1")
	}
	return r
}

func tolerate(key string) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
}

func attrs(op admission.Operation, sub string, obj runtime.Object) *admission.Attributes {
	return &admission.Attributes{Operation: op, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Subresource: sub, Name: "p", Object: obj}
}

// TestAdmit: the tolerations a pod ends with.
func TestAdmit(t *testing.T) {
	keepSeconds := corev1.Toleration{Key: "example.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	equalGPU := corev1.Toleration{Key: "example.com/gpu", Operator: corev1.TolerationOpEqual, Value: "a", Effect: corev1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name        string
		containers  []corev1.Container
		inits       []corev1.Container
		tolerations []corev1.Toleration
		want        []corev1.Toleration
	}{
		{name: "no extended resources",
			containers: []corev1.Container{{Name: "c", Resources: requests("cpu", "memory", "hugepages-2Mi", "kubernetes.io/foo")}}},
		{name: "one per resource, sorted, init containers too",
			containers: []corev1.Container{{Name: "c", Resources: requests("example.com/gpu", "cpu")}, {Name: "d", Resources: requests("example.com/gpu")}},
			inits:      []corev1.Container{{Name: "i", Resources: requests("example.com/fpga")}},
			want:       []corev1.Toleration{tolerate("example.com/fpga"), tolerate("example.com/gpu")}},
		{name: "after the pod's own",
			containers:  []corev1.Container{{Name: "c", Resources: requests("example.com/gpu")}},
			tolerations: []corev1.Toleration{tolerate("other")},
			want:        []corev1.Toleration{tolerate("other"), tolerate("example.com/gpu")}},
		{name: "a toleration the pod has already",
			containers:  []corev1.Container{{Name: "c", Resources: requests("example.com/gpu")}},
			tolerations: []corev1.Toleration{tolerate("example.com/gpu")},
			want:        []corev1.Toleration{tolerate("example.com/gpu")}},
		{name: "tolerations of the same key but another effect or operator stay",
			containers:  []corev1.Container{{Name: "c", Resources: requests("example.com/gpu")}},
			tolerations: []corev1.Toleration{keepSeconds, equalGPU},
			want:        []corev1.Toleration{keepSeconds, equalGPU, tolerate("example.com/gpu")}},
		{name: "limits alone ask for nothing",
			containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
				Spec: corev1.PodSpec{Containers: tc.containers, InitContainers: tc.inits, Tolerations: tc.tolerations}}
			if err := (Plugin{}).Admit(context.Background(), attrs(admission.Create, "", pod)); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(pod.Spec.Tolerations, tc.want) {
				t.Errorf("tolerations %+v, want %+v", pod.Spec.Tolerations, tc.want)
			}
		})
	}
}

// TestIgnored: subresources and other resources are left alone; an object
// that is not a pod is kube's 400.
func TestIgnored(t *testing.T) {
	gpuPod := func() *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: requests("example.com/gpu")}}}}
	}
	status := attrs(admission.Update, "status", gpuPod())
	templates := attrs(admission.Create, "", gpuPod())
	templates.Resource.Resource = "podtemplates"
	for name, a := range map[string]*admission.Attributes{"status": status, "other resource": templates} {
		if err := (Plugin{}).Admit(context.Background(), a); err != nil || a.Object.(*corev1.Pod).Spec.Tolerations != nil {
			t.Errorf("%s: %v, tolerations %v", name, err, a.Object.(*corev1.Pod).Spec.Tolerations)
		}
	}
	err := Plugin{}.Admit(context.Background(), attrs(admission.Create, "", &corev1.Service{}))
	if s, ok := err.(apierrors.APIStatus); !ok || s.Status().Code != http.StatusBadRequest || s.Status().Reason != metav1.StatusReasonBadRequest {
		t.Errorf("a Service as a pod: %v, want a 400", err)
	}
	if !(Plugin{}).Handles(admission.Create) || !(Plugin{}).Handles(admission.Update) || (Plugin{}).Handles(admission.Delete) || (Plugin{}).Handles(admission.Connect) {
		t.Error("Handles: want creates and updates")
	}
}

// TestExtended: kube's extended resource names.
func TestExtended(t *testing.T) {
	for name, want := range map[corev1.ResourceName]bool{
		"example.com/gpu":        true,
		"nvidia.com/gpu":         true,
		"cpu":                    false,
		"hugepages-2Mi":          false,
		"kubernetes.io/foo":      false,
		"foo.kubernetes.io/bar":  false,
		"requests.example.com/x": false,
		"example.com/a b":        false,
		"example.com/":           false,
	} {
		if got := extended(name); got != want {
			t.Errorf("extended(%q) = %t, want %t", name, got, want)
		}
	}
}
