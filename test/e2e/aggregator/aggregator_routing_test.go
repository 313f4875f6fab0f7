package aggregator

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"strings"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestWebhookAggregatorRouting: with --enable-aggregator-routing a webhook's
// Service is resolved to one of its ready endpoints, not its cluster IP:
// a Service whose only endpoint is not ready fails the call with kube's
// "no endpoints available".
func TestWebhookAggregatorRouting(t *testing.T) {
	e := e2eutil.Start(t, "--enable-aggregator-routing")
	ns := e.LabeledNamespace(t, "routing")
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hook"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}
	if _, err := e.Clientset.CoreV1().Services(ns).Create(e2eutil.Ctx(t), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "hook-1", Labels: map[string]string{discoveryv1.LabelServiceName: "hook"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"192.0.2.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(8443))}}}
	if _, err := e.Clientset.DiscoveryV1().EndpointSlices(ns).Create(e2eutil.Ctx(t), slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h := e2eutil.ValidatingHook("routing.example.com", "", nil, "routing")
	h.ClientConfig = arv1.WebhookClientConfig{Service: &arv1.ServiceReference{Namespace: ns, Name: "hook", Port: ptr.To(int32(443))}}
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("routing")}, Webhooks: []arv1.ValidatingWebhook{h}}
	if _, err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last error
	e2eutil.Eventually(t, 30*time.Second, "webhook call fails", func(ctx2 context.Context) (bool, error) {
		_, last = e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx2, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "x-"}}, metav1.CreateOptions{})
		return last != nil, nil
	})
	if !strings.Contains(last.Error(), `no endpoints available for service "hook"`) {
		t.Errorf("webhook call: %v; want it resolved through the endpoint slices", last)
	}
}
