package e2e

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// TestPodSecurity: the pod-security.kubernetes.io labels of a namespace
// enforce and warn as in kube-apiserver v1.37.2 (each message and warning
// read from it for the same requests).
func TestPodSecurity(t *testing.T) {
	e := start(t)
	warns := &warnings{}
	c := e.clientWith(t, func(cfg *rest.Config) { cfg.WarningHandler = warns })
	hostNet := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{Name: name, Image: "x"}}}}
	}
	ns := e.namespace(t)
	for _, name := range []string{"old", "old2"} {
		if _, err := c.CoreV1().Pods(ns).Create(ctx(t), hostNet(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	label := func(ns string, kv map[string]string) error {
		n, err := c.CoreV1().Namespaces().Get(ctx(t), ns, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for k, v := range kv {
			n.Labels[k] = v
		}
		_, err = c.CoreV1().Namespaces().Update(ctx(t), n, metav1.UpdateOptions{})
		return err
	}
	warns.reset()
	if err := label(ns, map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}); err != nil {
		t.Fatal(err)
	}
	if want := `existing pods in namespace "` + ns + `" violate the new PodSecurity enforce level "baseline:latest"` + "\n" +
		`old (and 1 other pod): host namespaces`; warns.joined() != want {
		t.Errorf("warnings %q, want %q", warns.joined(), want)
	}
	_, err := c.CoreV1().Pods(ns).Create(ctx(t), hostNet("p"), metav1.CreateOptions{})
	wantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "p" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`)

	err = label(ns, map[string]string{"pod-security.kubernetes.io/warn": "bogus"})
	wantStatus(t, err, 422, metav1.StatusReasonInvalid, `Namespace "`+ns+`" is invalid: metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "bogus": must be one of privileged, baseline, restricted`)

	warned := e.namespace(t)
	if err := label(warned, map[string]string{"pod-security.kubernetes.io/warn": "restricted"}); err != nil {
		t.Fatal(err)
	}
	warns.reset()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}}}}
	if _, err := c.AppsV1().Deployments(warned).Create(ctx(t), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const want = `would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "x" must set securityContext.allowPrivilegeEscalation=false), ` +
		`unrestricted capabilities (container "x" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "x" must set securityContext.runAsNonRoot=true), ` +
		`seccompProfile (pod or container "x" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	if warns.joined() != want {
		t.Errorf("deployment warnings %q\nwant %q", warns.joined(), want)
	}
}
