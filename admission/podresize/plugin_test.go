package podresize

import (
	"context"
	"errors"
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

// nodes: "linux" (labelled) and "unlabelled" have 1 cpu and 1Gi, "windows"
// is a Windows node; any other is not found.
func nodes(_ context.Context, name string) (*corev1.Node, error) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	switch name {
	case "linux":
		n.Labels = map[string]string{corev1.LabelOSStable: "linux"}
	case "windows":
		n.Labels = map[string]string{corev1.LabelOSStable: "windows"}
	case "unlabelled":
	default:
		return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
	}
	return n, nil
}

func pod(node string, generation int64, cpu, memory string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: generation}, Spec: corev1.PodSpec{NodeName: node,
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}}}}}}
}

func resize(obj, old runtime.Object) *admission.Attributes {
	return &admission.Attributes{Operation: admission.Update, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
		Subresource: "resize", Namespace: "ns", Name: "p", Object: obj, OldObject: old}
}

// TestValidate: resizes refused, with kube's messages and causes.
func TestValidate(t *testing.T) {
	withOverhead := pod("linux", 2, "900m", "128Mi")
	withOverhead.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}
	for _, tc := range []struct {
		name    string
		a       *admission.Attributes
		code    int32 // 0: admitted
		message string
		cause   metav1.CauseType
	}{
		{name: "fits", a: resize(pod("linux", 2, "1", "1Gi"), pod("linux", 1, "500m", "1Gi"))},
		{name: "fits a node without an OS label", a: resize(pod("unlabelled", 2, "1", "1Gi"), pod("unlabelled", 1, "500m", "1Gi"))},
		{name: "cpu over allocatable", a: resize(pod("linux", 2, "2", "1Gi"), pod("linux", 1, "500m", "1Gi")),
			code: http.StatusForbidden, cause: ReasonNodeCapacity,
			message: `pods "p" is forbidden: node didn't have enough allocatable resources: cpu, requested: 2000, allocatable: 1000`},
		{name: "cpu and memory over allocatable", a: resize(pod("linux", 2, "1500m", "2Gi"), pod("linux", 1, "500m", "1Gi")),
			code: http.StatusForbidden, cause: ReasonNodeCapacity,
			message: `pods "p" is forbidden: node didn't have enough allocatable resources: cpu, requested: 1500, allocatable: 1000; memory, requested: 2147483648, allocatable: 1073741824`},
		{name: "overhead counts", a: resize(withOverhead, pod("linux", 1, "500m", "128Mi")),
			code: http.StatusForbidden, cause: ReasonNodeCapacity,
			message: `pods "p" is forbidden: node didn't have enough allocatable resources: cpu, requested: 1100, allocatable: 1000`},
		{name: "windows node", a: resize(pod("windows", 2, "100m", "1Mi"), pod("windows", 1, "200m", "1Mi")),
			code: http.StatusForbidden, cause: ReasonUnsupportedPlatform,
			message: `pods "p" is forbidden: pod resize is only supported on linux nodes, node "windows" is "windows"`},
		{name: "node not found", a: resize(pod("gone", 2, "1", "1Gi"), pod("gone", 1, "500m", "1Gi")),
			code: http.StatusForbidden, message: `pods "p" is forbidden: node "gone" not found`},
		{name: "generation unchanged", a: resize(pod("linux", 1, "8", "1Gi"), pod("linux", 1, "500m", "1Gi"))},
		{name: "unbound pod", a: resize(pod("", 2, "8", "1Gi"), pod("", 1, "500m", "1Gi"))},
		// kube names its internal type, *core.Node.
		{name: "not a pod", a: resize(&corev1.Node{}, pod("linux", 1, "500m", "1Gi")),
			code: http.StatusBadRequest, message: "expected a pod but got a *v1.Node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := New(nodes).Validate(context.Background(), tc.a)
			if tc.code == 0 {
				if err != nil {
					t.Errorf("Validate = %v, want admitted", err)
				}
				return
			}
			var status *apierrors.StatusError
			if !errors.As(err, &status) || status.ErrStatus.Code != tc.code || status.ErrStatus.Message != tc.message {
				t.Fatalf("Validate = %v, want %d %q", err, tc.code, tc.message)
			}
			var causes []metav1.StatusCause
			if tc.cause != "" {
				causes = []metav1.StatusCause{{Type: tc.cause}}
			}
			if d := status.ErrStatus.Details; tc.code == http.StatusForbidden && (d == nil || !reflect.DeepEqual(d.Causes, causes)) {
				t.Errorf("details %+v, want causes %+v", d, causes)
			}
		})
	}
}

// TestIgnored: only the resize subresource of pods, on update, is checked.
func TestIgnored(t *testing.T) {
	tooBig := func(sub string) *admission.Attributes {
		a := resize(pod("linux", 2, "8", "1Gi"), pod("linux", 1, "500m", "1Gi"))
		a.Subresource = sub
		return a
	}
	templates := tooBig("resize")
	templates.Resource.Resource = "podtemplates"
	for name, a := range map[string]*admission.Attributes{"update": tooBig(""), "status": tooBig("status"), "podtemplates": templates} {
		if err := New(nodes).Validate(context.Background(), a); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	p := New(nodes)
	if !p.Handles(admission.Update) || p.Handles(admission.Create) || p.Handles(admission.Delete) || p.Handles(admission.Connect) {
		t.Error("Handles: want updates only")
	}
}
