package e2eutil

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Quota creates a ResourceQuota and waits for the quota controller to
// fill its status.
func (e *Env) Quota(t *testing.T, ns string, q *corev1.ResourceQuota) {
	t.Helper()
	if _, err := e.Clientset.CoreV1().ResourceQuotas(ns).Create(Ctx(t), q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, time.Minute, "quota status", func(ctx context.Context) (bool, error) {
		got, err := e.Clientset.CoreV1().ResourceQuotas(ns).Get(ctx, q.Name, metav1.GetOptions{})
		return err == nil && len(got.Status.Used) == len(q.Spec.Hard), nil
	})
}

func (e *Env) QuotaUsed(t *testing.T, ns, name string, res corev1.ResourceName, want string) {
	t.Helper()
	Eventually(t, time.Minute, string(res)+" used "+want, func(ctx context.Context) (bool, error) {
		q, err := e.Clientset.CoreV1().ResourceQuotas(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		u := q.Status.Used[res]
		return u.Cmp(resource.MustParse(want)) == 0, nil
	})
}
