package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestQuotaLimitedScopes: with limitedResources[].matchScopes, a pod of the
// limited priority class is refused (kube's plain 500) in a namespace with
// no quota of that scope, and admitted where a quota covers it; other pods
// are not limited.
func TestQuotaLimitedScopes(t *testing.T) {
	cfg := admissionConfigFile(t, `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ResourceQuota
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: ResourceQuotaConfiguration
    limitedResources:
    - resource: pods
      matchScopes:
      - {scopeName: PriorityClass, operator: In, values: [cluster-services]}
`, nil)
	e := e2eutil.Start(t, "--admission-control-config-file="+cfg)
	if _, err := e.Clientset.SchedulingV1().PriorityClasses().Create(e2eutil.Ctx(t), &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "cluster-services"}, Value: 1000}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	open, covered := e.Namespace(t), e.Namespace(t)
	e.Quota(t, covered, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")},
			ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"cluster-services"}}}}}})
	prioritized := plainPod("p")
	prioritized.Spec.PriorityClassName = "cluster-services"
	_, err := e.Clientset.CoreV1().Pods(open).Create(e2eutil.Ctx(t), prioritized, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 500, metav1.StatusReasonUnknown, "insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]")
	if _, err := e.Clientset.CoreV1().Pods(open).Create(e2eutil.Ctx(t), plainPod("plain"), metav1.CreateOptions{}); err != nil {
		t.Errorf("a pod of no limited scope: %v", err)
	}
	if _, err := e.Clientset.CoreV1().Pods(covered).Create(e2eutil.Ctx(t), prioritized, metav1.CreateOptions{}); err != nil {
		t.Errorf("a covered pod: %v", err)
	}
}
