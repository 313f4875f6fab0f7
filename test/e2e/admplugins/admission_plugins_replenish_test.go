package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"log/slog"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"

	quotacontroller "github.com/capstan-io/capstan/controlplane/controllers/resourcequota"
)

// runQuotaController runs a quota controller whose resync is too long to
// matter, until the test ends.
func runQuotaController(t *testing.T, e *e2eutil.Env) {
	t.Helper()
	meta, err := metadata.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := quotacontroller.New(quotacontroller.Config{Client: e.Clientset, Metadata: meta, Discovery: disco, Logger: slog.Default(), Resync: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ctrl.Run(c, 1) }()
	t.Cleanup(func() { cancel(); <-done })
}

// waitQuotaUsed waits for the quota's status.used to be want.
func waitQuotaUsed(t *testing.T, e *e2eutil.Env, ns, name string, want map[corev1.ResourceName]int64) {
	t.Helper()
	var q *corev1.ResourceQuota
	err := wait.PollUntilContextTimeout(e2eutil.Ctx(t), 50*time.Millisecond, 30*time.Second, true, func(c context.Context) (bool, error) {
		got, err := e.Clientset.CoreV1().ResourceQuotas(ns).Get(c, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if q = got; len(q.Status.Used) != len(want) {
			return false, nil
		}
		for n, v := range want {
			if u, ok := q.Status.Used[n]; !ok || u.Value() != v {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		if q == nil {
			t.Fatalf("quota: %v", err)
		}
		t.Fatalf("used %v, want %v: %v", q.Status.Used, want, err)
	}
}

// TestQuotaReplenishment: with a resync too long to matter, a deleted pod
// and a deleted config map, and a pod that finished, give their usage back
// through the controller's watches.
func TestQuotaReplenishment(t *testing.T) {
	e := e2eutil.Start(t, "--controllers=*,-root-ca-cert-publisher,-resourcequota")
	runQuotaController(t, e)

	ns := e.Namespace(t)
	hard := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2"), "count/configmaps": resource.MustParse("2")}
	if _, err := e.Clientset.CoreV1().ResourceQuotas(ns).Create(e2eutil.Ctx(t), &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsed := func(pods, configMaps int64) {
		t.Helper()
		waitQuotaUsed(t, e, ns, "q", map[corev1.ResourceName]int64{corev1.ResourcePods: pods, "count/configmaps": configMaps})
	}
	waitUsed(0, 0)
	e.ConfigMap(t, ns, "m", nil)
	for _, name := range []string{"a", "b"} {
		if _, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), plainPod(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitUsed(2, 1) // charged by admission
	if err := e.Clientset.CoreV1().Pods(ns).Delete(e2eutil.Ctx(t), "a", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	if err := e.Clientset.CoreV1().ConfigMaps(ns).Delete(e2eutil.Ctx(t), "m", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsed(1, 0)
	b, err := e.Clientset.CoreV1().Pods(ns).Get(e2eutil.Ctx(t), "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Status.Phase = corev1.PodSucceeded
	if _, err := e.Clientset.CoreV1().Pods(ns).UpdateStatus(e2eutil.Ctx(t), b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsed(0, 0)
}

// TestQuotaReplenishmentCounted: objects of any resource a quota counts
// by count/<resource>.<group>, built-in or custom (its CRD made after the
// quota), give their usage back when deleted, through watches the
// controller starts for the resources quotas name.
func TestQuotaReplenishmentCounted(t *testing.T) {
	e := e2eutil.Start(t, "--controllers=*,-root-ca-cert-publisher,-resourcequota")
	runQuotaController(t, e)
	ns := e.Namespace(t)
	hard := corev1.ResourceList{"count/leases.coordination.k8s.io": resource.MustParse("5"), "count/gizmos.replenish.example.com": resource.MustParse("5")}
	if _, err := e.Clientset.CoreV1().ResourceQuotas(ns).Create(e2eutil.Ctx(t), &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.CreateCRD(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.replenish.example.com}
spec:
  group: replenish.example.com
  scope: Namespaced
  names: {plural: gizmos, kind: Gizmo}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`)
	used := func(leases, gizmos int64) map[corev1.ResourceName]int64 {
		return map[corev1.ResourceName]int64{"count/leases.coordination.k8s.io": leases, "count/gizmos.replenish.example.com": gizmos}
	}
	gizmos := e.Dynamic(t).Resource(schema.GroupVersionResource{Group: "replenish.example.com", Version: "v1", Resource: "gizmos"}).Namespace(ns)
	waitQuotaUsed(t, e, ns, "q", used(0, 0)) // counted once the CRD is served
	for _, name := range []string{"a", "b"} {
		if _, err := e.Clientset.CoordinationV1().Leases(ns).Create(e2eutil.Ctx(t), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		g := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "replenish.example.com/v1", "kind": "Gizmo", "metadata": map[string]any{"name": name}}}
		if _, err := gizmos.Create(e2eutil.Ctx(t), g, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitQuotaUsed(t, e, ns, "q", used(2, 2)) // charged by admission
	if err := e.Clientset.CoordinationV1().Leases(ns).Delete(e2eutil.Ctx(t), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitQuotaUsed(t, e, ns, "q", used(1, 2))
	if err := gizmos.Delete(e2eutil.Ctx(t), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitQuotaUsed(t, e, ns, "q", used(1, 1))
}
