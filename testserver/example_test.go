package testserver_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/capstan-io/capstan/testserver"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.capstan.io", Version: "v1", Kind: "Widget"}

// widgetReconciler keeps, for each Widget, a ConfigMap of the same name
// holding its spec.message, owned by the Widget, and records the
// ConfigMap's name in the Widget's status.
type widgetReconciler struct{ client.Client }

func (r widgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGVK)
	if err := r.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	message, _, _ := unstructured.NestedString(w.Object, "spec", "message")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.GetName(), Namespace: w.GetNamespace()}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"message": message}
		return controllerutil.SetControllerReference(w, cm, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	if err := unstructured.SetNestedField(w.Object, cm.Name, "status", "configMap"); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.Status().Update(ctx, w)
}

// TestWidgetReconciler tests a controller-runtime reconciler against an
// in-process capstan with the Widget CRD installed.
func TestWidgetReconciler(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.WithCRDPaths("testdata/crds"))

	mgr, err := ctrl.NewManager(s.RESTConfig(), ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	watched := &unstructured.Unstructured{}
	watched.SetGroupVersionKind(widgetGVK)
	if err := ctrl.NewControllerManagedBy(mgr).For(watched).Owns(&corev1.ConfigMap{}).
		Complete(widgetReconciler{mgr.GetClient()}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	c := mgr.GetClient()
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGVK)
	w.SetNamespace("default")
	w.SetName("hello")
	w.Object["spec"] = map[string]any{"message": "hi"}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	key := types.NamespacedName{Namespace: "default", Name: "hello"}
	eventually(t, func(ctx context.Context) bool {
		return c.Get(ctx, key, cm) == nil && cm.Data["message"] == "hi"
	})
	if refs := cm.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Widget" || refs[0].Name != "hello" {
		t.Errorf("config map's owners: %v", refs)
	}

	// A change of the spec reaches the ConfigMap.
	if err := unstructured.SetNestedField(w.Object, "bye", "spec", "message"); err != nil {
		t.Fatal(err)
	}
	eventually(t, func(ctx context.Context) bool {
		latest := w.DeepCopy()
		if c.Get(ctx, key, latest) != nil {
			return false
		}
		_ = unstructured.SetNestedField(latest.Object, "bye", "spec", "message")
		return c.Update(ctx, latest) == nil
	})
	eventually(t, func(ctx context.Context) bool {
		return c.Get(ctx, key, cm) == nil && cm.Data["message"] == "bye"
	})

	// Deleting the Widget deletes its ConfigMap (capstan's garbage collector).
	if err := c.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	eventually(t, func(ctx context.Context) bool {
		return apierrors.IsNotFound(c.Get(ctx, key, &corev1.ConfigMap{}))
	})
}

func eventually(t *testing.T, cond func(context.Context) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) { return cond(ctx), nil })
	if err != nil {
		t.Fatal(err)
	}
}
