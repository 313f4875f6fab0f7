package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	e := start(t)
	ns := e.namespace(t)
	pvcs, pvs := e.c.CoreV1().PersistentVolumeClaims(ns), e.c.CoreV1().PersistentVolumes()
	pvc, err := pvcs.Create(ctx(t), claim("held", "", "1Gi"), metav1.CreateOptions{})
	if err != nil || !slices.Equal(pvc.Finalizers, []string{"kubernetes.io/pvc-protection"}) {
		t.Fatalf("claim finalizers %v (%v)", pvc.Finalizers, err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "user"}, Spec: corev1.PodSpec{NodeName: "n1",
		Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		Volumes:    []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "held"}}}}}}
	if _, err := e.c.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pvcs.Delete(ctx(t), "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// An unscheduled claim with no user goes at once (through the loop).
	if _, err := pvcs.Create(ctx(t), claim("free", "", "1Gi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pvcs.Delete(ctx(t), "free", metav1.DeleteOptions{}); err != nil {
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
	eventually(t, 30*time.Second, "unused claim deleted", gone(func(ctx context.Context) error {
		_, err := pvcs.Get(ctx, "free", metav1.GetOptions{})
		return err
	}))
	held, err := pvcs.Get(ctx(t), "held", metav1.GetOptions{})
	if err != nil || held.DeletionTimestamp == nil {
		t.Fatalf("claim in use: %v, deletionTimestamp %v", err, held.GetDeletionTimestamp())
	}
	if err := e.c.CoreV1().Pods(ns).Delete(ctx(t), "user", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "claim deleted once its pod went", gone(func(ctx context.Context) error {
		_, err := pvcs.Get(ctx, "held", metav1.GetOptions{})
		return err
	}))

	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: unique("pv")}, Spec: corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/x"}}}}
	pv, err = pvs.Create(ctx(t), pv, metav1.CreateOptions{})
	if err != nil || !slices.Equal(pv.Finalizers, []string{"kubernetes.io/pv-protection"}) {
		t.Fatalf("volume finalizers %v (%v)", pv.Finalizers, err)
	}
	pv.Status.Phase = corev1.VolumeBound
	if pv, err = pvs.UpdateStatus(ctx(t), pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pvs.Delete(ctx(t), pv.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pv, err = pvs.Get(ctx(t), pv.Name, metav1.GetOptions{})
	if err != nil || pv.DeletionTimestamp == nil {
		t.Fatalf("bound volume: %v", err)
	}
	pv.Status.Phase = corev1.VolumeReleased
	if _, err := pvs.UpdateStatus(ctx(t), pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "released volume deleted", gone(func(ctx context.Context) error {
		_, err := pvs.Get(ctx, pv.Name, metav1.GetOptions{})
		return err
	}))
}

// TestStorageProtectionLoopsOff: without the loops (as kube-apiserver
// alone), a claim being deleted keeps its finalizer and stays.
func TestStorageProtectionLoopsOff(t *testing.T) {
	e := start(t, "--controllers=*,-pvc-protection,-root-ca-cert-publisher")
	ns := e.namespace(t)
	pvcs := e.c.CoreV1().PersistentVolumeClaims(ns)
	if _, err := pvcs.Create(ctx(t), claim("c", "", "1Gi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pvcs.Delete(ctx(t), "c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc, err := pvcs.Get(ctx(t), "c", metav1.GetOptions{})
	if err != nil || pvc.DeletionTimestamp == nil || !slices.Equal(pvc.Finalizers, []string{"kubernetes.io/pvc-protection"}) {
		t.Fatalf("claim %v: %+v", err, pvc.ObjectMeta)
	}
}

// TestPersistentVolumeClaimResize: a claim grows only when bound and its
// class allows expansion, with kube's messages; shrinking or keeping the
// size is left to validation.
func TestPersistentVolumeClaimResize(t *testing.T) {
	e := start(t)
	ns := e.namespace(t)
	for name, allow := range map[string]bool{"fixed": false, "grows": true} {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "x", AllowVolumeExpansion: ptr.To(allow)}
		if _, err := e.c.StorageV1().StorageClasses().Create(ctx(t), sc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pvcs := e.c.CoreV1().PersistentVolumeClaims(ns)
	grow := func(name string, bound bool) error {
		pvc, err := pvcs.Get(ctx(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if bound {
			pvc.Status.Phase = corev1.ClaimBound
			if pvc, err = pvcs.UpdateStatus(ctx(t), pvc, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		_, err = pvcs.Update(ctx(t), pvc, metav1.UpdateOptions{})
		return err
	}
	for _, c := range []*corev1.PersistentVolumeClaim{claim("unbound", "grows", "1Gi"), claim("fixed", "fixed", "1Gi"), claim("grows", "grows", "1Gi")} {
		if _, err := pvcs.Create(ctx(t), c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Validation, which runs first, refuses it before the plugin sees it,
	// in kube too.
	wantStatus(t, grow("unbound", false), 422, metav1.StatusReasonInvalid, "")
	wantStatus(t, grow("fixed", true), 403, metav1.StatusReasonForbidden,
		`persistentvolumeclaims "fixed" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`)
	if err := grow("grows", true); err != nil {
		t.Fatalf("claim of an expandable class: %v", err)
	}
}

// TestPodTopologyLabels: a pod created on a node, or bound to one, gains
// the node's zone and region labels and nothing else of them.
func TestPodTopologyLabels(t *testing.T) {
	e := start(t)
	ns := e.namespace(t)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: unique("node"), Labels: map[string]string{
		"topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r1", "kubernetes.io/hostname": "h"}}}
	if _, err := e.c.CoreV1().Nodes().Create(ctx(t), node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"app": "a", "topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r1"}
	pod := func(name, nodeName string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "a"}},
			Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	}
	p, err := e.c.CoreV1().Pods(ns).Create(ctx(t), pod("on-node", node.Name), metav1.CreateOptions{})
	if err != nil || !maps(p.Labels, want) {
		t.Errorf("pod created on the node: labels %v (%v), want %v", p.GetLabels(), err, want)
	}
	if _, err := e.c.CoreV1().Pods(ns).Create(ctx(t), pod("bound", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "bound"}, Target: corev1.ObjectReference{Kind: "Node", Name: node.Name}}
	if err := e.c.CoreV1().Pods(ns).Bind(ctx(t), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if p, err = e.c.CoreV1().Pods(ns).Get(ctx(t), "bound", metav1.GetOptions{}); err != nil || !maps(p.Labels, want) {
		t.Errorf("bound pod: labels %v (%v), want %v", p.GetLabels(), err, want)
	}
	if p, err = e.c.CoreV1().Pods(ns).Create(ctx(t), pod("elsewhere", "no-such-node"), metav1.CreateOptions{}); err != nil || !maps(p.Labels, map[string]string{"app": "a"}) {
		t.Errorf("pod on a missing node: labels %v (%v)", p.GetLabels(), err)
	}
}
