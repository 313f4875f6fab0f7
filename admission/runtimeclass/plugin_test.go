package runtimeclass

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
)

var (
	overhead   = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	tolerateRC = corev1.Toleration{Key: "sandbox", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
)

// classes: "plain" has nothing, "heavy" an overhead, "placed" a node
// selector and a toleration; "broken" cannot be read and any other is
// not found.
func classes(_ context.Context, name string) (*nodev1.RuntimeClass, error) {
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: name}
	switch name {
	case "plain":
	case "heavy":
		rc.Overhead = &nodev1.Overhead{PodFixed: overhead.DeepCopy()}
	case "placed":
		rc.Scheduling = &nodev1.Scheduling{NodeSelector: map[string]string{"sandbox": "yes"}, Tolerations: []corev1.Toleration{tolerateRC}}
	case "broken":
		return nil, errors.New("etcd is down")
	default:
		return nil, apierrors.NewNotFound(nodev1.Resource("runtimeclasses"), name)
	}
	return rc, nil
}

func pod(class string, mutate ...func(*corev1.PodSpec)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	if class != "" {
		p.Spec.RuntimeClassName = &class
	}
	for _, m := range mutate {
		m(&p.Spec)
	}
	return p
}

func withOverhead(l corev1.ResourceList) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) { s.Overhead = l }
}

func withSelector(sel map[string]string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) { s.NodeSelector = sel }
}

func create(sub string, obj runtime.Object) *admission.Attributes {
	return &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
		Subresource: sub, Namespace: "ns", Name: "p", Object: obj}
}

const (
	mismatch = `pods "p" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`
	alone    = `pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`
)

// TestAdmit: the overhead, node selector and tolerations a pod gets from
// its class, or the refusal.
func TestAdmit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		want    corev1.PodSpec
		code    int32
		message string
	}{
		{name: "no class", pod: pod(""), want: pod("").Spec},
		{name: "a class with nothing", pod: pod("plain"), want: pod("plain").Spec},
		{name: "overhead set", pod: pod("heavy"), want: pod("heavy", withOverhead(overhead)).Spec},
		{name: "same overhead kept", pod: pod("heavy", withOverhead(overhead)), want: pod("heavy", withOverhead(overhead)).Spec},
		{name: "other overhead", pod: pod("heavy", withOverhead(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")})),
			code: http.StatusForbidden, message: mismatch},
		{name: "selector and toleration set", pod: pod("placed"),
			want: pod("placed", withSelector(map[string]string{"sandbox": "yes"}), func(s *corev1.PodSpec) { s.Tolerations = []corev1.Toleration{tolerateRC} }).Spec},
		{name: "selectors merged", pod: pod("placed", withSelector(map[string]string{"disk": "ssd"})),
			want: pod("placed", withSelector(map[string]string{"disk": "ssd", "sandbox": "yes"}), func(s *corev1.PodSpec) { s.Tolerations = []corev1.Toleration{tolerateRC} }).Spec},
		{name: "selector conflict", pod: pod("placed", withSelector(map[string]string{"sandbox": "no"})),
			code: http.StatusForbidden, message: `pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = yes; pod.spec.nodeSelector[sandbox] = no`},
		{name: "missing class", pod: pod("gone"), code: http.StatusForbidden, message: `pods "p" is forbidden: pod rejected: RuntimeClass "gone" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := New(classes).Admit(context.Background(), create("", tc.pod))
			if tc.code != 0 {
				var status apierrors.APIStatus
				if !errors.As(err, &status) || status.Status().Code != tc.code || err.Error() != tc.message {
					t.Errorf("Admit = %v, want %d %q", err, tc.code, tc.message)
				}
				return
			}
			if err != nil {
				t.Fatalf("Admit = %v", err)
			}
			if !reflect.DeepEqual(tc.pod.Spec, tc.want) {
				t.Errorf("spec %+v\nwant %+v", tc.pod.Spec, tc.want)
			}
		})
	}
	if err := New(classes).Admit(context.Background(), create("", pod("broken"))); err == nil || err.Error() != "etcd is down" {
		t.Errorf("an unreadable class: %v, want the read's error", err)
	}
}

// TestValidate: a pod's overhead must be its class's, and none without
// one.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string // "": admitted
	}{
		{"no class, no overhead", pod(""), ""},
		{"class overhead", pod("heavy", withOverhead(overhead)), ""},
		{"class overhead missing", pod("heavy"), mismatch},
		{"no class, an overhead", pod("", withOverhead(overhead)), alone},
		{"a class without overhead, an overhead", pod("plain", withOverhead(overhead)), alone},
		{"missing class", pod("gone"), `pods "p" is forbidden: pod rejected: RuntimeClass "gone" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := New(classes).Validate(context.Background(), create("", tc.pod))
			if tc.want == "" {
				if err != nil {
					t.Errorf("Validate = %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.Error() != tc.want {
				t.Errorf("Validate = %v, want 403 %q", err, tc.want)
			}
		})
	}
}

// TestIgnored: subresources and other resources are left alone; an
// object that is not a pod is kube's 400.
func TestIgnored(t *testing.T) {
	p := New(classes)
	status := create("status", pod("gone"))
	templates := create("", pod("gone"))
	templates.Resource.Resource = "podtemplates"
	for name, a := range map[string]*admission.Attributes{"status": status, "podtemplates": templates} {
		if err := p.Admit(context.Background(), a); err != nil {
			t.Errorf("%s: Admit = %v", name, err)
		}
		if err := p.Validate(context.Background(), a); err != nil {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
	err := p.Admit(context.Background(), create("", &corev1.Service{}))
	if !apierrors.IsBadRequest(err) || err.Error() != "Resource was marked with kind Pod but was unable to be converted" {
		t.Errorf("not a pod: %v", err)
	}
	if !p.Handles(admission.Create) || p.Handles(admission.Update) || p.Handles(admission.Delete) || p.Handles(admission.Connect) {
		t.Error("Handles: want creates only")
	}
}
