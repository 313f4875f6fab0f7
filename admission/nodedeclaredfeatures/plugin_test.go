package nodedeclaredfeatures

import (
	"context"
	"errors"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
)

// The features kube's registry infers for the updates below.
const (
	podLevelResize = "InPlacePodLevelResourcesVerticalScaling"
	initResize     = "InPlacePodVerticalScalingInitContainers"
)

// nodes: "old" declares nothing, "podlevel" the pod-level resize feature;
// "broken" cannot be read and any other is not found. It counts reads.
func nodes(reads *int) NodeGetter {
	return func(_ context.Context, name string) (*corev1.Node, error) {
		*reads++
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		switch name {
		case "old":
		case "podlevel":
			n.Status.DeclaredFeatures = []string{podLevelResize}
		case "broken":
			return nil, errors.New("etcd is down")
		default:
			return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
		}
		return n, nil
	}
}

func cpu(q string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}}
}

// pod is bound to node at generation, with pod-level cpu podCPU (none
// when ""), a container and an init container asking for cpu.
func pod(node string, generation int64, podCPU, containerCPU, initCPU string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: generation}, Spec: corev1.PodSpec{NodeName: node,
		Containers:     []corev1.Container{{Name: "c", Resources: cpu(containerCPU)}},
		InitContainers: []corev1.Container{{Name: "i", Resources: cpu(initCPU)}}}}
	if podCPU != "" {
		r := cpu(podCPU)
		p.Spec.Resources = &r
	}
	return p
}

func update(sub string, obj, old runtime.Object) *admission.Attributes {
	return &admission.Attributes{Operation: admission.Update, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
		Subresource: sub, Namespace: "ns", Name: "p", Object: obj, OldObject: old}
}

// TestValidate: updates needing features a node lacks are refused with
// kube's messages; updates needing none read no node.
func TestValidate(t *testing.T) {
	plugin := func(reads *int) *Plugin {
		p, err := New(nodes(reads), "v1.37.2")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		a       *admission.Attributes
		reads   int
		code    int32 // 0: admitted
		message string
	}{
		{name: "container resize needs no feature", a: update("resize", pod("old", 2, "", "2", "1"), pod("old", 1, "", "1", "1"))},
		{name: "pod-level resize on a node without the feature", reads: 1, code: http.StatusForbidden,
			a:       update("resize", pod("old", 2, "2", "1", "1"), pod("old", 1, "1", "1", "1")),
			message: `pods "p" is forbidden: pod update requires features ` + podLevelResize + ` which are not available on node "old"`},
		{name: "pod-level resize on a node with the feature", reads: 1,
			a: update("resize", pod("podlevel", 2, "2", "1", "1"), pod("podlevel", 1, "1", "1", "1"))},
		{name: "pod-level resources added by an update", reads: 1, code: http.StatusForbidden,
			a:       update("", pod("old", 2, "1", "1", "1"), pod("old", 1, "", "1", "1")),
			message: `pods "p" is forbidden: pod update requires features ` + podLevelResize + ` which are not available on node "old"`},
		{name: "init container resize on a node with only the pod-level feature", reads: 1, code: http.StatusForbidden,
			a:       update("resize", pod("podlevel", 2, "2", "1", "2"), pod("podlevel", 1, "1", "1", "1")),
			message: `pods "p" is forbidden: pod update requires features ` + initResize + ` which are not available on node "podlevel"`},
		{name: "both missing, in name order", reads: 1, code: http.StatusForbidden,
			a:       update("resize", pod("old", 2, "2", "1", "2"), pod("old", 1, "1", "1", "1")),
			message: `pods "p" is forbidden: pod update requires features ` + podLevelResize + `, ` + initResize + ` which are not available on node "old"`},
		{name: "node not found", reads: 1, code: http.StatusForbidden,
			a:       update("resize", pod("gone", 2, "2", "1", "1"), pod("gone", 1, "1", "1", "1")),
			message: `pods "p" is forbidden: node "gone" not found`},
		{name: "node unreadable", reads: 1, code: http.StatusForbidden,
			a:       update("resize", pod("broken", 2, "2", "1", "1"), pod("broken", 1, "1", "1", "1")),
			message: `pods "p" is forbidden: failed to get node "broken": etcd is down`},
		{name: "generation unchanged", a: update("resize", pod("old", 1, "2", "1", "1"), pod("old", 1, "1", "1", "1"))},
		{name: "unbound", a: update("resize", pod("", 2, "2", "1", "1"), pod("", 1, "1", "1", "1"))},
		{name: "status is not checked", a: update("status", pod("old", 2, "2", "1", "1"), pod("old", 1, "1", "1", "1"))},
		{name: "other resources are not checked", a: func() *admission.Attributes {
			a := update("", pod("old", 2, "2", "1", "1"), pod("old", 1, "1", "1", "1"))
			a.Resource.Resource = "podtemplates"
			return a
		}()},
		// kube names its internal type, *core.Node.
		{name: "not a pod", a: update("", &corev1.Node{}, pod("old", 1, "1", "1", "1")),
			code: http.StatusBadRequest, message: "expected a pod but got a *v1.Node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reads := 0
			err := plugin(&reads).Validate(context.Background(), tc.a)
			if tc.code == 0 {
				if err != nil {
					t.Errorf("Validate = %v, want admitted", err)
				}
			} else {
				var status apierrors.APIStatus
				if !errors.As(err, &status) || status.Status().Code != tc.code || status.Status().Message != tc.message {
					t.Errorf("Validate = %v\nwant %d %s", err, tc.code, tc.message)
				}
			}
			if reads != tc.reads {
				t.Errorf("nodes read %d times, want %d", reads, tc.reads)
			}
		})
	}
}

// TestNew: the server's version must parse; the plugin handles updates.
func TestNew(t *testing.T) {
	if _, err := New(nil, "one"); err == nil || err.Error() != `failed to parse version: could not parse "one" as version` {
		t.Errorf("New(one) = %v", err)
	}
	p, err := New(nil, "v1.37.2")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Handles(admission.Update) || p.Handles(admission.Create) || p.Handles(admission.Delete) || p.Handles(admission.Connect) {
		t.Error("Handles: want updates only")
	}
}
