package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLimitRanger: a namespace's LimitRange defaults a pod's containers and
// refuses what is past its max, with the annotation and messages
// kube-apiserver v1.37.2 gives for the same requests.
func TestLimitRanger(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Default: hard("cpu", "500m", "memory", "128Mi"), DefaultRequest: hard("cpu", "100m"),
			Max: hard("cpu", "1"), Min: hard("cpu", "50m")},
		{Type: corev1.LimitTypePersistentVolumeClaim, Max: hard("storage", "2Gi")},
	}}}
	if _, err := e.Clientset.CoreV1().LimitRanges(ns).Create(e2eutil.Ctx(t), lr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name string, limits corev1.ResourceList) (*corev1.Pod, error) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "x",
			Resources: corev1.ResourceRequirements{Limits: limits}}}}}
		return e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), p, metav1.CreateOptions{})
	}
	p, err := pod("p", nil)
	if err != nil {
		t.Fatal(err)
	}
	const note = "LimitRanger plugin set: cpu, memory request for container p; cpu, memory limit for container p"
	r := p.Spec.Containers[0].Resources
	if p.Annotations["kubernetes.io/limit-ranger"] != note || !r.Limits.Cpu().Equal(resource.MustParse("500m")) ||
		!r.Requests.Cpu().Equal(resource.MustParse("100m")) || !r.Requests.Memory().Equal(resource.MustParse("128Mi")) {
		t.Errorf("defaults: annotation %q, resources %+v", p.Annotations["kubernetes.io/limit-ranger"], r)
	}
	_, err = pod("p2", hard("cpu", "2"))
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "p2" is forbidden: maximum cpu usage per Container is 1, but limit is 2`)
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: hard("storage", "5Gi")}}}
	_, err = e.Clientset.CoreV1().PersistentVolumeClaims(ns).Create(e2eutil.Ctx(t), pvc, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi`)
}
