package podnodeselector

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
)

// config is a configuration with a cluster default and a whitelist for
// the namespace "limited".
var configData = []byte("podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=dev\n  limited: env=prod,tier=web\n")

// namespaces answers namespaces by name: "prod" selects env=prod, "empty"
// and "limited" have an empty selector annotation, "bad" one that does not
// parse, "plain" none; "broken" cannot be read and any other is not found.
func namespaces(_ context.Context, name string) (*corev1.Namespace, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	switch name {
	case "prod":
		ns.Annotations = map[string]string{Annotation: "env=prod"}
	case "empty", "limited":
		ns.Annotations = map[string]string{Annotation: ""}
	case "bad":
		ns.Annotations = map[string]string{Annotation: "env"}
	case "plain":
	case "broken":
		return nil, errors.New("etcd is down")
	default:
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	return ns, nil
}

func pod(selector map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{NodeSelector: selector}}
}

func create(ns string, obj runtime.Object) *admission.Attributes {
	return &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
		Namespace: ns, Name: "p", Object: obj}
}

// TestAdmit: the pod's selector after Admit, or the refusal, with kube's
// codes and messages.
func TestAdmit(t *testing.T) {
	p, err := New(configData, namespaces)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		ns       string
		selector map[string]string
		want     map[string]string
		code     int32 // 0: admitted
		message  string
	}{
		{name: "namespace selector merged", ns: "prod", selector: map[string]string{"disk": "ssd"},
			want: map[string]string{"env": "prod", "disk": "ssd"}},
		{name: "pod without selector gains the namespace's", ns: "prod",
			want: map[string]string{"env": "prod"}},
		{name: "same label agrees", ns: "prod", selector: map[string]string{"env": "prod"},
			want: map[string]string{"env": "prod"}},
		{name: "cluster default without the annotation", ns: "plain",
			want: map[string]string{"env": "dev"}},
		{name: "an empty annotation is no selector, not the default", ns: "empty", selector: map[string]string{"disk": "ssd"},
			want: map[string]string{"disk": "ssd"}},
		{name: "conflict with the namespace", ns: "prod", selector: map[string]string{"env": "test"}, code: http.StatusForbidden,
			message: `pods "p" is forbidden: pod node label selector conflicts with its namespace node label selector`},
		{name: "conflict with the cluster default", ns: "plain", selector: map[string]string{"env": "prod"}, code: http.StatusForbidden,
			message: `pods "p" is forbidden: pod node label selector conflicts with its namespace node label selector`},
		{name: "within the whitelist", ns: "limited", selector: map[string]string{"env": "prod"},
			want: map[string]string{"env": "prod"}},
		{name: "outside the whitelist", ns: "limited", selector: map[string]string{"env": "prod", "disk": "ssd"}, code: http.StatusForbidden,
			message: `pods "p" is forbidden: pod node label selector labels conflict with its namespace whitelist`},
		{name: "missing namespace", ns: "gone", code: http.StatusInternalServerError,
			message: "Internal error occurred: namespace gone does not exist"},
		{name: "unreadable namespace", ns: "broken", code: http.StatusInternalServerError,
			message: "Internal error occurred: namespace broken does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := pod(tc.selector)
			err := p.Admit(context.Background(), create(tc.ns, obj))
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("Admit = %v", err)
				}
				if !reflect.DeepEqual(obj.Spec.NodeSelector, tc.want) {
					t.Errorf("node selector %v, want %v", obj.Spec.NodeSelector, tc.want)
				}
				return
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) || status.Status().Code != tc.code || status.Status().Message != tc.message {
				t.Errorf("Admit = %v, want %d %q", err, tc.code, tc.message)
			}
		})
	}
}

// TestValidate: Validate refuses what Admit would, without merging.
func TestValidate(t *testing.T) {
	p, err := New(configData, namespaces)
	if err != nil {
		t.Fatal(err)
	}
	obj := pod(map[string]string{"disk": "ssd"})
	if err := p.Validate(context.Background(), create("prod", obj)); err != nil || !reflect.DeepEqual(obj.Spec.NodeSelector, map[string]string{"disk": "ssd"}) {
		t.Errorf("Validate = %v, selector %v: want admitted, unchanged", err, obj.Spec.NodeSelector)
	}
	err = p.Validate(context.Background(), create("limited", pod(map[string]string{"zone": "a"})))
	if !apierrors.IsForbidden(err) || err.Error() != `pods "p" is forbidden: pod node label selector labels conflict with its namespace whitelist` {
		t.Errorf("Validate outside the whitelist = %v", err)
	}
}

// TestIgnored: subresources, other resources and other objects are
// passed without reading the namespace; a selector that does not parse
// is the parser's error, as kube returns it.
func TestIgnored(t *testing.T) {
	p, err := New(configData, namespaces)
	if err != nil {
		t.Fatal(err)
	}
	status := create("gone", pod(nil))
	status.Subresource = "status"
	service := create("gone", &corev1.Service{})
	service.Resource.Resource = "services"
	for name, a := range map[string]*admission.Attributes{
		"status":    status,
		"service":   service,
		"not a pod": create("gone", &corev1.Service{}),
	} {
		if err := p.Admit(context.Background(), a); err != nil {
			t.Errorf("%s: Admit = %v", name, err)
		}
	}
	err = p.Admit(context.Background(), create("bad", pod(nil)))
	if err == nil || err.Error() != "invalid selector: [env]" {
		t.Errorf("unparsable annotation: %v", err)
	}
	if !p.Handles(admission.Create) || p.Handles(admission.Update) || p.Handles(admission.Delete) || p.Handles(admission.Connect) {
		t.Error("Handles: want creates only")
	}
}

// TestNew: no configuration is no default and no whitelist; a selector
// that does not parse is refused.
func TestNew(t *testing.T) {
	p, err := New(nil, namespaces)
	if err != nil {
		t.Fatal(err)
	}
	obj := pod(map[string]string{"a": "b"})
	if err := p.Admit(context.Background(), create("plain", obj)); err != nil || !reflect.DeepEqual(obj.Spec.NodeSelector, map[string]string{"a": "b"}) {
		t.Errorf("without configuration: %v, %v", err, obj.Spec.NodeSelector)
	}
	if _, err := New([]byte("podNodeSelectorPluginConfig:\n  ns: env\n"), namespaces); err == nil ||
		err.Error() != `PodNodeSelector configuration of "ns": invalid selector: [env]` {
		t.Errorf("unparsable whitelist: %v", err)
	}
	if _, err := New([]byte("podNodeSelectorPluginConfig: [\n"), namespaces); err == nil {
		t.Error("a configuration that is not YAML was accepted")
	}
}
