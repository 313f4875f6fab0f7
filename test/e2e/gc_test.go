package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-io/capstan/internal/testkit"
)

func cmRef(cm *corev1.ConfigMap, block bool) metav1.OwnerReference {
	return e2eutil.OwnedBy("v1", "ConfigMap", cm.Name, cm.UID, block)
}

func TestGC(t *testing.T) {
	e := e2eutil.Start(t)
	background := metav1.DeletePropagationBackground
	foreground := metav1.DeletePropagationForeground
	orphan := metav1.DeletePropagationOrphan

	t.Run("Background", func(t *testing.T) {
		ns := e.Namespace(t)
		owner := e.ConfigMap(t, ns, "owner", nil)
		dep := e.OwnedConfigMap(t, ns, "dep", nil, cmRef(owner, false))
		e.OwnedSecret(t, ns, "grand", cmRef(dep, false))
		// A second, live owner keeps an object; the gone one's reference is dropped.
		other := e.ConfigMap(t, ns, "other", nil)
		shared := e.OwnedConfigMap(t, ns, "shared", nil, cmRef(owner, false), cmRef(other, false))
		e.CMStays(t, ns, "dep")

		e.DeleteCM(t, ns, "owner", nil)
		e.CMGone(t, ns, "owner")
		e.CMGone(t, ns, "dep")
		e.SecretGone(t, ns, "grand")
		e2eutil.Eventually(t, e2eutil.GcWait, "reference to the gone owner dropped", func(ctx context.Context) (bool, error) {
			cm, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, shared.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return len(cm.OwnerReferences) == 1 && cm.OwnerReferences[0].UID == other.UID, nil
		})
	})

	// The collector learns of a reference added later from the informer's
	// update, which it must not take for a resync.
	t.Run("ReferenceAddedByUpdate", func(t *testing.T) {
		ns := e.Namespace(t)
		owner := e.ConfigMap(t, ns, "owner", nil)
		dep := e.ConfigMap(t, ns, "dep", nil)
		dep.OwnerReferences = []metav1.OwnerReference{cmRef(owner, false)}
		if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Update(e2eutil.Ctx(t), dep, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("adding the owner reference: %v", err)
		}
		e.CollectorSawConfigMaps(t, ns)
		e.DeleteCM(t, ns, "owner", nil)
		e.CMGone(t, ns, "dep")
	})

	t.Run("DanglingAtCreation", func(t *testing.T) {
		ns := e.Namespace(t)
		e.OwnedConfigMap(t, ns, "orphaned", nil, e2eutil.OwnedBy("v1", "ConfigMap", "nobody", "0f8c3a2e-0000-4000-8000-000000000001", false))
		e.CMGone(t, ns, "orphaned")
	})

	t.Run("Scope", func(t *testing.T) {
		// An owner in another namespace is no owner: the dependent goes.
		nsA, nsB := e.Namespace(t), e.Namespace(t)
		owner := e.ConfigMap(t, nsA, "owner", nil)
		e.OwnedConfigMap(t, nsB, "elsewhere", nil, cmRef(owner, false))
		e.CMGone(t, nsB, "elsewhere")
		if _, err := e.Clientset.CoreV1().ConfigMaps(nsA).Get(e2eutil.Ctx(t), "owner", metav1.GetOptions{}); err != nil {
			t.Fatalf("owner: %v", err)
		}

		// A cluster-scoped owner is valid for a namespaced dependent.
		cr, err := e.Clientset.RbacV1().ClusterRoles().Create(e2eutil.Ctx(t), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("gc-owner")}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.OwnedConfigMap(t, nsA, "by-cluster", nil, e2eutil.OwnedBy("rbac.authorization.k8s.io/v1", "ClusterRole", cr.Name, cr.UID, false))
		e.CMStays(t, nsA, "by-cluster")
		if err := e.Clientset.RbacV1().ClusterRoles().Delete(e2eutil.Ctx(t), cr.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.CMGone(t, nsA, "by-cluster")
	})

	t.Run("Foreground", func(t *testing.T) {
		ns := e.Namespace(t)
		owner := e.ConfigMap(t, ns, "owner", nil)
		// dep is held by a finalizer of its own, so that the owner's wait shows.
		dep := e.OwnedConfigMap(t, ns, "dep", []string{"example.com/hold"}, cmRef(owner, true))
		e.OwnedSecret(t, ns, "grand", cmRef(dep, true))
		loose := e.OwnedConfigMap(t, ns, "loose", nil, cmRef(owner, false))

		e.DeleteCM(t, ns, "owner", &foreground)
		got := e.CMStays(t, ns, "owner")
		if got.DeletionTimestamp == nil || !slices.Contains(got.Finalizers, metav1.FinalizerDeleteDependents) {
			t.Fatalf("owner: deletionTimestamp %v finalizers %v, want a deletionTimestamp and foregroundDeletion", got.DeletionTimestamp, got.Finalizers)
		}
		e.SecretGone(t, ns, "grand")
		e.CMGone(t, ns, loose.Name)
		e2eutil.Eventually(t, e2eutil.GcWait, "dependent deleted in the foreground", func(ctx context.Context) (bool, error) {
			cm, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, "dep", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return cm.DeletionTimestamp != nil, nil
		})
		got = e.CMStays(t, ns, "owner")
		if !slices.Contains(got.Finalizers, metav1.FinalizerDeleteDependents) {
			t.Fatalf("owner finalized while a blocking dependent remains: %v", got.Finalizers)
		}
		// Releasing the dependent's own finalizer lets the whole chain go.
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Patch(e2eutil.Ctx(t), "dep", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		e.CMGone(t, ns, "dep")
		e.CMGone(t, ns, "owner")
	})

	// Pod templates and controller revisions have no object when the server
	// starts: the collector watches them from their first write on.
	t.Run("ResourcesEmptyAtStart", func(t *testing.T) {
		ns := e.Namespace(t)
		tmpl := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "owner"},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}
		owner, err := e.Clientset.CoreV1().PodTemplates(ns).Create(e2eutil.Ctx(t), tmpl, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rev := func(name string, owners ...metav1.OwnerReference) {
			t.Helper()
			cr := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners},
				Data: runtime.RawExtension{Raw: []byte(`{}`)}, Revision: 1}
			if _, err := e.Clientset.AppsV1().ControllerRevisions(ns).Create(e2eutil.Ctx(t), cr, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		rev("dangling", e2eutil.OwnedBy("v1", "PodTemplate", "nobody", "0f8c3a2e-0000-4000-8000-000000000003", false))
		rev("dep", e2eutil.OwnedBy("v1", "PodTemplate", owner.Name, owner.UID, true))
		revGone := func(name string) {
			t.Helper()
			e2eutil.Gone(t, "controllerrevision "+name, func(ctx context.Context) error {
				_, err := e.Clientset.AppsV1().ControllerRevisions(ns).Get(ctx, name, metav1.GetOptions{})
				return err
			})
		}
		revGone("dangling")
		if err := e.Clientset.CoreV1().PodTemplates(ns).Delete(e2eutil.Ctx(t), owner.Name, metav1.DeleteOptions{PropagationPolicy: &foreground}); err != nil {
			t.Fatal(err)
		}
		revGone("dep")
		e2eutil.Gone(t, "podtemplate owner", func(ctx context.Context) error {
			_, err := e.Clientset.CoreV1().PodTemplates(ns).Get(ctx, owner.Name, metav1.GetOptions{})
			return err
		})
	})

	t.Run("ForegroundThenBackground", func(t *testing.T) {
		// A later delete with another policy changes the finalizers, as in
		// kube: Background drops foregroundDeletion and deletes at once.
		ns := e.Namespace(t)
		owner := e.ConfigMap(t, ns, "owner", nil)
		e.OwnedConfigMap(t, ns, "dep", []string{"example.com/hold"}, cmRef(owner, true))
		e.DeleteCM(t, ns, "owner", &foreground)
		e.CMStays(t, ns, "owner")
		e.DeleteCM(t, ns, "owner", &background)
		e.CMGone(t, ns, "owner")
		// dep is deleted (and held by its own finalizer).
		e2eutil.Eventually(t, e2eutil.GcWait, "dependent marked", func(ctx context.Context) (bool, error) {
			cm, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, "dep", metav1.GetOptions{})
			return err == nil && cm.DeletionTimestamp != nil, err
		})
	})

	t.Run("Orphan", func(t *testing.T) {
		ns := e.Namespace(t)
		owner := e.ConfigMap(t, ns, "owner", nil)
		other := e.ConfigMap(t, ns, "other", nil)
		e.OwnedConfigMap(t, ns, "dep", nil, cmRef(owner, true), cmRef(other, false))
		e.OwnedSecret(t, ns, "only", cmRef(owner, false))

		e.DeleteCM(t, ns, "owner", &orphan)
		e.CMGone(t, ns, "owner")
		dep := e.CMStays(t, ns, "dep")
		if len(dep.OwnerReferences) != 1 || dep.OwnerReferences[0].UID != other.UID {
			t.Fatalf("dep ownerReferences = %v, want only the other owner", dep.OwnerReferences)
		}
		s, err := e.Clientset.CoreV1().Secrets(ns).Get(e2eutil.Ctx(t), "only", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("orphaned secret: %v", err)
		}
		if len(s.OwnerReferences) != 0 {
			t.Fatalf("secret ownerReferences = %v, want none", s.OwnerReferences)
		}
	})

	t.Run("OrphanDependentsOption", func(t *testing.T) {
		// The deprecated orphanDependents=true orphans too; both options at
		// once are refused.
		ns := e.Namespace(t)
		owner := e.ConfigMap(t, ns, "owner", nil)
		e.OwnedConfigMap(t, ns, "dep", nil, cmRef(owner, false))
		yes := true
		err := e.Clientset.CoreV1().ConfigMaps(ns).Delete(e2eutil.Ctx(t), "owner", metav1.DeleteOptions{OrphanDependents: &yes, PropagationPolicy: &orphan})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
		if err := e.Clientset.CoreV1().ConfigMaps(ns).Delete(e2eutil.Ctx(t), "owner", metav1.DeleteOptions{OrphanDependents: &yes}); err != nil {
			t.Fatal(err)
		}
		e.CMGone(t, ns, "owner")
		if dep := e.CMStays(t, ns, "dep"); len(dep.OwnerReferences) != 0 {
			t.Fatalf("dep ownerReferences = %v, want none", dep.OwnerReferences)
		}
	})

	t.Run("JobDefaultOrphans", func(t *testing.T) {
		// batch/v1 jobs orphan their dependents unless told otherwise.
		ns := e.Namespace(t)
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "job"},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
			}}},
		}
		job, err := e.Clientset.BatchV1().Jobs(ns).Create(e2eutil.Ctx(t), job, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.OwnedConfigMap(t, ns, "kept", nil, e2eutil.OwnedBy("batch/v1", "Job", job.Name, job.UID, true))
		// The job and the config map reach the collector through separate
		// informers: make sure it has seen the dependent before the owner
		// goes, or it has nothing to orphan (kube's collector too).
		e.CollectorSawConfigMaps(t, ns)
		if err := e.Clientset.BatchV1().Jobs(ns).Delete(e2eutil.Ctx(t), job.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e2eutil.Gone(t, "job", func(ctx context.Context) error {
			_, err := e.Clientset.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
			return err
		})
		if cm := e.CMStays(t, ns, "kept"); len(cm.OwnerReferences) != 0 {
			t.Fatalf("ownerReferences = %v, want none", cm.OwnerReferences)
		}
	})

	t.Run("CustomResources", func(t *testing.T) {
		// A custom resource owns a config map and is owned by one; its kind
		// is new to the collector, which finds it through discovery.
		e.CreateCRD(t, gcWidgetCRD)
		ns := e.Namespace(t)
		widgets := e.Dynamic(t).Resource(schema.GroupVersionResource{Group: "gc.example.com", Version: "v1", Resource: "gcwidgets"}).Namespace(ns)
		top := e.ConfigMap(t, ns, "top", nil)
		w := e2eutil.FromYAML(t, "apiVersion: gc.example.com/v1\nkind: GCWidget\nmetadata:\n  name: w\n")
		w.SetOwnerReferences([]metav1.OwnerReference{cmRef(top, true)})
		w, err := widgets.Create(e2eutil.Ctx(t), w, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.OwnedConfigMap(t, ns, "under", nil, e2eutil.OwnedBy("gc.example.com/v1", "GCWidget", "w", w.GetUID(), true))
		e.CMStays(t, ns, "under")

		e.DeleteCM(t, ns, "top", &foreground)
		e.CMGone(t, ns, "under")
		e2eutil.Gone(t, "widget", func(ctx context.Context) error {
			_, err := widgets.Get(ctx, "w", metav1.GetOptions{})
			return err
		})
		e.CMGone(t, ns, "top")
	})

	t.Run("CustomResourcesBackground", func(t *testing.T) {
		// The collector watches a custom resource only from its first
		// object on: a CR owned by a config map, and a config map owned
		// by a CR, both go with their owner; so does a CR whose owner
		// never existed.
		e.CreateCRD(t, gcGadgetCRD)
		ns := e.Namespace(t)
		gadgets := e.Dynamic(t).Resource(schema.GroupVersionResource{Group: "gc.example.com", Version: "v1", Resource: "gcgadgets"}).Namespace(ns)
		gadget := func(name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
			t.Helper()
			g := e2eutil.FromYAML(t, "apiVersion: gc.example.com/v1\nkind: GCGadget\nmetadata:\n  name: "+name+"\n")
			g.SetOwnerReferences(owners)
			g, err := gadgets.Create(e2eutil.Ctx(t), g, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
		gadgetGone := func(name string) {
			t.Helper()
			e2eutil.Gone(t, "gadget "+name, func(ctx context.Context) error {
				_, err := gadgets.Get(ctx, name, metav1.GetOptions{})
				return err
			})
		}

		owner := e.ConfigMap(t, ns, "owner", nil)
		gadget("owned", cmRef(owner, false))
		e.DeleteCM(t, ns, "owner", &background)
		gadgetGone("owned")

		g := gadget("owning")
		e.OwnedConfigMap(t, ns, "dep", nil, e2eutil.OwnedBy("gc.example.com/v1", "GCGadget", "owning", g.GetUID(), false))
		e.CMStays(t, ns, "dep")
		if err := gadgets.Delete(e2eutil.Ctx(t), "owning", metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
			t.Fatal(err)
		}
		e.CMGone(t, ns, "dep")

		gadget("dangling", e2eutil.OwnedBy("v1", "ConfigMap", "nobody", "0f8c3a2e-0000-4000-8000-000000000002", false))
		gadgetGone("dangling")
	})

	t.Run("Kubectl", func(t *testing.T) {
		ns := e.Namespace(t)
		for _, cascade := range []string{"orphan", "background", "foreground"} {
			owner := e.ConfigMap(t, ns, "owner-"+cascade, nil)
			e.OwnedConfigMap(t, ns, "dep-"+cascade, nil, cmRef(owner, true))
			out, errOut, err := testkit.RunKubectl(t, e.Kubeconfig, nil, "delete", "configmap", owner.Name, "-n", ns, "--cascade="+cascade)
			if err != nil {
				t.Fatalf("kubectl delete --cascade=%s: %v\n%s%s", cascade, err, out, errOut)
			}
			e.CMGone(t, ns, owner.Name)
			if cascade == "orphan" {
				if cm := e.CMStays(t, ns, "dep-"+cascade); len(cm.OwnerReferences) != 0 {
					t.Fatalf("orphaned dependent keeps %v", cm.OwnerReferences)
				}
				continue
			}
			e.CMGone(t, ns, "dep-"+cascade)
		}
	})
}

const gcGadgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gcgadgets.gc.example.com
spec:
  group: gc.example.com
  scope: Namespaced
  names: {plural: gcgadgets, singular: gcgadget, kind: GCGadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

const gcWidgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gcwidgets.gc.example.com
spec:
  group: gc.example.com
  scope: Namespaced
  names: {plural: gcwidgets, singular: gcwidget, kind: GCWidget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`
