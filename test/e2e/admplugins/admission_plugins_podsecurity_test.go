package admplugins

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/test/e2e/e2eutil"
)

// TestPodSecurity: the pod-security.kubernetes.io labels of a namespace
// enforce and warn as in kube-apiserver v1.37.2 (each message and warning
// read from it for the same requests).
func TestPodSecurity(t *testing.T) {
	e := e2eutil.Start(t)
	warns := &e2eutil.Warnings{}
	c := e.ClientWith(t, func(cfg *rest.Config) { cfg.WarningHandler = warns })
	hostNet := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{Name: name, Image: "x"}}}}
	}
	ns := e.Namespace(t)
	for _, name := range []string{"old", "old2"} {
		if _, err := c.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), hostNet(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// PodSecurity reads pods and namespaces from the watch cache, as kube
	// reads them from informers: each step waits until the cache has what
	// the step before wrote.
	e2eutil.Eventually(t, 30*time.Second, "pods in the watch cache", func(ctx context.Context) (bool, error) {
		l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		return err == nil && len(l.Items) == 2, err
	})
	label := func(ns string, kv map[string]string) error {
		n, err := c.CoreV1().Namespaces().Get(e2eutil.Ctx(t), ns, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for k, v := range kv {
			n.Labels[k] = v
		}
		_, err = c.CoreV1().Namespaces().Update(e2eutil.Ctx(t), n, metav1.UpdateOptions{})
		return err
	}
	warns.Reset()
	if err := label(ns, map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}); err != nil {
		t.Fatal(err)
	}
	if want := `existing pods in namespace "` + ns + `" violate the new PodSecurity enforce level "baseline:latest"` + "\n" +
		`old (and 1 other pod): host namespaces`; warns.Joined() != want {
		t.Errorf("warnings %q, want %q", warns.Joined(), want)
	}
	e2eutil.Eventually(t, 30*time.Second, "enforce label in force", func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().Pods(ns).Create(ctx, hostNet("p"), metav1.CreateOptions{DryRun: e2eutil.DryRun})
		return err != nil, nil
	})
	_, err := c.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), hostNet("p"), metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "p" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`)

	err = label(ns, map[string]string{"pod-security.kubernetes.io/warn": "bogus"})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `Namespace "`+ns+`" is invalid: metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "bogus": must be one of privileged, baseline, restricted`)

	warned := e.Namespace(t)
	if err := label(warned, map[string]string{"pod-security.kubernetes.io/warn": "restricted"}); err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}}}}
	e2eutil.Eventually(t, 30*time.Second, "warn label in force", func(ctx context.Context) (bool, error) {
		warns.Reset()
		_, err := c.AppsV1().Deployments(warned).Create(ctx, d, metav1.CreateOptions{DryRun: e2eutil.DryRun})
		return err == nil && warns.Joined() != "", err
	})
	warns.Reset()
	if _, err := c.AppsV1().Deployments(warned).Create(e2eutil.Ctx(t), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const want = `would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "x" must set securityContext.allowPrivilegeEscalation=false), ` +
		`unrestricted capabilities (container "x" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "x" must set securityContext.runAsNonRoot=true), ` +
		`seccompProfile (pod or container "x" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	if warns.Joined() != want {
		t.Errorf("deployment warnings %q\nwant %q", warns.Joined(), want)
	}
}
