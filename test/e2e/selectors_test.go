package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLabelSelectors(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.ConfigMap(t, ns, "a", map[string]string{"app": "web", "tier": "front"})
	e.ConfigMap(t, ns, "b", map[string]string{"app": "web", "tier": "back"})
	e.ConfigMap(t, ns, "c", map[string]string{"app": "db"})
	e.ConfigMap(t, ns, "d", nil)
	for _, tt := range []struct{ selector, want string }{
		{"app=web", "a,b"},
		{"app==web,tier=back", "b"},
		{"app!=web", "c,d"},
		{"tier in (front,back)", "a,b"},
		{"app in (web,db),tier notin (front)", "b,c"},
		{"tier", "a,b"},
		{"!tier", "c,d"},
		{"app=nothing", ""},
	} {
		list, err := e.Clientset.CoreV1().ConfigMaps(ns).List(e2eutil.Ctx(t), metav1.ListOptions{LabelSelector: tt.selector})
		if err != nil || names(list.Items) != tt.want {
			t.Errorf("labelSelector %q = %s, %v; want %s", tt.selector, names(list.Items), err, tt.want)
		}
	}
	_, err := e.Clientset.CoreV1().ConfigMaps(ns).List(e2eutil.Ctx(t), metav1.ListOptions{LabelSelector: "app in (web"})
	e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "")
}

func TestFieldSelectors(t *testing.T) {
	e := e2eutil.Start(t)
	ns, other := e.Namespace(t), e.Namespace(t)
	e.ConfigMap(t, ns, "a", nil)
	e.ConfigMap(t, ns, "b", nil)
	e.ConfigMap(t, other, "a", nil)
	cms := func(ns, selector string) (string, error) {
		list, err := e.Clientset.CoreV1().ConfigMaps(ns).List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			return "", err
		}
		return names(list.Items), nil
	}
	for _, tt := range []struct{ ns, selector, want string }{
		{ns, "metadata.name=a", "a"},
		{ns, "metadata.name!=a", "b"},
		{ns, "metadata.name=zzz", ""},
		{"", "metadata.namespace=" + other, "a"},
		{"", "metadata.name=b,metadata.namespace=" + ns, "b"},
	} {
		if got, err := cms(tt.ns, tt.selector); err != nil || got != tt.want {
			t.Errorf("configmaps in %q with %q = %s, %v; want %s", tt.ns, tt.selector, got, err, tt.want)
		}
	}
	_, err := cms(ns, "data.k=v")
	e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, `"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"`)

	for name, typ := range map[string]corev1.SecretType{"opaque": corev1.SecretTypeOpaque, "custom": "example.com/custom"} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: typ}
		if _, err := e.Clientset.CoreV1().Secrets(ns).Create(e2eutil.Ctx(t), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	secrets, err := e.Clientset.CoreV1().Secrets(ns).List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "type=example.com/custom"})
	if err != nil || names(secrets.Items) != "custom" {
		t.Errorf("secrets with type=example.com/custom = %s, %v", names(secrets.Items), err)
	}
	_, err = e.Clientset.CoreV1().Secrets(ns).List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "data=x"})
	e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "field label not supported: data")

	nsList, err := e.Clientset.CoreV1().Namespaces().List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "status.phase=Active,metadata.name=" + other})
	if err != nil || names(nsList.Items) != other {
		t.Errorf("active namespace %s = %s, %v", other, names(nsList.Items), err)
	}
	_, err = e.Clientset.CoreV1().Namespaces().List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "metadata.namespace=x"})
	e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "field label not supported: metadata.namespace")

	for i, reason := range []string{"Started", "Killed", "Started"} {
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: e2eutil.Unique("ev")},
			InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: []string{"a", "a", "b"}[i]},
			Reason:         reason, Message: "m", Type: corev1.EventTypeNormal,
		}
		if _, err := e.Clientset.CoreV1().Events(ns).Create(e2eutil.Ctx(t), ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	events, err := e.Clientset.CoreV1().Events(ns).List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "involvedObject.name=a,reason=Started"})
	if err != nil || len(events.Items) != 1 || events.Items[0].InvolvedObject.Name != "a" || events.Items[0].Reason != "Started" {
		t.Errorf("events of a with reason Started = %+v, %v", events.Items, err)
	}
	_, err = e.Clientset.CoreV1().Events(ns).List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "message=m"})
	e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "field label not supported: message")
}
