package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// jobOrphansWarning is kube-apiserver's warning on deleting a batch/v1 job
// without a propagation policy.
const jobOrphansWarning = "child pods are preserved by default when jobs are deleted; " +
	"set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"

// TestWarnings: warnings raised by storage and strategies reach the client
// as Warning headers, once each.
func TestWarnings(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	got := &e2eutil.Warnings{}
	c := e.ClientWith(t, func(cfg *rest.Config) { cfg.WarningHandler = got })
	podSpec := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "w"}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	newJob := func(name string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"set": "w"}}, Spec: batchv1.JobSpec{Template: podSpec}}
	}

	t.Run("job delete without a policy", func(t *testing.T) {
		for _, name := range []string{"default", "background", "orphan"} {
			if _, err := c.BatchV1().Jobs(ns).Create(e2eutil.Ctx(t), newJob(name), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		got.Reset()
		if err := c.BatchV1().Jobs(ns).Delete(e2eutil.Ctx(t), "default", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if got.Joined() != jobOrphansWarning {
			t.Errorf("warnings = %q, want %q", got.Joined(), jobOrphansWarning)
		}
		for name, policy := range map[string]metav1.DeletionPropagation{"background": metav1.DeletePropagationBackground, "orphan": metav1.DeletePropagationOrphan} {
			got.Reset()
			if err := c.BatchV1().Jobs(ns).Delete(e2eutil.Ctx(t), name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
				t.Fatal(err)
			}
			if got.Joined() != "" {
				t.Errorf("%s: warnings = %q, want none", name, got.Joined())
			}
		}
	})

	t.Run("job deletecollection without a policy", func(t *testing.T) {
		for _, name := range []string{"one", "two"} {
			if _, err := c.BatchV1().Jobs(ns).Create(e2eutil.Ctx(t), newJob(name), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		got.Reset()
		if err := c.BatchV1().Jobs(ns).DeleteCollection(e2eutil.Ctx(t), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "set=w"}); err != nil {
			t.Fatal(err)
		}
		if got.Joined() != jobOrphansWarning {
			t.Errorf("warnings = %q, want it once: %q", got.Joined(), jobOrphansWarning)
		}
	})

	t.Run("strategy warnings on create", func(t *testing.T) {
		want := "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; " +
			"a DNS label is recommended: [must not contain dots]"
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "dotted.name"}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w"}}, Template: podSpec}}
		d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		got.Reset()
		d, err := c.AppsV1().Deployments(ns).Create(e2eutil.Ctx(t), d, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Joined() != want {
			t.Errorf("create: warnings = %q, want %q", got.Joined(), want)
		}
		// A rejected create warns of nothing: warnings follow validation.
		bad := d.DeepCopy()
		bad.ResourceVersion, bad.Name, bad.Spec.Template.Labels = "", "other.name", nil
		got.Reset()
		if _, err := c.AppsV1().Deployments(ns).Create(e2eutil.Ctx(t), bad, metav1.CreateOptions{}); err == nil {
			t.Fatal("create with a template that misses the selector's labels succeeded")
		}
		if got.Joined() != "" {
			t.Errorf("invalid create: warnings = %q, want none", got.Joined())
		}
	})
}

// TestWarningsBounded: a request that raises more than 4 KiB of warnings
// gets them cut as kube-apiserver cuts them (see package warning).
func TestWarningsBounded(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	got := &e2eutil.Warnings{}
	c := e.ClientWith(t, func(cfg *rest.Config) { cfg.WarningHandler = got })
	// 20 unknown fields, each warned of in 316 runes: 12 fit in 4,096;
	// the 13th cuts all to 256, and three more fill 4,096.
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"many-warnings"}`
	var want []string
	for i := range 20 {
		field := fmt.Sprintf("f%02d%s", i, strings.Repeat("x", 297))
		body += fmt.Sprintf(",%q:1", field)
		want = append(want, fmt.Sprintf("unknown field %q", field))
	}
	body += "}"
	err := c.CoreV1().RESTClient().Post().Namespace(ns).Resource("configmaps").
		Param("fieldValidation", "Warn").Body([]byte(body)).SetHeader("Content-Type", "application/json").Do(e2eutil.Ctx(t)).Error()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Got) != 16 {
		t.Fatalf("got %d warnings, want 16", len(got.Got))
	}
	for i, w := range got.Got {
		if cut := string([]rune(want[i])[:256]); w != cut {
			t.Errorf("warning %d = %q, want %q", i, w, cut)
		}
	}
}
