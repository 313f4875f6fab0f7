package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-io/capstan/internal/testkit"
)

// gcWait bounds how long the collector may take to act on a change.
const gcWait = 30 * time.Second

func ownedBy(apiVersion, kind, name string, uid types.UID, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, BlockOwnerDeletion: &block}
}

func (e *env) ownedConfigMap(t *testing.T, ns, name string, finalizers []string, owners ...metav1.OwnerReference) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners, Finalizers: finalizers}}
	out, err := e.c.CoreV1().ConfigMaps(ns).Create(ctx(t), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating configmap %s/%s: %v", ns, name, err)
	}
	return out
}

func (e *env) ownedSecret(t *testing.T, ns, name string, owners ...metav1.OwnerReference) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners}}
	out, err := e.c.CoreV1().Secrets(ns).Create(ctx(t), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating secret %s/%s: %v", ns, name, err)
	}
	return out
}

func cmRef(cm *corev1.ConfigMap, block bool) metav1.OwnerReference {
	return ownedBy("v1", "ConfigMap", cm.Name, cm.UID, block)
}

// gone waits until get answers NotFound.
func gone(t *testing.T, what string, get func(ctx context.Context) error) {
	t.Helper()
	eventually(t, gcWait, what+" deleted", func(ctx context.Context) (bool, error) {
		err := get(ctx)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, nil
	})
}

func (e *env) cmGone(t *testing.T, ns, name string) {
	t.Helper()
	gone(t, "configmap "+name, func(ctx context.Context) error {
		_, err := e.c.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	})
}

func (e *env) secretGone(t *testing.T, ns, name string) {
	t.Helper()
	gone(t, "secret "+name, func(ctx context.Context) error {
		_, err := e.c.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	})
}

func (e *env) deleteCM(t *testing.T, ns, name string, policy *metav1.DeletionPropagation) {
	t.Helper()
	if err := e.c.CoreV1().ConfigMaps(ns).Delete(ctx(t), name, metav1.DeleteOptions{PropagationPolicy: policy}); err != nil {
		t.Fatalf("deleting configmap %s: %v", name, err)
	}
}

// collectorSawConfigMaps returns once the collector has processed every
// config map written to ns so far: it has deleted a dangling one written
// after them, and it reads one informer's events in order.
func (e *env) collectorSawConfigMaps(t *testing.T, ns string) {
	t.Helper()
	e.ownedConfigMap(t, ns, "gc-barrier", nil, ownedBy("v1", "ConfigMap", "nobody", "0f8c3a2e-0000-4000-8000-000000000002", false))
	e.cmGone(t, ns, "gc-barrier")
}

// stays checks for a while that the configmap is still there and returns it.
func (e *env) cmStays(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	time.Sleep(time.Second)
	cm, err := e.c.CoreV1().ConfigMaps(ns).Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("configmap %s should still exist: %v", name, err)
	}
	return cm
}

func TestGC(t *testing.T) {
	e := start(t)
	background := metav1.DeletePropagationBackground
	foreground := metav1.DeletePropagationForeground
	orphan := metav1.DeletePropagationOrphan

	t.Run("Background", func(t *testing.T) {
		ns := e.namespace(t)
		owner := e.configMap(t, ns, "owner", nil)
		dep := e.ownedConfigMap(t, ns, "dep", nil, cmRef(owner, false))
		e.ownedSecret(t, ns, "grand", cmRef(dep, false))
		// A second, live owner keeps an object; the gone one's reference is dropped.
		other := e.configMap(t, ns, "other", nil)
		shared := e.ownedConfigMap(t, ns, "shared", nil, cmRef(owner, false), cmRef(other, false))
		e.cmStays(t, ns, "dep")

		e.deleteCM(t, ns, "owner", nil)
		e.cmGone(t, ns, "owner")
		e.cmGone(t, ns, "dep")
		e.secretGone(t, ns, "grand")
		eventually(t, gcWait, "reference to the gone owner dropped", func(ctx context.Context) (bool, error) {
			cm, err := e.c.CoreV1().ConfigMaps(ns).Get(ctx, shared.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return len(cm.OwnerReferences) == 1 && cm.OwnerReferences[0].UID == other.UID, nil
		})
	})

	// The collector learns of a reference added later from the informer's
	// update, which it must not take for a resync.
	t.Run("ReferenceAddedByUpdate", func(t *testing.T) {
		ns := e.namespace(t)
		owner := e.configMap(t, ns, "owner", nil)
		dep := e.configMap(t, ns, "dep", nil)
		dep.OwnerReferences = []metav1.OwnerReference{cmRef(owner, false)}
		if _, err := e.c.CoreV1().ConfigMaps(ns).Update(ctx(t), dep, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("adding the owner reference: %v", err)
		}
		e.collectorSawConfigMaps(t, ns)
		e.deleteCM(t, ns, "owner", nil)
		e.cmGone(t, ns, "dep")
	})

	t.Run("DanglingAtCreation", func(t *testing.T) {
		ns := e.namespace(t)
		e.ownedConfigMap(t, ns, "orphaned", nil, ownedBy("v1", "ConfigMap", "nobody", "0f8c3a2e-0000-4000-8000-000000000001", false))
		e.cmGone(t, ns, "orphaned")
	})

	t.Run("Scope", func(t *testing.T) {
		// An owner in another namespace is no owner: the dependent goes.
		nsA, nsB := e.namespace(t), e.namespace(t)
		owner := e.configMap(t, nsA, "owner", nil)
		e.ownedConfigMap(t, nsB, "elsewhere", nil, cmRef(owner, false))
		e.cmGone(t, nsB, "elsewhere")
		if _, err := e.c.CoreV1().ConfigMaps(nsA).Get(ctx(t), "owner", metav1.GetOptions{}); err != nil {
			t.Fatalf("owner: %v", err)
		}

		// A cluster-scoped owner is valid for a namespaced dependent.
		cr, err := e.c.RbacV1().ClusterRoles().Create(ctx(t), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: unique("gc-owner")}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.ownedConfigMap(t, nsA, "by-cluster", nil, ownedBy("rbac.authorization.k8s.io/v1", "ClusterRole", cr.Name, cr.UID, false))
		e.cmStays(t, nsA, "by-cluster")
		if err := e.c.RbacV1().ClusterRoles().Delete(ctx(t), cr.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.cmGone(t, nsA, "by-cluster")
	})

	t.Run("Foreground", func(t *testing.T) {
		ns := e.namespace(t)
		owner := e.configMap(t, ns, "owner", nil)
		// dep is held by a finalizer of its own, so that the owner's wait shows.
		dep := e.ownedConfigMap(t, ns, "dep", []string{"example.com/hold"}, cmRef(owner, true))
		e.ownedSecret(t, ns, "grand", cmRef(dep, true))
		loose := e.ownedConfigMap(t, ns, "loose", nil, cmRef(owner, false))

		e.deleteCM(t, ns, "owner", &foreground)
		got := e.cmStays(t, ns, "owner")
		if got.DeletionTimestamp == nil || !slices.Contains(got.Finalizers, metav1.FinalizerDeleteDependents) {
			t.Fatalf("owner: deletionTimestamp %v finalizers %v, want a deletionTimestamp and foregroundDeletion", got.DeletionTimestamp, got.Finalizers)
		}
		e.secretGone(t, ns, "grand")
		e.cmGone(t, ns, loose.Name)
		eventually(t, gcWait, "dependent deleted in the foreground", func(ctx context.Context) (bool, error) {
			cm, err := e.c.CoreV1().ConfigMaps(ns).Get(ctx, "dep", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return cm.DeletionTimestamp != nil, nil
		})
		got = e.cmStays(t, ns, "owner")
		if !slices.Contains(got.Finalizers, metav1.FinalizerDeleteDependents) {
			t.Fatalf("owner finalized while a blocking dependent remains: %v", got.Finalizers)
		}
		// Releasing the dependent's own finalizer lets the whole chain go.
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := e.c.CoreV1().ConfigMaps(ns).Patch(ctx(t), "dep", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		e.cmGone(t, ns, "dep")
		e.cmGone(t, ns, "owner")
	})

	// Pod templates and controller revisions have no object when the server
	// starts: the collector watches them from their first write on.
	t.Run("ResourcesEmptyAtStart", func(t *testing.T) {
		ns := e.namespace(t)
		tmpl := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "owner"},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}
		owner, err := e.c.CoreV1().PodTemplates(ns).Create(ctx(t), tmpl, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rev := func(name string, owners ...metav1.OwnerReference) {
			t.Helper()
			cr := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners},
				Data: runtime.RawExtension{Raw: []byte(`{}`)}, Revision: 1}
			if _, err := e.c.AppsV1().ControllerRevisions(ns).Create(ctx(t), cr, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		rev("dangling", ownedBy("v1", "PodTemplate", "nobody", "0f8c3a2e-0000-4000-8000-000000000003", false))
		rev("dep", ownedBy("v1", "PodTemplate", owner.Name, owner.UID, true))
		revGone := func(name string) {
			t.Helper()
			gone(t, "controllerrevision "+name, func(ctx context.Context) error {
				_, err := e.c.AppsV1().ControllerRevisions(ns).Get(ctx, name, metav1.GetOptions{})
				return err
			})
		}
		revGone("dangling")
		if err := e.c.CoreV1().PodTemplates(ns).Delete(ctx(t), owner.Name, metav1.DeleteOptions{PropagationPolicy: &foreground}); err != nil {
			t.Fatal(err)
		}
		revGone("dep")
		gone(t, "podtemplate owner", func(ctx context.Context) error {
			_, err := e.c.CoreV1().PodTemplates(ns).Get(ctx, owner.Name, metav1.GetOptions{})
			return err
		})
	})

	t.Run("ForegroundThenBackground", func(t *testing.T) {
		// A later delete with another policy changes the finalizers, as in
		// kube: Background drops foregroundDeletion and deletes at once.
		ns := e.namespace(t)
		owner := e.configMap(t, ns, "owner", nil)
		e.ownedConfigMap(t, ns, "dep", []string{"example.com/hold"}, cmRef(owner, true))
		e.deleteCM(t, ns, "owner", &foreground)
		e.cmStays(t, ns, "owner")
		e.deleteCM(t, ns, "owner", &background)
		e.cmGone(t, ns, "owner")
		// dep is deleted (and held by its own finalizer).
		eventually(t, gcWait, "dependent marked", func(ctx context.Context) (bool, error) {
			cm, err := e.c.CoreV1().ConfigMaps(ns).Get(ctx, "dep", metav1.GetOptions{})
			return err == nil && cm.DeletionTimestamp != nil, err
		})
	})

	t.Run("Orphan", func(t *testing.T) {
		ns := e.namespace(t)
		owner := e.configMap(t, ns, "owner", nil)
		other := e.configMap(t, ns, "other", nil)
		e.ownedConfigMap(t, ns, "dep", nil, cmRef(owner, true), cmRef(other, false))
		e.ownedSecret(t, ns, "only", cmRef(owner, false))

		e.deleteCM(t, ns, "owner", &orphan)
		e.cmGone(t, ns, "owner")
		dep := e.cmStays(t, ns, "dep")
		if len(dep.OwnerReferences) != 1 || dep.OwnerReferences[0].UID != other.UID {
			t.Fatalf("dep ownerReferences = %v, want only the other owner", dep.OwnerReferences)
		}
		s, err := e.c.CoreV1().Secrets(ns).Get(ctx(t), "only", metav1.GetOptions{})
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
		ns := e.namespace(t)
		owner := e.configMap(t, ns, "owner", nil)
		e.ownedConfigMap(t, ns, "dep", nil, cmRef(owner, false))
		yes := true
		err := e.c.CoreV1().ConfigMaps(ns).Delete(ctx(t), "owner", metav1.DeleteOptions{OrphanDependents: &yes, PropagationPolicy: &orphan})
		wantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
		if err := e.c.CoreV1().ConfigMaps(ns).Delete(ctx(t), "owner", metav1.DeleteOptions{OrphanDependents: &yes}); err != nil {
			t.Fatal(err)
		}
		e.cmGone(t, ns, "owner")
		if dep := e.cmStays(t, ns, "dep"); len(dep.OwnerReferences) != 0 {
			t.Fatalf("dep ownerReferences = %v, want none", dep.OwnerReferences)
		}
	})

	t.Run("JobDefaultOrphans", func(t *testing.T) {
		// batch/v1 jobs orphan their dependents unless told otherwise.
		ns := e.namespace(t)
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "job"},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
			}}},
		}
		job, err := e.c.BatchV1().Jobs(ns).Create(ctx(t), job, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.ownedConfigMap(t, ns, "kept", nil, ownedBy("batch/v1", "Job", job.Name, job.UID, true))
		// The job and the config map reach the collector through separate
		// informers: make sure it has seen the dependent before the owner
		// goes, or it has nothing to orphan (kube's collector too).
		e.collectorSawConfigMaps(t, ns)
		if err := e.c.BatchV1().Jobs(ns).Delete(ctx(t), job.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		gone(t, "job", func(ctx context.Context) error {
			_, err := e.c.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
			return err
		})
		if cm := e.cmStays(t, ns, "kept"); len(cm.OwnerReferences) != 0 {
			t.Fatalf("ownerReferences = %v, want none", cm.OwnerReferences)
		}
	})

	t.Run("CustomResources", func(t *testing.T) {
		// A custom resource owns a config map and is owned by one; its kind
		// is new to the collector, which finds it through discovery.
		e.createCRD(t, gcWidgetCRD)
		ns := e.namespace(t)
		widgets := e.dynamic(t).Resource(schema.GroupVersionResource{Group: "gc.example.com", Version: "v1", Resource: "gcwidgets"}).Namespace(ns)
		top := e.configMap(t, ns, "top", nil)
		w := fromYAML(t, "apiVersion: gc.example.com/v1\nkind: GCWidget\nmetadata:\n  name: w\n")
		w.SetOwnerReferences([]metav1.OwnerReference{cmRef(top, true)})
		w, err := widgets.Create(ctx(t), w, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.ownedConfigMap(t, ns, "under", nil, ownedBy("gc.example.com/v1", "GCWidget", "w", w.GetUID(), true))
		e.cmStays(t, ns, "under")

		e.deleteCM(t, ns, "top", &foreground)
		e.cmGone(t, ns, "under")
		gone(t, "widget", func(ctx context.Context) error {
			_, err := widgets.Get(ctx, "w", metav1.GetOptions{})
			return err
		})
		e.cmGone(t, ns, "top")
	})

	t.Run("CustomResourcesBackground", func(t *testing.T) {
		// The collector watches a custom resource only from its first
		// object on: a CR owned by a config map, and a config map owned
		// by a CR, both go with their owner; so does a CR whose owner
		// never existed.
		e.createCRD(t, gcGadgetCRD)
		ns := e.namespace(t)
		gadgets := e.dynamic(t).Resource(schema.GroupVersionResource{Group: "gc.example.com", Version: "v1", Resource: "gcgadgets"}).Namespace(ns)
		gadget := func(name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
			t.Helper()
			g := fromYAML(t, "apiVersion: gc.example.com/v1\nkind: GCGadget\nmetadata:\n  name: "+name+"\n")
			g.SetOwnerReferences(owners)
			g, err := gadgets.Create(ctx(t), g, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
		gadgetGone := func(name string) {
			t.Helper()
			gone(t, "gadget "+name, func(ctx context.Context) error {
				_, err := gadgets.Get(ctx, name, metav1.GetOptions{})
				return err
			})
		}

		owner := e.configMap(t, ns, "owner", nil)
		gadget("owned", cmRef(owner, false))
		e.deleteCM(t, ns, "owner", &background)
		gadgetGone("owned")

		g := gadget("owning")
		e.ownedConfigMap(t, ns, "dep", nil, ownedBy("gc.example.com/v1", "GCGadget", "owning", g.GetUID(), false))
		e.cmStays(t, ns, "dep")
		if err := gadgets.Delete(ctx(t), "owning", metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
			t.Fatal(err)
		}
		e.cmGone(t, ns, "dep")

		gadget("dangling", ownedBy("v1", "ConfigMap", "nobody", "0f8c3a2e-0000-4000-8000-000000000002", false))
		gadgetGone("dangling")
	})

	t.Run("Kubectl", func(t *testing.T) {
		ns := e.namespace(t)
		for _, cascade := range []string{"orphan", "background", "foreground"} {
			owner := e.configMap(t, ns, "owner-"+cascade, nil)
			e.ownedConfigMap(t, ns, "dep-"+cascade, nil, cmRef(owner, true))
			out, errOut, err := testkit.RunKubectl(t, e.Kubeconfig, nil, "delete", "configmap", owner.Name, "-n", ns, "--cascade="+cascade)
			if err != nil {
				t.Fatalf("kubectl delete --cascade=%s: %v\n%s%s", cascade, err, out, errOut)
			}
			e.cmGone(t, ns, owner.Name)
			if cascade == "orphan" {
				if cm := e.cmStays(t, ns, "dep-"+cascade); len(cm.OwnerReferences) != 0 {
					t.Fatalf("orphaned dependent keeps %v", cm.OwnerReferences)
				}
				continue
			}
			e.cmGone(t, ns, "dep-"+cascade)
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
