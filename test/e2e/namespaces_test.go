package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSystemNamespaces(t *testing.T) {
	e := e2eutil.Start(t)
	list, err := e.Clientset.CoreV1().Namespaces().List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"default", "kube-node-lease", "kube-public", "kube-system"} {
		i := slices.IndexFunc(list.Items, func(ns corev1.Namespace) bool { return ns.Name == name })
		if i < 0 {
			t.Fatalf("namespace %s missing at start: %s", name, names(list.Items))
		}
		ns := list.Items[i]
		if ns.Status.Phase != corev1.NamespaceActive || !slices.Equal(ns.Spec.Finalizers, []corev1.FinalizerName{"kubernetes"}) ||
			ns.Labels[corev1.LabelMetadataName] != name {
			t.Errorf("namespace %s = %+v", name, ns)
		}
	}
	for _, name := range []string{"default", "kube-system", "kube-public"} {
		err := e.Clientset.CoreV1().Namespaces().Delete(e2eutil.Ctx(t), name, metav1.DeleteOptions{})
		e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `namespaces "`+name+`" is forbidden: this namespace may not be deleted`)
	}
	_, err = e.Clientset.CoreV1().ConfigMaps("missing").Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `namespaces "missing" not found`)
}

// TestNamespaceDeletion: a deleted namespace turns Terminating, refuses new
// content, and goes once the namespace controller has emptied it.
func TestNamespaceDeletion(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	created, err := e.Clientset.CoreV1().Namespaces().Get(e2eutil.Ctx(t), ns, metav1.GetOptions{})
	if err != nil || created.Status.Phase != corev1.NamespaceActive || !slices.Equal(created.Spec.Finalizers, []corev1.FinalizerName{"kubernetes"}) {
		t.Fatalf("new namespace = %+v, %v", created, err)
	}
	e.ConfigMap(t, ns, "a", nil)
	if _, err := e.Clientset.CoreV1().Secrets(ns).Create(e2eutil.Ctx(t), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}}
	if _, err := e.Clientset.CoordinationV1().Leases(ns).Create(e2eutil.Ctx(t), lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A finalizer holds one config map until it is removed.
	held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := e.Clientset.CoreV1().Namespaces().Delete(e2eutil.Ctx(t), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	terminating, err := e.Clientset.CoreV1().Namespaces().Get(e2eutil.Ctx(t), ns, metav1.GetOptions{})
	if err != nil || terminating.Status.Phase != corev1.NamespaceTerminating || terminating.DeletionTimestamp == nil {
		t.Fatalf("deleted namespace = %+v, %v", terminating, err)
	}
	_, err = e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{})
	s := e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden,
		`configmaps "late" is forbidden: unable to create new content in namespace `+ns+` because it is being terminated`)
	e2eutil.WantCause(t, s, corev1.NamespaceTerminatingCause, "metadata.namespace")
	if c := s.Details.Causes[0]; c.Message != "namespace "+ns+" is being terminated" {
		t.Errorf("cause message = %q", c.Message)
	}

	e2eutil.Eventually(t, 30*time.Second, "content deleted", func(c context.Context) (bool, error) {
		cms, err := e.Clientset.CoreV1().ConfigMaps(ns).List(c, metav1.ListOptions{})
		return err == nil && names(cms.Items) == "held" && cms.Items[0].DeletionTimestamp != nil, nil
	})
	if _, err := e.Clientset.CoreV1().Namespaces().Get(e2eutil.Ctx(t), ns, metav1.GetOptions{}); err != nil {
		t.Fatalf("namespace went before its content: %v", err)
	}
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Patch(e2eutil.Ctx(t), "held", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 30*time.Second, "namespace gone", func(c context.Context) (bool, error) {
		_, err := e.Clientset.CoreV1().Namespaces().Get(c, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	for _, list := range []func() (int, error){
		func() (int, error) {
			l, err := e.Clientset.CoreV1().Secrets(ns).List(e2eutil.Ctx(t), metav1.ListOptions{})
			return len(l.Items), err
		},
		func() (int, error) {
			l, err := e.Clientset.CoordinationV1().Leases(ns).List(e2eutil.Ctx(t), metav1.ListOptions{})
			return len(l.Items), err
		},
	} {
		if n, err := list(); err != nil || n != 0 {
			t.Errorf("left in the deleted namespace: %d, %v", n, err)
		}
	}
}
