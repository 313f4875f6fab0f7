package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestSelectorListsAndWatches: label and field selectors on lists,
// initial events and watch events answer from the attributes the watch
// cache keeps of each object, which follow every change: an object whose
// labels or fields change leaves the selection (DELETED, with its last
// selected state) or enters it (ADDED), as in kube.
func TestSelectorListsAndWatches(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	yes := map[string]string{"sel": "yes"}
	e.ConfigMap(t, ns, "a", yes)
	e.ConfigMap(t, ns, "b", nil)
	e.ConfigMap(t, ns, "c", yes)
	list, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{LabelSelector: "sel=yes"})
	if err != nil || names(list.Items) != "a,c" {
		t.Fatalf("list sel=yes = %s, %v", names(list.Items), err)
	}
	byField, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "metadata.name!=a,metadata.namespace=" + ns})
	if err != nil || names(byField.Items) != "b,c" {
		t.Fatalf("list metadata.name!=a = %s, %v", names(byField.Items), err)
	}
	watchCMs := func(opts metav1.ListOptions) watch.Interface {
		t.Helper()
		w, err := cms.Watch(e2eutil.Ctx(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w
	}
	changes := watchCMs(metav1.ListOptions{LabelSelector: "sel=yes", ResourceVersion: list.ResourceVersion})
	initial := watchCMs(metav1.ListOptions{LabelSelector: "sel=yes", ResourceVersion: "0"})
	wantEvent(t, initial, watch.Added, "a", "")
	wantEvent(t, initial, watch.Added, "c", "")

	update := func(name string, change func(*corev1.ConfigMap)) *corev1.ConfigMap {
		t.Helper()
		cm, err := cms.Get(e2eutil.Ctx(t), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(cm)
		if cm, err = cms.Update(e2eutil.Ctx(t), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		return cm
	}
	left := update("a", func(cm *corev1.ConfigMap) { cm.Labels["sel"] = "no" })
	entered := update("b", func(cm *corev1.ConfigMap) { cm.Labels = yes })
	modified := update("c", func(cm *corev1.ConfigMap) { cm.Data["k"] = "changed" })
	update("a", func(cm *corev1.ConfigMap) { cm.Data["k"] = "unselected" })
	if err := cms.Delete(e2eutil.Ctx(t), "c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	last := e.ConfigMap(t, ns, "z", yes)
	for _, w := range []watch.Interface{changes, initial} {
		if gone := wantEvent(t, w, watch.Deleted, "a", left.ResourceVersion); gone.Labels["sel"] != "yes" {
			t.Errorf("DELETED on leaving the selection carries labels %v", gone.Labels)
		}
		wantEvent(t, w, watch.Added, "b", entered.ResourceVersion)
		wantEvent(t, w, watch.Modified, "c", modified.ResourceVersion)
		wantEvent(t, w, watch.Deleted, "c", "")
		wantEvent(t, w, watch.Added, "z", last.ResourceVersion) // nothing of a's last change came before
	}
	if list, err = cms.List(e2eutil.Ctx(t), metav1.ListOptions{LabelSelector: "sel=yes"}); err != nil || names(list.Items) != "b,z" {
		t.Errorf("list sel=yes after the changes = %s, %v; want b,z", names(list.Items), err)
	}
	if list, err = cms.List(e2eutil.Ctx(t), metav1.ListOptions{LabelSelector: "sel=no", ResourceVersion: "0"}); err != nil || names(list.Items) != "a" {
		t.Errorf("list sel=no from the cache = %s, %v; want a", names(list.Items), err)
	}
}

// TestPodFieldSelectorWatches: kubelet's watch of its node's pods
// (spec.nodeName) gets a pod when it is bound there; a watch of running
// pods (status.phase) gets it when it runs and loses it when it ends.
func TestPodFieldSelectorWatches(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	pods := e.Clientset.CoreV1().Pods(ns)
	list, err := pods.List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	watchPods := func(fieldSelector string) watch.Interface {
		t.Helper()
		w, err := e.Clientset.CoreV1().Pods("").Watch(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: fieldSelector, ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w
	}
	onNode, running := watchPods("spec.nodeName=node-1"), watchPods("status.phase=Running,metadata.namespace="+ns)
	for _, name := range []string{"p", "other"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		if _, err := pods.Create(e2eutil.Ctx(t), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bind := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
	if err := pods.Bind(e2eutil.Ctx(t), bind, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantPodEvent(t, onNode, watch.Added, "p", "")
	setPhase := func(name string, phase corev1.PodPhase) *corev1.Pod {
		t.Helper()
		pod, err := pods.Get(e2eutil.Ctx(t), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = phase
		if pod, err = pods.UpdateStatus(e2eutil.Ctx(t), pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		return pod
	}
	runs := setPhase("p", corev1.PodRunning)
	wantPodEvent(t, running, watch.Added, "p", runs.ResourceVersion)
	wantPodEvent(t, onNode, watch.Modified, "p", runs.ResourceVersion)
	ends := setPhase("p", corev1.PodSucceeded)
	if gone := wantPodEvent(t, running, watch.Deleted, "p", ends.ResourceVersion); gone.Status.Phase != corev1.PodRunning {
		t.Errorf("DELETED on leaving status.phase=Running carries phase %s", gone.Status.Phase)
	}
	wantPodEvent(t, onNode, watch.Modified, "p", ends.ResourceVersion)
	other := setPhase("other", corev1.PodRunning)
	wantPodEvent(t, running, watch.Added, "other", other.ResourceVersion) // nothing between for the unbound pod on onNode
	for _, tt := range []struct{ selector, want string }{
		{"spec.nodeName=node-1", "p"},
		{"spec.nodeName=", "other"},
		{"status.phase=Running", "other"},
		{"spec.nodeName=node-1,status.phase=Succeeded", "p"},
	} {
		for _, rv := range []string{"", "0"} {
			got, err := pods.List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: tt.selector, ResourceVersion: rv})
			if err != nil || names(got.Items) != tt.want {
				t.Errorf("pods with %q at %q = %s, %v; want %s", tt.selector, rv, names(got.Items), err, tt.want)
			}
		}
	}
}

// wantPodEvent reads the next event and checks its type, the pod's name
// and, unless empty, its resourceVersion.
func wantPodEvent(t *testing.T, w watch.Interface, typ watch.EventType, name, rv string) *corev1.Pod {
	t.Helper()
	ev := e2eutil.NextEvent(t, w)
	pod, ok := ev.Object.(*corev1.Pod)
	if m, err := meta.Accessor(ev.Object); ev.Type != typ || !ok || err != nil || m.GetName() != name || (rv != "" && m.GetResourceVersion() != rv) {
		t.Fatalf("event = %s %+v, want %s %q at %q", ev.Type, ev.Object, typ, name, rv)
	}
	return pod
}
