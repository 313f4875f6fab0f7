package podtopologylabels

import (
	"context"
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
)

// nodes: "zoned" has a zone and region (and other labels), "bare" none;
// "broken" cannot be read and any other is not found. It records what it
// is asked.
func nodes(asked *[]string) NodeGetter {
	return func(_ context.Context, name string) (*corev1.Node, error) {
		*asked = append(*asked, name)
		switch name {
		case "zoned":
			return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1", corev1.LabelHostname: "zoned",
				corev1.LabelFailureDomainBetaZone: "old-z1", "topology.kubernetes.io/rack": "r7"}}}, nil
		case "bare":
			return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
		case "broken":
			return nil, errors.New("etcd is down")
		}
		return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
	}
}

var topology = map[string]string{corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1"}

func pod(node string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: labels}, Spec: corev1.PodSpec{NodeName: node}}
}

func binding(kind, node string, labels map[string]string) *corev1.Binding {
	return &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: labels}, Target: corev1.ObjectReference{Kind: kind, Name: node}}
}

func attrs(sub string, obj runtime.Object) *admission.Attributes {
	a := &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
		Subresource: sub, Namespace: "ns", Name: "p", Object: obj, Kind: corev1.SchemeGroupVersion.WithKind("Pod")}
	if sub == "binding" {
		a.Kind.Kind = "Binding"
	}
	return a
}

func labelsOf(obj runtime.Object) map[string]string {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o.Labels
	case *corev1.Binding:
		return o.Labels
	}
	return nil
}

// TestAdmit: the labels a pod or its binding ends with, and the nodes
// read.
func TestAdmit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a      *admission.Attributes
		want   map[string]string
		asked  []string
		errMsg string
	}{
		{name: "pod created on a node", a: attrs("", pod("zoned", nil)), want: topology, asked: []string{"zoned"}},
		{name: "pod labels kept, topology overwritten", a: attrs("", pod("zoned", map[string]string{"app": "web", corev1.LabelTopologyZone: "mine"})),
			want: map[string]string{"app": "web", corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1"}, asked: []string{"zoned"}},
		{name: "node without topology", a: attrs("", pod("bare", nil)), asked: []string{"bare"}},
		{name: "node not found", a: attrs("", pod("gone", map[string]string{"app": "web"})), want: map[string]string{"app": "web"}, asked: []string{"gone"}},
		{name: "node unreadable", a: attrs("", pod("broken", nil)), asked: []string{"broken"}, errMsg: "etcd is down"},
		{name: "unbound pod", a: attrs("", pod("", nil))},
		{name: "binding to a node", a: attrs("binding", binding("Node", "zoned", nil)), want: topology, asked: []string{"zoned"}},
		{name: "binding to something else", a: attrs("binding", binding("Pod", "zoned", nil))},
		{name: "binding to no node", a: attrs("binding", binding("Node", "", nil))},
		{name: "status", a: attrs("status", pod("zoned", nil))},
		// kube names the object's Go type (its internal *core.Service), and
		// for a binding the request's kind.
		{name: "not a pod", a: attrs("", &corev1.Service{}), errMsg: "expected Pod but got *v1.Service"},
		{name: "not a binding", a: attrs("binding", pod("zoned", nil)), errMsg: "expected Binding but got Binding"},
		{name: "another resource", a: func() *admission.Attributes {
			a := attrs("", pod("zoned", nil))
			a.Resource.Resource = "podtemplates"
			return a
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			err := New(nodes(&asked)).Admit(context.Background(), tc.a)
			if tc.errMsg != "" {
				if _, status := err.(apierrors.APIStatus); err == nil || status || err.Error() != tc.errMsg {
					t.Errorf("Admit = %v, want the plain error %q", err, tc.errMsg)
				}
			} else if err != nil {
				t.Errorf("Admit = %v", err)
			}
			if got := labelsOf(tc.a.Object); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("labels %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(asked, tc.asked) {
				t.Errorf("nodes read %q, want %q", asked, tc.asked)
			}
		})
	}
}

func TestHandles(t *testing.T) {
	p := New(nil)
	if !p.Handles(admission.Create) || p.Handles(admission.Update) || p.Handles(admission.Delete) || p.Handles(admission.Connect) {
		t.Error("Handles: want creates only")
	}
}
