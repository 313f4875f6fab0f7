package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestClassAndNodePlugins: RuntimeClass, DefaultStorageClass,
// DefaultIngressClass and TaintNodesByCondition (default-on), AlwaysPullImages
// and DenyServiceExternalIPs (enabled), with the objects and messages
// kube-apiserver v1.37.2 gives for the same requests.
func TestClassAndNodePlugins(t *testing.T) {
	e := e2eutil.Start(t, "--enable-admission-plugins=DenyServiceExternalIPs,AlwaysPullImages")
	ns := e.Namespace(t)
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "rc"}, Handler: "h",
		Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"a": "b"},
			Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}}}
	if _, err := e.Clientset.NodeV1().RuntimeClasses().Create(e2eutil.Ctx(t), rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "sc1", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}, Provisioner: "x"}
	if _, err := e.Clientset.StorageV1().StorageClasses().Create(e2eutil.Ctx(t), sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ic := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "ic1", Annotations: map[string]string{"ingressclass.kubernetes.io/is-default-class": "true"}},
		Spec: networkingv1.IngressClassSpec{Controller: "x/y"}}
	if _, err := e.Clientset.NetworkingV1().IngressClasses().Create(e2eutil.Ctx(t), ic, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name string, mutate func(*corev1.Pod)) (*corev1.Pod, error) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox", ImagePullPolicy: corev1.PullNever}}}}
		mutate(p)
		return e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), p, metav1.CreateOptions{})
	}
	_, err := pod("rc1", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("nope") })
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "rc1" is forbidden: pod rejected: RuntimeClass "nope" not found`)
	_, err = pod("rc2", func(p *corev1.Pod) {
		p.Spec.RuntimeClassName = ptr.To("rc")
		p.Spec.NodeSelector = map[string]string{"a": "c"}
	})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "rc2" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[a] = b; pod.spec.nodeSelector[a] = c`)
	p, err := pod("rc3", func(p *corev1.Pod) {
		p.Spec.RuntimeClassName = ptr.To("rc")
		p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	// The class's toleration covers the pod's own, which goes.
	tol := append(kubeTolerations(300), corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists})
	if !equality.Semantic.DeepEqual(p.Spec.Tolerations, tol) || p.Spec.NodeSelector["a"] != "b" ||
		!p.Spec.Overhead.Cpu().Equal(resource.MustParse("100m")) {
		t.Errorf("pod of a runtime class: tolerations %+v, node selector %v, overhead %v", p.Spec.Tolerations, p.Spec.NodeSelector, p.Spec.Overhead)
	}
	if p.Spec.Containers[0].ImagePullPolicy != corev1.PullAlways {
		t.Errorf("AlwaysPullImages: pull policy %q", p.Spec.Containers[0].ImagePullPolicy)
	}

	node, err := e.Clientset.CoreV1().Nodes().Create(e2eutil.Ctx(t), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
	if want := []corev1.Taint{{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule}}; err != nil || !equality.Semantic.DeepEqual(node.Spec.Taints, want) {
		t.Errorf("node taints %+v (%v), want %+v", node.Spec.Taints, err, want)
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if pvc, err = e.Clientset.CoreV1().PersistentVolumeClaims(ns).Create(e2eutil.Ctx(t), pvc, metav1.CreateOptions{}); err != nil || ptr.Deref(pvc.Spec.StorageClassName, "") != "sc1" {
		t.Errorf("claim's class %v (%v), want sc1", pvc.Spec.StorageClassName, err)
	}
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "i1"}, Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
		Service: &networkingv1.IngressServiceBackend{Name: "svc", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}
	if ing, err = e.Clientset.NetworkingV1().Ingresses(ns).Create(e2eutil.Ctx(t), ing, metav1.CreateOptions{}); err != nil || ptr.Deref(ing.Spec.IngressClassName, "") != "ic1" {
		t.Errorf("ingress class %v (%v), want ic1", ing.Spec.IngressClassName, err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: corev1.ServiceSpec{ExternalIPs: []string{"1.2.3.4"},
		Ports: []corev1.ServicePort{{Port: 80}}}}
	_, err = e.Clientset.CoreV1().Services(ns).Create(e2eutil.Ctx(t), svc, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `services "s" is forbidden: Use of external IPs is denied by admission control`)
}
