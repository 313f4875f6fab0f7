package catalog

import (
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/testkit"
)

const (
	hpaMetricsAnnotation  = "autoscaling.alpha.kubernetes.io/metrics"
	hpaBehaviorAnnotation = "autoscaling.alpha.kubernetes.io/behavior"
	hpaConditions         = "autoscaling.alpha.kubernetes.io/conditions"
)

var hpaTarget = autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"}

func TestHPAServedAsV1AndV2(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	checkAutoscalingDiscovery(t, c)

	memory := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1Gi"))}}}
	v2 := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "mem"}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: hpaTarget, MaxReplicas: 5, Metrics: []autoscalingv2.MetricSpec{memory},
		Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}},
	}}
	created, err := c.AutoscalingV2().HorizontalPodAutoscalers("default").Create(ctx, v2, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *created.Spec.MinReplicas != 1 || len(created.Spec.Behavior.ScaleUp.Policies) != 2 || created.Generation != 1 {
		t.Fatalf("v2 defaults: %+v generation %d", created.Spec, created.Generation)
	}
	// Read as v1: the memory metric and the behavior travel in annotations.
	asV1, err := c.AutoscalingV1().HorizontalPodAutoscalers("default").Get(ctx, "mem", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if asV1.Spec.TargetCPUUtilizationPercentage != nil || asV1.Annotations[hpaMetricsAnnotation] == "" || asV1.Annotations[hpaBehaviorAnnotation] == "" {
		t.Fatalf("v1 view: %+v annotations %v", asV1.Spec, asV1.Annotations)
	}
	// A v1 client that changes the v1 fields keeps what only v2 can say.
	asV1.Spec.MaxReplicas = 8
	if _, err := c.AutoscalingV1().HorizontalPodAutoscalers("default").Update(ctx, asV1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	back, _ := c.AutoscalingV2().HorizontalPodAutoscalers("default").Get(ctx, "mem", metav1.GetOptions{})
	if back.Spec.MaxReplicas != 8 || len(back.Spec.Metrics) != 1 || back.Spec.Metrics[0].Resource.Name != corev1.ResourceMemory ||
		*back.Spec.Behavior.ScaleDown.StabilizationWindowSeconds != 60 || back.Generation != 2 || len(back.Annotations) != 0 {
		t.Fatalf("v2 after a v1 update: %+v generation %d annotations %v", back.Spec, back.Generation, back.Annotations)
	}

	// Written as v1, read as v2.
	cpu := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "cpu"}, Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(hpaTarget), MaxReplicas: 3, TargetCPUUtilizationPercentage: ptr.To[int32](50)}}
	if _, err := c.AutoscalingV1().HorizontalPodAutoscalers("default").Create(ctx, cpu, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cpuV2, _ := c.AutoscalingV2().HorizontalPodAutoscalers("default").Get(ctx, "cpu", metav1.GetOptions{})
	if len(cpuV2.Spec.Metrics) != 1 || *cpuV2.Spec.Metrics[0].Resource.Target.AverageUtilization != 50 || *cpuV2.Spec.MinReplicas != 1 {
		t.Fatalf("v1 HPA read as v2: %+v", cpuV2.Spec)
	}
	// A status written in v2 shows in v1, conditions in their annotation.
	cpuV2.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 2, Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
		{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "ReadyForNewScale"}}}
	if _, err := c.AutoscalingV2().HorizontalPodAutoscalers("default").UpdateStatus(ctx, cpuV2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cpuV1, _ := c.AutoscalingV1().HorizontalPodAutoscalers("default").Get(ctx, "cpu", metav1.GetOptions{})
	if cpuV1.Status.CurrentReplicas != 2 || cpuV1.Annotations[hpaConditions] == "" {
		t.Fatalf("v1 status: %+v annotations %v", cpuV1.Status, cpuV1.Annotations)
	}
	list, err := c.AutoscalingV1().HorizontalPodAutoscalers("").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("v1 list: %v, %v", list, err)
	}

	bad := v2.DeepCopy()
	bad.Name, bad.Spec.MinReplicas = "bad", ptr.To[int32](9)
	_, err = c.AutoscalingV2().HorizontalPodAutoscalers("default").Create(ctx, bad, metav1.CreateOptions{})
	assertInvalid(t, err, "spec.maxReplicas")
	badV1 := cpu.DeepCopy()
	badV1.Name, badV1.Spec.TargetCPUUtilizationPercentage = "bad", ptr.To[int32](0)
	_, err = c.AutoscalingV1().HorizontalPodAutoscalers("default").Create(ctx, badV1, metav1.CreateOptions{})
	assertInvalid(t, err, "spec.metrics[0].resource.target.averageUtilization")
}

func checkAutoscalingDiscovery(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	groups, err := c.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	preferred := map[string]string{}
	for _, g := range groups.Groups {
		preferred[g.Name] = g.PreferredVersion.GroupVersion
	}
	for group, want := range map[string]string{"autoscaling": "autoscaling/v2", "policy": "policy/v1", "networking.k8s.io": "networking.k8s.io/v1",
		"discovery.k8s.io": "discovery.k8s.io/v1", "storage.k8s.io": "storage.k8s.io/v1"} {
		if preferred[group] != want {
			t.Errorf("preferred version of %q = %q, want %q", group, preferred[group], want)
		}
	}
	if _, err := c.Discovery().ServerResourcesForGroupVersion("autoscaling/v1"); err != nil {
		t.Errorf("autoscaling/v1 not served: %v", err)
	}
}

func TestPodDisruptionBudgetGuardsEvictions(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	pdbs := c.PolicyV1().PodDisruptionBudgets("default")
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	pdb, err := pdbs.Create(ctx, pdb, metav1.CreateOptions{})
	if err != nil || pdb.Generation != 1 {
		t.Fatalf("create budget: %+v, %v", pdb, err)
	}
	readyPod(t, c, "web-1")

	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
	if pdb, err = pdbs.UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = c.CoreV1().Pods("default").EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}})
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("eviction against a spent budget: %v, want 429", err)
	}
	st := err.(apierrors.APIStatus).Status()
	if st.Message != "Cannot evict pod as it would violate the pod's disruption budget." || len(st.Details.Causes) != 1 ||
		st.Details.Causes[0].Type != policyv1.DisruptionBudgetCause {
		t.Fatalf("429 = %+v", st)
	}

	pdb.Status.DisruptionsAllowed, pdb.Status.CurrentHealthy = 1, 2
	if _, err = pdbs.UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().Pods("default").EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}}); err != nil {
		t.Fatalf("eviction within the budget: %v", err)
	}
	if _, err := c.CoreV1().Pods("default").Get(ctx, "web-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("evicted pod: %v, want gone", err)
	}
	got, _ := pdbs.Get(ctx, "web", metav1.GetOptions{})
	if got.Status.DisruptionsAllowed != 0 || got.Status.DisruptedPods["web-1"].Time.IsZero() {
		t.Fatalf("budget after the eviction: %+v", got.Status)
	}

	bad := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromString("10%"))}}
	_, err = pdbs.Create(ctx, bad, metav1.CreateOptions{})
	assertInvalid(t, err, "spec")
	// Updates of budgets must name the version they change.
	got.ResourceVersion = ""
	got.Spec.MinAvailable = ptr.To(intstr.FromInt32(2))
	_, err = pdbs.Update(ctx, got, metav1.UpdateOptions{})
	assertInvalid(t, err, "metadata.resourceVersion")
}

// readyPod creates a running, ready pod labelled app=web.
func readyPod(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}}, Spec: podTemplate(nil).Spec}
	pod, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := c.CoreV1().Pods("default").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestNetworkingDiscoveryAndStorageResources(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	prefix := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: networkingv1.IngressSpec{
		Rules: []networkingv1.IngressRule{{Host: "web.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}}
	got, err := c.NetworkingV1().Ingresses("default").Create(ctx, ing, metav1.CreateOptions{})
	if err != nil || got.Generation != 1 {
		t.Fatalf("ingress: %+v, %v", got, err)
	}
	ing.Name, ing.Spec.Rules[0].HTTP.Paths[0].PathType = "bad", nil
	_, err = c.NetworkingV1().Ingresses("default").Create(ctx, ing, metav1.CreateOptions{})
	assertInvalid(t, err, "spec.rules[0].http.paths[0].pathType")

	class := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: networkingv1.IngressClassSpec{
		Controller: "example.com/ingress", Parameters: &networkingv1.IngressClassParametersReference{Kind: "Params", Name: "p"}}}
	gotClass, err := c.NetworkingV1().IngressClasses().Create(ctx, class, metav1.CreateOptions{})
	if err != nil || *gotClass.Spec.Parameters.Scope != networkingv1.IngressClassParametersReferenceScopeCluster {
		t.Fatalf("ingress class: %+v, %v", gotClass, err)
	}
	gotClass.Spec.Controller = "example.com/other"
	_, err = c.NetworkingV1().IngressClasses().Update(ctx, gotClass, metav1.UpdateOptions{})
	assertInvalid(t, err, "spec.controller")

	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "deny"}, Spec: networkingv1.NetworkPolicySpec{
		Egress: []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(53))}}}}}}
	gotNP, err := c.NetworkingV1().NetworkPolicies("default").Create(ctx, np, metav1.CreateOptions{})
	if err != nil || len(gotNP.Spec.PolicyTypes) != 2 || *gotNP.Spec.Egress[0].Ports[0].Protocol != corev1.ProtocolTCP {
		t.Fatalf("network policy defaults: %+v, %v", gotNP, err)
	}

	eps := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.5"}}},
		Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}}}
	gotEPS, err := c.DiscoveryV1().EndpointSlices("default").Create(ctx, eps, metav1.CreateOptions{})
	if err != nil || *gotEPS.Ports[0].Protocol != corev1.ProtocolTCP || *gotEPS.Ports[0].Name != "" {
		t.Fatalf("endpoint slice: %+v, %v", gotEPS, err)
	}
	slices, err := c.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
	if err != nil || len(slices.Items) != 1 {
		t.Fatalf("slices of service web: %v, %v", slices, err)
	}
	gotEPS.AddressType = discoveryv1.AddressTypeIPv6
	_, err = c.DiscoveryV1().EndpointSlices("default").Update(ctx, gotEPS, metav1.UpdateOptions{})
	assertInvalid(t, err, "addressType")

	storageResources(t, c)
}

func storageResources(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	sc, err := c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"},
		Provisioner: "csi.example.com"}, metav1.CreateOptions{})
	if err != nil || *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete || *sc.VolumeBindingMode != storagev1.VolumeBindingImmediate {
		t.Fatalf("storage class: %+v, %v", sc, err)
	}
	sc.Provisioner = "other.example.com"
	_, err = c.StorageV1().StorageClasses().Update(ctx, sc, metav1.UpdateOptions{})
	assertInvalid(t, err, "provisioner")

	d, err := c.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}}, metav1.CreateOptions{})
	if err != nil || !*d.Spec.AttachRequired || *d.Spec.PodInfoOnMount || *d.Spec.FSGroupPolicy != storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy ||
		len(d.Spec.VolumeLifecycleModes) != 1 || *d.Spec.RequiresRepublish || *d.Spec.StorageCapacity || *d.Spec.SELinuxMount {
		t.Fatalf("CSI driver defaults: %+v, %v", d, err)
	}
	node := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: storagev1.CSINodeSpec{
		Drivers: []storagev1.CSINodeDriver{{Name: "csi.example.com", NodeID: "n1"}}}}
	if _, err := c.StorageV1().CSINodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	capacity := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: "cap"}, StorageClassName: "fast",
		Capacity: ptr.To(resource.MustParse("10Gi"))}
	if _, err := c.StorageV1().CSIStorageCapacities("default").Create(ctx, capacity, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va"}, Spec: storagev1.VolumeAttachmentSpec{
		Attacher: "csi.example.com", NodeName: "n1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-1")}}}
	va, err = c.StorageV1().VolumeAttachments().Create(ctx, va, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	va.Status.Attached = true
	if va, err = c.StorageV1().VolumeAttachments().UpdateStatus(ctx, va, metav1.UpdateOptions{}); err != nil || !va.Status.Attached {
		t.Fatalf("attachment status: %+v, %v", va, err)
	}
	va.Spec.NodeName = "n2"
	_, err = c.StorageV1().VolumeAttachments().Update(ctx, va, metav1.UpdateOptions{})
	assertInvalid(t, err, "spec")
}
