package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNamespaceExistsAndExtendedResources: with NamespaceExists (and
// NamespaceLifecycle off) a write into a missing namespace gets the
// namespace's 404; ExtendedResourceToleration gives a pod asking for an
// extended resource its NoSchedule toleration, once.
func TestNamespaceExistsAndExtendedResources(t *testing.T) {
	e := e2eutil.Start(t, "--disable-admission-plugins=NamespaceLifecycle", "--enable-admission-plugins=NamespaceExists,ExtendedResourceToleration")
	_, err := e.Clientset.CoreV1().ConfigMaps("nope").Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `namespaces "nope" not found`)

	ns := e.Namespace(t)
	gpu := corev1.ResourceList{"example.com/gpu": resource.MustParse("1"), corev1.ResourceCPU: resource.MustParse("1")}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		Containers:     []corev1.Container{{Name: "c", Image: "x", Resources: corev1.ResourceRequirements{Requests: gpu, Limits: gpu}}},
		InitContainers: []corev1.Container{{Name: "i", Image: "x", Resources: corev1.ResourceRequirements{Requests: gpu, Limits: gpu}}},
		Tolerations:    []corev1.Toleration{{Key: "example.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}}
	got, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := append([]corev1.Toleration{{Key: "example.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, kubeTolerations(300)...)
	if !equality.Semantic.DeepEqual(got.Spec.Tolerations, want) {
		t.Errorf("tolerations %+v, want %+v", got.Spec.Tolerations, want)
	}
	p.Name = "q"
	p.Spec.Tolerations = nil
	if got, err = e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), p, metav1.CreateOptions{}); err != nil || !equality.Semantic.DeepEqual(got.Spec.Tolerations, append(kubeTolerations(300), want[0])) {
		// DefaultTolerationSeconds runs first, in kube's order.
		t.Errorf("tolerations %+v (%v)", got.Spec.Tolerations, err)
	}
}

// TestNamespaceAutoProvision: a create into a missing namespace creates
// the namespace first; a dry run does not.
func TestNamespaceAutoProvision(t *testing.T) {
	e := e2eutil.Start(t, "--enable-admission-plugins=NamespaceAutoProvision")
	ns := e2eutil.Unique("auto")
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.Clientset.CoreV1().Namespaces().Get(e2eutil.Ctx(t), ns, metav1.GetOptions{}); err != nil || n.Status.Phase != corev1.NamespaceActive {
		t.Fatalf("provisioned namespace: %v", err)
	}
	dry := e2eutil.Unique("dry")
	_, err := e.Clientset.CoreV1().ConfigMaps(dry).Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `namespaces "`+dry+`" not found`)
}
