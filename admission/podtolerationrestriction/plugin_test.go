package podtolerationrestriction

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

	"github.com/capstan-io/capstan/admission"
)

// configData defaults pods to tolerate "cfg" and whitelists "cfg" and
// node.kubernetes.io/memory-pressure for namespaces without a whitelist.
var configData = []byte(`apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1
kind: Configuration
default:
- key: cfg
  operator: Exists
whitelist:
- key: cfg
  operator: Exists
- key: node.kubernetes.io/memory-pressure
  operator: Exists
`)

var (
	tolerateA      = corev1.Toleration{Key: "a", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	tolerateB      = corev1.Toleration{Key: "b", Operator: corev1.TolerationOpExists}
	tolerateCfg    = corev1.Toleration{Key: "cfg", Operator: corev1.TolerationOpExists}
	memoryPressure = corev1.Toleration{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
)

// namespaces answers by name: the annotations of each namespace below;
// "broken" cannot be read and any other is not found.
func namespaces(_ context.Context, name string) (*corev1.Namespace, error) {
	annotations := map[string]map[string]string{
		"plain":    nil,
		"defaults": {DefaultAnnotation: `[{"key":"a","operator":"Exists","effect":"NoSchedule"}]`, WhitelistAnnotation: ""},
		"empty":    {DefaultAnnotation: "", WhitelistAnnotation: ""},
		"null":     {DefaultAnnotation: "null", WhitelistAnnotation: "null"},
		"allowA":   {WhitelistAnnotation: `[{"key":"a","operator":"Exists"}]`},
		"badJSON":  {DefaultAnnotation: "[", WhitelistAnnotation: "["},
	}
	if name == "broken" {
		return nil, errors.New("etcd is down")
	}
	a, ok := annotations[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: a}}, nil
}

// pod is a BestEffort pod, Burstable when burstable.
func pod(burstable bool, tolerations ...corev1.Toleration) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c"}}, Tolerations: tolerations}}
	if burstable {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	}
	return p
}

func attrs(op admission.Operation, ns string, p *corev1.Pod) *admission.Attributes {
	a := &admission.Attributes{Operation: op, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: ns, Name: "p", Object: p}
	if op == admission.Update {
		a.OldObject = pod(false)
	}
	return a
}

// TestAdmit: the tolerations a pod ends with, or the refusal.
func TestAdmit(t *testing.T) {
	p, err := New(configData, namespaces)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		op   admission.Operation
		ns   string
		pod  *corev1.Pod
		want []corev1.Toleration
		err  string // a plain error (the chain makes it kube's 500)
		code int32  // a Status error
	}{
		{name: "namespace defaults", op: admission.Create, ns: "defaults", pod: pod(false), want: []corev1.Toleration{tolerateA}},
		{name: "namespace defaults and memory pressure", op: admission.Create, ns: "defaults", pod: pod(true),
			want: []corev1.Toleration{tolerateA, memoryPressure}},
		{name: "defaults after the pod's own", op: admission.Create, ns: "defaults", pod: pod(false, tolerateB),
			want: []corev1.Toleration{tolerateB, tolerateA}},
		{name: "a default the pod has already", op: admission.Create, ns: "defaults", pod: pod(false, tolerateA),
			want: []corev1.Toleration{tolerateA}},
		{name: "configuration's default without the annotation", op: admission.Create, ns: "plain", pod: pod(false),
			want: []corev1.Toleration{tolerateCfg}},
		{name: "an empty annotation is no default", op: admission.Create, ns: "empty", pod: pod(false)},
		{name: "a null annotation is no default", op: admission.Create, ns: "null", pod: pod(false)},
		{name: "update adds memory pressure, not defaults", op: admission.Update, ns: "defaults", pod: pod(true),
			want: []corev1.Toleration{memoryPressure}},
		{name: "update of a BestEffort pod adds nothing", op: admission.Update, ns: "defaults", pod: pod(false)},
		{name: "namespace whitelist allows", op: admission.Update, ns: "allowA", pod: pod(false, tolerateA),
			want: []corev1.Toleration{tolerateA}},
		{name: "a merged default outside the namespace whitelist", op: admission.Create, ns: "allowA", pod: pod(false, tolerateA),
			err: "pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist"},
		{name: "namespace whitelist refuses", op: admission.Update, ns: "allowA", pod: pod(false, tolerateB),
			err: "pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist"},
		{name: "cluster whitelist refuses", op: admission.Create, ns: "plain", pod: pod(false, tolerateB),
			err: "pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist"},
		{name: "cluster whitelist allows memory pressure", op: admission.Create, ns: "plain", pod: pod(true),
			want: []corev1.Toleration{tolerateCfg, memoryPressure}},
		{name: "an empty whitelist allows anything", op: admission.Create, ns: "empty", pod: pod(false, tolerateB),
			want: []corev1.Toleration{tolerateB}},
		{name: "a null whitelist allows anything", op: admission.Create, ns: "null", pod: pod(false, tolerateB),
			want: []corev1.Toleration{tolerateB}},
		{name: "annotation that is not JSON", op: admission.Create, ns: "badJSON", pod: pod(false), err: "unexpected end of JSON input"},
		{name: "missing namespace", op: admission.Create, ns: "gone", pod: pod(false), code: http.StatusNotFound},
		{name: "unreadable namespace", op: admission.Create, ns: "broken", pod: pod(false), code: http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Admit(context.Background(), attrs(tc.op, tc.ns, tc.pod))
			var status apierrors.APIStatus
			switch {
			case tc.code != 0:
				if !errors.As(err, &status) || status.Status().Code != tc.code {
					t.Errorf("Admit = %v, want a %d", err, tc.code)
				}
			case tc.err != "":
				if err == nil || errors.As(err, &status) || err.Error() != tc.err {
					t.Errorf("Admit = %v, want the plain error %q", err, tc.err)
				}
			default:
				if err != nil {
					t.Fatalf("Admit = %v", err)
				}
				if !reflect.DeepEqual(tc.pod.Spec.Tolerations, tc.want) {
					t.Errorf("tolerations %+v, want %+v", tc.pod.Spec.Tolerations, tc.want)
				}
			}
		})
	}
}

// TestValidate: a pod without tolerations reads no namespace; Validate
// does not merge.
func TestValidate(t *testing.T) {
	p, err := New(configData, namespaces)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(context.Background(), attrs(admission.Create, "gone", pod(true))); err != nil {
		t.Errorf("no tolerations in a missing namespace: %v", err)
	}
	obj := pod(true, tolerateCfg)
	if err := p.Validate(context.Background(), attrs(admission.Create, "plain", obj)); err != nil || !reflect.DeepEqual(obj.Spec.Tolerations, []corev1.Toleration{tolerateCfg}) {
		t.Errorf("Validate = %v, tolerations %+v: want admitted, unchanged", err, obj.Spec.Tolerations)
	}
	err = p.Validate(context.Background(), attrs(admission.Update, "plain", pod(false, tolerateA)))
	if err == nil || err.Error() != "pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist" {
		t.Errorf("Validate outside the cluster whitelist = %v", err)
	}
}

// TestIgnored: subresources, other resources and other objects are left
// alone; the plugin handles creates and updates.
func TestIgnored(t *testing.T) {
	p, err := New(configData, namespaces)
	if err != nil {
		t.Fatal(err)
	}
	status := attrs(admission.Update, "gone", pod(true, tolerateB))
	status.Subresource = "status"
	other := attrs(admission.Create, "gone", pod(true, tolerateB))
	other.Resource.Resource = "podtemplates"
	notPod := attrs(admission.Create, "gone", nil)
	notPod.Object = &corev1.Service{}
	for name, a := range map[string]*admission.Attributes{"status": status, "other resource": other, "not a pod": notPod} {
		if err := p.Admit(context.Background(), a); err != nil {
			t.Errorf("%s: Admit = %v", name, err)
		}
		if obj, ok := a.Object.(*corev1.Pod); ok && !reflect.DeepEqual(obj.Spec.Tolerations, []corev1.Toleration{tolerateB}) {
			t.Errorf("%s: tolerations %+v changed", name, obj.Spec.Tolerations)
		}
	}
	if !p.Handles(admission.Create) || !p.Handles(admission.Update) || p.Handles(admission.Delete) || p.Handles(admission.Connect) {
		t.Error("Handles: want creates and updates")
	}
}

// TestReadConfiguration: none is no default and no whitelist; the kind is
// required and the tolerations are checked as a pod's, with kube's
// messages.
func TestReadConfiguration(t *testing.T) {
	c, err := readConfiguration(nil)
	if err != nil || c.Default != nil || c.Whitelist != nil {
		t.Errorf("no configuration: %+v, %v", c, err)
	}
	c, err = readConfiguration(configData)
	if err != nil || !reflect.DeepEqual(c.Default, []corev1.Toleration{tolerateCfg}) || len(c.Whitelist) != 2 {
		t.Errorf("configuration: %+v, %v", c, err)
	}
	for _, tc := range []struct{ data, want string }{
		{"default: []\n", "Object 'Kind' is missing in 'default: []\n'"},
		{"apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\nkind: Configuration\ndefault:\n- key: a\n  operator: Exists\n  value: x\n",
			"invalid config: [podtolerationrestriction.default[0].operator: Invalid value: \"x\": value must be empty when `operator` is 'Exists']"},
		{"apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\nkind: Configuration\nwhitelist:\n- operator: Equal\n",
			"invalid config: [podtolerationrestriction.whitelist[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"]"},
	} {
		if _, err := readConfiguration([]byte(tc.data)); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %q", tc.data, err, tc.want)
		}
	}
	if _, err := readConfiguration([]byte("apiVersion: v1\nkind: Configuration\n")); err == nil {
		t.Error("a configuration of another version was accepted")
	}
}
