package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// resizeNode creates a node of the given OS with 2 CPUs and 1Gi allocatable.
func resizeNode(t *testing.T, e *e2eutil.Env, name, os string) *corev1.Node {
	t.Helper()
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("10")}
	n, err := e.Clientset.CoreV1().Nodes().Create(e2eutil.Ctx(t), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelOSStable: os}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Capacity, n.Status.Allocatable = alloc, alloc
	if n, err = e.Clientset.CoreV1().Nodes().UpdateStatus(e2eutil.Ctx(t), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return n
}

// boundPod creates a pod on node asking for cpu, with pod-level resources
// when podLevel.
func boundPod(t *testing.T, e *e2eutil.Env, ns, name, node, cpu string, podLevel bool) *corev1.Pod {
	t.Helper()
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: node,
		Containers: []corev1.Container{{Name: "c", Image: "x", Resources: corev1.ResourceRequirements{Requests: req}}}}}
	if podLevel {
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: req}
	}
	p, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPodResizeValidator: a resize past the node's allocatable, or on a
// node that is not Linux, or of a pod whose node is gone, is refused with
// kube's 403, message and cause; one that fits is stored.
func TestPodResizeValidator(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	resizeNode(t, e, "linux-1", "linux")
	resizeNode(t, e, "windows-1", "windows")
	p := boundPod(t, e, ns, "p", "linux-1", "1", false)

	p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("3")
	_, err := e.Clientset.CoreV1().Pods(ns).UpdateResize(e2eutil.Ctx(t), "p", p, metav1.UpdateOptions{})
	s := e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "p" is forbidden: node didn't have enough allocatable resources: cpu, requested: 3000, allocatable: 2000`)
	e2eutil.WantCause(t, s, "NodeCapacity", "")

	p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1500m")
	got, err := e.Clientset.CoreV1().Pods(ns).UpdateResize(e2eutil.Ctx(t), "p", p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q := got.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; q.String() != "1500m" {
		t.Errorf("resized cpu %s, want 1500m", q.String())
	}

	w := boundPod(t, e, ns, "w", "windows-1", "1", false)
	w.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1200m")
	_, err = e.Clientset.CoreV1().Pods(ns).UpdateResize(e2eutil.Ctx(t), "w", w, metav1.UpdateOptions{})
	s = e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "w" is forbidden: pod resize is only supported on linux nodes, node "windows-1" is "windows"`)
	e2eutil.WantCause(t, s, "UnsupportedPlatform", "")

	g := boundPod(t, e, ns, "g", "gone", "1", false)
	g.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1200m")
	_, err = e.Clientset.CoreV1().Pods(ns).UpdateResize(e2eutil.Ctx(t), "g", g, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "g" is forbidden: node "gone" not found`)

	// Without the plugin, the same resize is the node's business.
	off := e2eutil.Start(t, "--disable-admission-plugins=PodResizeValidator")
	ns = off.Namespace(t)
	resizeNode(t, off, "linux-1", "linux")
	p = boundPod(t, off, ns, "p", "linux-1", "1", false)
	p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("3")
	if _, err := off.Clientset.CoreV1().Pods(ns).UpdateResize(e2eutil.Ctx(t), "p", p, metav1.UpdateOptions{}); err != nil {
		t.Errorf("resize with the plugin off: %v", err)
	}
}

// TestNodeDeclaredFeatureValidator: resizing a bound pod's pod-level
// resources needs its node to declare InPlacePodLevelResourcesVerticalScaling;
// refused with kube's message until it does.
func TestNodeDeclaredFeatureValidator(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	n := resizeNode(t, e, "linux-1", "linux")
	p := boundPod(t, e, ns, "p", "linux-1", "1", true)

	resize := func() error {
		p.Spec.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1200m")
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1200m")
		_, err := e.Clientset.CoreV1().Pods(ns).UpdateResize(e2eutil.Ctx(t), "p", p, metav1.UpdateOptions{})
		return err
	}
	e2eutil.WantStatus(t, resize(), 403, metav1.StatusReasonForbidden,
		`pods "p" is forbidden: pod update requires features InPlacePodLevelResourcesVerticalScaling which are not available on node "linux-1"`)

	n.Status.DeclaredFeatures = []string{"InPlacePodLevelResourcesVerticalScaling"}
	if _, err := e.Clientset.CoreV1().Nodes().UpdateStatus(e2eutil.Ctx(t), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := resize(); err != nil {
		t.Errorf("resize on a node that declares the feature: %v", err)
	}
}
