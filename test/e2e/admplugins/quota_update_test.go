package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// TestResourceQuotaUpdates: an update is charged what it adds, at once,
// as kube charges it: a service turning LoadBalancer, a claim growing; an
// update past the quota is refused with kube's message and not stored.
// Without the pvc-protection loop: its write of the bound claim's Unused
// condition can make the growth conflict after quota charged it, which
// charges it twice until the quota loop recounts (kube does the same).
func TestResourceQuotaUpdates(t *testing.T) {
	e := e2eutil.Start(t, "--controllers=*,-persistentvolumeclaim-protection-controller")
	ns := e.Namespace(t)
	e.Quota(t, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard("services.loadbalancers", "1", "services.nodeports", "2", "requests.storage", "3Gi")}})
	ports := func(n int) []corev1.ServicePort {
		var out []corev1.ServicePort
		for i := range n {
			out = append(out, corev1.ServicePort{Name: e2eutil.Sprintf("p%d", i), Port: int32(80 + i), TargetPort: intstr.FromInt32(8080)})
		}
		return out
	}
	svcs := e.Clientset.CoreV1().Services(ns)
	svc, err := svcs.Create(e2eutil.Ctx(t), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: corev1.ServiceSpec{Ports: ports(3)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lb := svc.DeepCopy()
	lb.Spec.Type = corev1.ServiceTypeLoadBalancer
	_, err = svcs.Update(e2eutil.Ctx(t), lb, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden,
		`services "s" is forbidden: exceeded quota: q, requested: services.nodeports=3, used: services.nodeports=0, limited: services.nodeports=2`)
	np := svc.DeepCopy()
	np.Spec.Type = corev1.ServiceTypeNodePort
	np.Spec.Ports = ports(2)
	if _, err := svcs.Update(e2eutil.Ctx(t), np, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	q, err := e.Clientset.CoreV1().ResourceQuotas(ns).Get(e2eutil.Ctx(t), "q", metav1.GetOptions{})
	if u := q.Status.Used["services.nodeports"]; err != nil || u.Cmp(resource.MustParse("2")) != 0 {
		t.Fatalf("node ports used right after the update: %s (%v), want 2", u.String(), err)
	}

	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("grows")}, Provisioner: "x", AllowVolumeExpansion: ptr.To(true)}
	if _, err := e.Clientset.StorageV1().StorageClasses().Create(e2eutil.Ctx(t), sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvcs := e.Clientset.CoreV1().PersistentVolumeClaims(ns)
	pvc, err := pvcs.Create(e2eutil.Ctx(t), claim("c", sc.Name, "1Gi"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvc.Status.Phase = corev1.ClaimBound
	if pvc, err = pvcs.UpdateStatus(e2eutil.Ctx(t), pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	grow := func(size string) error {
		c := pvc.DeepCopy()
		c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(size)
		got, err := pvcs.Update(e2eutil.Ctx(t), c, metav1.UpdateOptions{})
		if err == nil {
			pvc = got
		}
		return err
	}
	if err := grow("2Gi"); err != nil {
		t.Fatal(err)
	}
	q, err = e.Clientset.CoreV1().ResourceQuotas(ns).Get(e2eutil.Ctx(t), "q", metav1.GetOptions{})
	if u := q.Status.Used[corev1.ResourceRequestsStorage]; err != nil || u.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Fatalf("storage used right after the growth: %s (%v), want 2Gi", u.String(), err)
	}
	e2eutil.WantStatus(t, grow("4Gi"), 403, metav1.StatusReasonForbidden,
		`persistentvolumeclaims "c" is forbidden: exceeded quota: q, requested: requests.storage=2Gi, used: requests.storage=2Gi, limited: requests.storage=3Gi`)
	if got, err := pvcs.Get(e2eutil.Ctx(t), "c", metav1.GetOptions{}); err != nil || !got.Spec.Resources.Requests.Storage().Equal(resource.MustParse("2Gi")) {
		t.Fatalf("refused growth stored: %v (%v)", got.Spec.Resources.Requests, err)
	}
}
