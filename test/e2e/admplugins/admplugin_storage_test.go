package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

func claim(name, class, size string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName: ptr.To(class),
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}
}

// TestStorageObjectInUseProtection: new claims and volumes get kube's
// protection finalizers; a claim a scheduled pod mounts, and a bound
// volume, stay while deleted until the pod goes or the volume is released,
// then the in-process pvc-protection and pv-protection loops let them go.
func TestStorageObjectInUseProtection(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	pvcs, pvs := e.Clientset.CoreV1().PersistentVolumeClaims(ns), e.Clientset.CoreV1().PersistentVolumes()
	pvc, err := pvcs.Create(e2eutil.Ctx(t), claim("held", "", "1Gi"), metav1.CreateOptions{})
	if err != nil || !slices.Equal(pvc.Finalizers, []string{"kubernetes.io/pvc-protection"}) {
		t.Fatalf("claim finalizers %v (%v)", pvc.Finalizers, err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "user"}, Spec: corev1.PodSpec{NodeName: "n1",
		Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		Volumes:    []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "held"}}}}}}
	if _, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pvcs.Delete(e2eutil.Ctx(t), "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// An unscheduled claim with no user goes at once (through the loop).
	if _, err := pvcs.Create(e2eutil.Ctx(t), claim("free", "", "1Gi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pvcs.Delete(e2eutil.Ctx(t), "free", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone := func(get func(context.Context) error) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			if err := get(ctx); !apierrors.IsNotFound(err) {
				return false, err
			}
			return true, nil
		}
	}
	e2eutil.Eventually(t, 30*time.Second, "unused claim deleted", gone(func(ctx context.Context) error {
		_, err := pvcs.Get(ctx, "free", metav1.GetOptions{})
		return err
	}))
	held, err := pvcs.Get(e2eutil.Ctx(t), "held", metav1.GetOptions{})
	if err != nil || held.DeletionTimestamp == nil {
		t.Fatalf("claim in use: %v, deletionTimestamp %v", err, held.GetDeletionTimestamp())
	}
	if err := e.Clientset.CoreV1().Pods(ns).Delete(e2eutil.Ctx(t), "user", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 30*time.Second, "claim deleted once its pod went", gone(func(ctx context.Context) error {
		_, err := pvcs.Get(ctx, "held", metav1.GetOptions{})
		return err
	}))

	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("pv")}, Spec: corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/x"}}}}
	pv, err = pvs.Create(e2eutil.Ctx(t), pv, metav1.CreateOptions{})
	if err != nil || !slices.Equal(pv.Finalizers, []string{"kubernetes.io/pv-protection"}) {
		t.Fatalf("volume finalizers %v (%v)", pv.Finalizers, err)
	}
	pv.Status.Phase = corev1.VolumeBound
	if pv, err = pvs.UpdateStatus(e2eutil.Ctx(t), pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pvs.Delete(e2eutil.Ctx(t), pv.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pv, err = pvs.Get(e2eutil.Ctx(t), pv.Name, metav1.GetOptions{})
	if err != nil || pv.DeletionTimestamp == nil {
		t.Fatalf("bound volume: %v", err)
	}
	pv.Status.Phase = corev1.VolumeReleased
	if _, err := pvs.UpdateStatus(e2eutil.Ctx(t), pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 30*time.Second, "released volume deleted", gone(func(ctx context.Context) error {
		_, err := pvs.Get(ctx, pv.Name, metav1.GetOptions{})
		return err
	}))
}

// TestStorageProtectionLoopsOff: without the loops (as kube-apiserver
// alone), a claim being deleted keeps its finalizer and stays.
func TestStorageProtectionLoopsOff(t *testing.T) {
	e := e2eutil.Start(t, "--controllers=*,-pvc-protection,-root-ca-cert-publisher")
	ns := e.Namespace(t)
	pvcs := e.Clientset.CoreV1().PersistentVolumeClaims(ns)
	if _, err := pvcs.Create(e2eutil.Ctx(t), claim("c", "", "1Gi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pvcs.Delete(e2eutil.Ctx(t), "c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc, err := pvcs.Get(e2eutil.Ctx(t), "c", metav1.GetOptions{})
	if err != nil || pvc.DeletionTimestamp == nil || !slices.Equal(pvc.Finalizers, []string{"kubernetes.io/pvc-protection"}) {
		t.Fatalf("claim %v: %+v", err, pvc.ObjectMeta)
	}
}

// TestPersistentVolumeClaimResize: a claim grows only when bound and its
// class allows expansion, with kube's messages; shrinking or keeping the
// size is left to validation.
func TestPersistentVolumeClaimResize(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	for name, allow := range map[string]bool{"fixed": false, "grows": true} {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "x", AllowVolumeExpansion: ptr.To(allow)}
		if _, err := e.Clientset.StorageV1().StorageClasses().Create(e2eutil.Ctx(t), sc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pvcs := e.Clientset.CoreV1().PersistentVolumeClaims(ns)
	// The pvc-protection loop writes a bound claim's Unused condition:
	// grow the claim as stored.
	grow := func(name string, bound bool) error {
		if bound {
			pvc, err := pvcs.Get(e2eutil.Ctx(t), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			pvc.Status.Phase = corev1.ClaimBound
			if _, err = pvcs.UpdateStatus(e2eutil.Ctx(t), pvc, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			pvc, err := pvcs.Get(e2eutil.Ctx(t), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
			_, err = pvcs.Update(e2eutil.Ctx(t), pvc, metav1.UpdateOptions{})
			return err
		})
	}
	for _, c := range []*corev1.PersistentVolumeClaim{claim("unbound", "grows", "1Gi"), claim("fixed", "fixed", "1Gi"), claim("grows", "grows", "1Gi")} {
		if _, err := pvcs.Create(e2eutil.Ctx(t), c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Validation, which runs first, refuses it before the plugin sees it,
	// in kube too.
	e2eutil.WantStatus(t, grow("unbound", false), 422, metav1.StatusReasonInvalid, "")
	e2eutil.WantStatus(t, grow("fixed", true), 403, metav1.StatusReasonForbidden,
		`persistentvolumeclaims "fixed" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`)
	if err := grow("grows", true); err != nil {
		t.Fatalf("claim of an expandable class: %v", err)
	}
}

// TestPodTopologyLabels: a pod created on a node, or bound to one, gains
// the node's zone and region labels and nothing else of them.
func TestPodTopologyLabels(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("node"), Labels: map[string]string{
		"topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r1", "kubernetes.io/hostname": "h"}}}
	if _, err := e.Clientset.CoreV1().Nodes().Create(e2eutil.Ctx(t), node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"app": "a", "topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r1"}
	pod := func(name, nodeName string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "a"}},
			Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	}
	p, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), pod("on-node", node.Name), metav1.CreateOptions{})
	if err != nil || !e2eutil.Maps(p.Labels, want) {
		t.Errorf("pod created on the node: labels %v (%v), want %v", p.GetLabels(), err, want)
	}
	if _, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), pod("bound", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "bound"}, Target: corev1.ObjectReference{Kind: "Node", Name: node.Name}}
	if err := e.Clientset.CoreV1().Pods(ns).Bind(e2eutil.Ctx(t), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if p, err = e.Clientset.CoreV1().Pods(ns).Get(e2eutil.Ctx(t), "bound", metav1.GetOptions{}); err != nil || !e2eutil.Maps(p.Labels, want) {
		t.Errorf("bound pod: labels %v (%v), want %v", p.GetLabels(), err, want)
	}
	if p, err = e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), pod("elsewhere", "no-such-node"), metav1.CreateOptions{}); err != nil || !e2eutil.Maps(p.Labels, map[string]string{"app": "a"}) {
		t.Errorf("pod on a missing node: labels %v (%v)", p.GetLabels(), err)
	}
}

// TestVolumeAttributesClassProtection: a new VolumeAttributesClass gets
// kube's vac-protection finalizer; one being deleted stays while a claim or
// volume names it, and the in-process volumeattributesclass-protection loop
// lets it go once none does.
func TestVolumeAttributesClassProtection(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	vacs := e.Clientset.StorageV1().VolumeAttributesClasses()
	vac, err := vacs.Create(e2eutil.Ctx(t), &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("gold")}, DriverName: "x",
		Parameters: map[string]string{"iops": "100"}}, metav1.CreateOptions{})
	if err != nil || !slices.Equal(vac.Finalizers, []string{"kubernetes.io/vac-protection"}) {
		t.Fatalf("class finalizers %v (%v)", vac.Finalizers, err)
	}
	c := claim("c", "", "1Gi")
	c.Spec.VolumeAttributesClassName = ptr.To(vac.Name)
	if _, err := e.Clientset.CoreV1().PersistentVolumeClaims(ns).Create(e2eutil.Ctx(t), c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("pv")}, Spec: corev1.PersistentVolumeSpec{
		Capacity:                  corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:               []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		VolumeAttributesClassName: ptr.To(vac.Name),
		PersistentVolumeSource:    corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "x", VolumeHandle: "h"}}}}
	if _, err := e.Clientset.CoreV1().PersistentVolumes().Create(e2eutil.Ctx(t), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := vacs.Delete(e2eutil.Ctx(t), vac.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The claim goes (nothing mounts it); the volume still names the class.
	if err := e.Clientset.CoreV1().PersistentVolumeClaims(ns).Delete(e2eutil.Ctx(t), "c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 30*time.Second, "claim deleted", func(ctx context.Context) (bool, error) {
		_, err := e.Clientset.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "c", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if got, err := vacs.Get(e2eutil.Ctx(t), vac.Name, metav1.GetOptions{}); err != nil || got.DeletionTimestamp == nil {
		t.Fatalf("class a volume names: %v, deletionTimestamp %v", err, got.GetDeletionTimestamp())
	}
	if err := e.Clientset.CoreV1().PersistentVolumes().Delete(e2eutil.Ctx(t), pv.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 30*time.Second, "class deleted once nothing names it", func(ctx context.Context) (bool, error) {
		_, err := vacs.Get(ctx, vac.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// TestClaimUnusedCondition: the pvc-protection loop keeps a bound claim's
// Unused condition as kube's does (PersistentVolumeClaimUnusedSinceTime,
// on by default in v1.37): True while no pod that has not terminated
// names it, False while one does.
func TestClaimUnusedCondition(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	pvcs := e.Clientset.CoreV1().PersistentVolumeClaims(ns)
	pvc, err := pvcs.Create(e2eutil.Ctx(t), claim("c", "", "1Gi"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvc.Status.Phase = corev1.ClaimBound
	if _, err := pvcs.UpdateStatus(e2eutil.Ctx(t), pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	unused := func(status corev1.ConditionStatus, reason, message string) {
		t.Helper()
		var got []corev1.PersistentVolumeClaimCondition
		e2eutil.Eventually(t, 30*time.Second, "Unused="+string(status), func(ctx context.Context) (bool, error) {
			c, err := pvcs.Get(ctx, "c", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			got = c.Status.Conditions
			return len(got) == 1 && got[0].Status == status, nil
		})
		if c := got[0]; c.Type != corev1.PersistentVolumeClaimUnused || c.Reason != reason || c.Message != message || c.LastTransitionTime.IsZero() {
			t.Fatalf("condition %+v, want Unused=%s %s %q", c, status, reason, message)
		}
	}
	unused(corev1.ConditionTrue, "NoPodsUsingPVC", "No pods are currently referencing this PVC")
	pod := plainPod("user")
	pod.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
	if _, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	unused(corev1.ConditionFalse, "PodUsingPVC", "A pod is currently referencing this PVC")
	if err := e.Clientset.CoreV1().Pods(ns).Delete(e2eutil.Ctx(t), "user", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	unused(corev1.ConditionTrue, "NoPodsUsingPVC", "No pods are currently referencing this PVC")
}
