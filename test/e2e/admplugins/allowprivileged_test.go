package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"net/http"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func privilegedPodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyAlways,
		Containers: []corev1.Container{{Name: "c", Image: "busybox",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}},
	}
}

// TestAllowPrivileged: without --allow-privileged a privileged container is
// refused wherever a pod spec is written, with kube's 422 and message; with
// --allow-privileged=true it is stored.
func TestAllowPrivileged(t *testing.T) {
	t.Parallel()
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "priv"}, Spec: privilegedPodSpec()}
	_, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), pod, metav1.CreateOptions{})
	s := e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`Pod "priv" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy`)
	e2eutil.WantCause(t, s, metav1.CauseType(field.ErrorTypeForbidden), "spec.containers[0].securityContext.privileged")

	labels := map[string]string{"app": "priv"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "priv"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: privilegedPodSpec()},
	}}
	_, err = e.Clientset.AppsV1().Deployments(ns).Create(e2eutil.Ctx(t), d, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`Deployment.apps "priv" is invalid: spec.template.spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy`)

	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "priv"}, Spec: batchv1.CronJobSpec{Schedule: "* * * * *",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: privilegedPodSpec()}}}}}
	cj.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	_, err = e.Clientset.BatchV1().CronJobs(ns).Create(e2eutil.Ctx(t), cj, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`CronJob.batch "priv" is invalid: spec.jobTemplate.spec.template.spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy`)

	// An unprivileged pod is fine.
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Spec: privilegedPodSpec()}
	plain.Spec.Containers[0].SecurityContext = nil
	if _, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), plain, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating an unprivileged pod: %v", err)
	}

	allowed := e2eutil.Start(t, "--allow-privileged=true")
	ns = allowed.Namespace(t)
	if _, err := allowed.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("with --allow-privileged=true: %v", err)
	}
	d.Namespace = ""
	if _, err := allowed.Clientset.AppsV1().Deployments(ns).Create(e2eutil.Ctx(t), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("deployment with --allow-privileged=true: %v", err)
	}
}
