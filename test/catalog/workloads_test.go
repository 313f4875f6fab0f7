// Package catalog tests the built-in API catalog end to end: defaults,
// validation and subresources of each resource, through client-go.
package catalog

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/internal/testkit"
)

var ctx = context.Background()

func podTemplate(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
	}
}

func deployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(labels),
		},
	}
}

func TestDeploymentDefaultsValidationAndScale(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	d, err := c.AppsV1().Deployments("default").Create(ctx, deployment("web"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType ||
		d.Spec.Strategy.RollingUpdate.MaxSurge.String() != "25%" || *d.Spec.RevisionHistoryLimit != 10 ||
		*d.Spec.ProgressDeadlineSeconds != 600 || d.Generation != 1 {
		t.Fatalf("deployment defaults: %+v generation %d", d.Spec, d.Generation)
	}
	pod := d.Spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyAlways || pod.DNSPolicy != corev1.DNSClusterFirst ||
		pod.SchedulerName != "default-scheduler" || *pod.TerminationGracePeriodSeconds != 30 ||
		pod.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent || pod.Containers[0].TerminationMessagePath != "/dev/termination-log" {
		t.Fatalf("pod template defaults: %+v", pod)
	}

	bad := deployment("bad")
	bad.Spec.Template.Labels = map[string]string{"app": "other"}
	_, err = c.AppsV1().Deployments("default").Create(ctx, bad, metav1.CreateOptions{})
	assertInvalid(t, err, "spec.template.metadata.labels")

	scale, err := c.AppsV1().Deployments("default").GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil || scale.Spec.Replicas != 1 || scale.Status.Selector != "app=web" {
		t.Fatalf("GetScale = %+v, %v", scale, err)
	}
	scale.Spec.Replicas = 4
	if _, err := c.AppsV1().Deployments("default").UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	d, _ = c.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	if *d.Spec.Replicas != 4 || d.Generation != 2 {
		t.Fatalf("after scale: replicas %d generation %d, want 4 and 2", *d.Spec.Replicas, d.Generation)
	}
	scale.Spec.Replicas = -1
	_, err = c.AppsV1().Deployments("default").UpdateScale(ctx, "web", scale, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) && !apierrors.IsConflict(err) {
		t.Fatalf("negative scale: %v, want 422 (or a conflict on the stale version)", err)
	}

	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "x": "y"}}
	d.Spec.Template.Labels = map[string]string{"app": "web", "x": "y"}
	_, err = c.AppsV1().Deployments("default").Update(ctx, d, metav1.UpdateOptions{})
	assertInvalid(t, err, "spec.selector")
}

func TestPodLifecycleBindingAndEviction(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: podTemplate(nil).Spec}
	got, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != corev1.PodPending || got.Status.QOSClass != corev1.PodQOSBestEffort || got.Spec.EnableServiceLinks == nil {
		t.Fatalf("pod status/defaults: %+v", got.Status)
	}
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}
	if err := c.CoreV1().Pods("default").Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = c.CoreV1().Pods("default").Bind(ctx, binding, metav1.CreateOptions{})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `already assigned to node "n1"`) {
		t.Fatalf("second binding: %v, want 409", err)
	}
	got, _ = c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	if got.Spec.NodeName != "n1" {
		t.Fatalf("nodeName = %q after binding", got.Spec.NodeName)
	}
	list, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("field selector spec.nodeName: %v items, %v", len(list.Items), err)
	}

	// a scheduled pod is deleted gracefully: it stays, marked, for 30s
	if err := c.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ = c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	if got.DeletionTimestamp == nil || *got.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("graceful delete: deletionTimestamp %v grace %v", got.DeletionTimestamp, got.DeletionGracePeriodSeconds)
	}
	zero := int64(0)
	if err := c.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("pod after delete with grace 0: %v", err)
	}

	if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	if err := c.CoreV1().Pods("default").EvictV1(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("unscheduled pod after eviction: %v, want gone", err)
	}
}

func TestJobsStatefulSetsAndReplicationControllers(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}, Spec: batchv1.JobSpec{Template: podTemplate(nil)}}
	job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	got, err := c.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.BackoffLimit != 6 || *got.Spec.Completions != 1 || got.Spec.Selector == nil ||
		got.Spec.Template.Labels["batch.kubernetes.io/job-name"] != "j" {
		t.Fatalf("job defaults: %+v", got.Spec)
	}
	got.Spec.Template.Spec.Containers[0].Image = "other"
	_, err = c.BatchV1().Jobs("default").Update(ctx, got, metav1.UpdateOptions{})
	assertInvalid(t, err, "spec.template")

	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: appsv1.StatefulSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, Template: podTemplate(map[string]string{"app": "db"}),
	}}
	if _, err := c.AppsV1().StatefulSets("default").Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	scaleTo(t, c, "statefulsets", "db", 3)

	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc"}, Spec: corev1.ReplicationControllerSpec{
		Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: podTemplate(nil).Spec},
	}}
	gotRC, err := c.CoreV1().ReplicationControllers("default").Create(ctx, rc, metav1.CreateOptions{})
	if err != nil || gotRC.Spec.Selector["a"] != "b" || *gotRC.Spec.Replicas != 1 {
		t.Fatalf("rc defaults: %+v, %v", gotRC, err)
	}
	scaleTo(t, c, "replicationcontrollers", "rc", 2)
}

func scaleTo(t *testing.T, c kubernetes.Interface, resource, name string, n int32) {
	t.Helper()
	body := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: autoscalingv1.ScaleSpec{Replicas: n}}
	out := &autoscalingv1.Scale{}
	group := "/apis/apps/v1"
	if resource == "replicationcontrollers" {
		group = "/api/v1"
	}
	err := c.CoreV1().RESTClient().Put().AbsPath(group, "namespaces", "default", resource, name, "scale").Body(body).Do(ctx).Into(out)
	if err != nil || out.Spec.Replicas != n {
		t.Fatalf("scale %s/%s to %d: %+v, %v", resource, name, n, out, err)
	}
}

// assertInvalid checks err is 422 Invalid with a cause at field.
func assertInvalid(t *testing.T, err error, field string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want 422 Invalid", err)
	}
	status := err.(apierrors.APIStatus).Status()
	for _, c := range status.Details.Causes {
		if strings.HasPrefix(c.Field, field) {
			return
		}
	}
	t.Fatalf("422 without a cause at %s: %+v", field, status.Details.Causes)
}

// A client cannot set metadata.generation: the server keeps it, and bumps
// it only when the spec changes.
func TestGenerationIsTheServers(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	d, err := c.AppsV1().Deployments("default").Create(ctx, deployment("gen"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Generation = 42
	d.Labels = map[string]string{"touched": "yes"}
	d, err = c.AppsV1().Deployments("default").Update(ctx, d, metav1.UpdateOptions{})
	if err != nil || d.Generation != 1 {
		t.Fatalf("generation after a metadata update = %d (%v), want 1", d.Generation, err)
	}
}
