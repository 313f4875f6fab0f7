package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"sync"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func hard(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// TestResourceQuota: the quota controller fills status.hard and
// status.used, the plugin refuses what exceeds it with kube's messages
// (each read from kube-apiserver v1.37.2 for the same requests, its quota
// status filled by hand) and charges what it admits.
func TestResourceQuota(t *testing.T) {
	e := e2eutil.Start(t, "--controllers=*")
	ns := e.Namespace(t)
	e.Quota(t, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard("pods", "1", "configmaps", "2", "limits.cpu", "1", "count/deployments.apps", "0")}})
	// kube-root-ca.crt is the first config map.
	e.QuotaUsed(t, ns, "q", "configmaps", "1")
	e.ConfigMap(t, ns, "a", nil)
	_, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `configmaps "b" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=2, limited: configmaps=2`)

	pod := func(name, cpu string) (*corev1.Pod, error) {
		c := corev1.Container{Name: name, Image: "x"}
		if cpu != "" {
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		}
		return e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}, metav1.CreateOptions{})
	}
	_, err = pod("p", "")
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "p" is forbidden: failed quota: q: must specify limits.cpu for: p`)
	_, err = pod("p", "2")
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "p" is forbidden: exceeded quota: q, requested: limits.cpu=2, used: limits.cpu=0, limited: limits.cpu=1`)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}}}
	_, err = e.Clientset.AppsV1().Deployments(ns).Create(e2eutil.Ctx(t), d, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `deployments.apps "d" is forbidden: exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=0, limited: count/deployments.apps=0`)
	if _, err := pod("p2", "500m"); err != nil {
		t.Fatal(err)
	}
	q, err := e.Clientset.CoreV1().ResourceQuotas(ns).Get(e2eutil.Ctx(t), "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := q.Status.Used[corev1.ResourceLimitsCPU]; u.Cmp(resource.MustParse("500m")) != 0 {
		t.Errorf("limits.cpu used %s right after the create, want 500m", u.String())
	}
	_, err = pod("p3", "100m")
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1`)
	// The controller gives back what a deleted pod held.
	if err := e.Clientset.CoreV1().Pods(ns).Delete(e2eutil.Ctx(t), "p2", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	e.QuotaUsed(t, ns, "q", "pods", "0")
	e.QuotaUsed(t, ns, "q", "limits.cpu", "0")
}

// TestResourceQuotaScopes: a BestEffort quota of no pods refuses only
// best-effort pods.
func TestResourceQuotaScopes(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.Quota(t, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "besteffort"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard("pods", "0"), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}}})
	be := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "be"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	_, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), be, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "be" is forbidden: exceeded quota: besteffort, requested: pods=1, used: pods=0, limited: pods=0`)
	burst := be.DeepCopy()
	burst.Name = "burstable"
	burst.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Mi")}
	if _, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), burst, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a pod out of the quota's scope: %v", err)
	}
}

// TestResourceQuotaConcurrentCreates: creates racing for the last places of
// a quota never together exceed it.
func TestResourceQuotaConcurrentCreates(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	const limit, racers = 5, 20
	e.Quota(t, ns, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: hard("count/secrets", "5")}})
	var created, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Sprintf("s%d", i)}}
			_, err := e.Clientset.CoreV1().Secrets(ns).Create(e2eutil.Ctx(t), s, metav1.CreateOptions{})
			switch {
			case err == nil:
				created.Add(1)
			case apierrors.IsForbidden(err):
				refused.Add(1)
			default:
				t.Errorf("create: %v", err)
			}
		})
	}
	wg.Wait()
	if created.Load() != limit || refused.Load() != racers-limit {
		t.Errorf("%d created and %d refused, want %d and %d", created.Load(), refused.Load(), limit, racers-limit)
	}
	list, err := e.Clientset.CoreV1().Secrets(ns).List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil || len(list.Items) != limit {
		t.Errorf("%d secrets stored (%v), want %d", len(list.Items), err, limit)
	}
	e.QuotaUsed(t, ns, "q", "count/secrets", "5")
}
