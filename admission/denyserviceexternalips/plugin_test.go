package denyserviceexternalips

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
)

func service(ips ...string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: corev1.ServiceSpec{ExternalIPs: ips}}
}

// TestValidate: a new external IP is forbidden with kube's message; the
// ones a Service had are kept, and other resources pass.
func TestValidate(t *testing.T) {
	services := corev1.SchemeGroupVersion.WithResource("services")
	for _, tc := range []struct {
		name      string
		resource  string
		sub       string
		obj, old  runtime.Object
		forbidden bool
	}{
		{"create without", "services", "", service(), nil, false},
		{"create with one", "services", "", service("1.2.3.4"), nil, true},
		{"update keeps", "services", "", service("1.2.3.4"), service("1.2.3.4", "5.6.7.8"), false},
		{"update adds", "services", "", service("1.2.3.4", "5.6.7.8"), service("1.2.3.4"), true},
		{"update removes", "services", "", service(), service("1.2.3.4"), false},
		{"status", "services", "status", service("1.2.3.4"), service(), false},
		{"other resource", "pods", "", &corev1.Pod{}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: admission.Create, Resource: services, Subresource: tc.sub, Name: "s", Object: tc.obj}
			a.Resource.Resource = tc.resource
			if tc.old != nil {
				a.Operation, a.OldObject = admission.Update, tc.old
			}
			err := Plugin{}.Validate(context.Background(), a)
			if tc.forbidden != (err != nil) || err != nil && (!apierrors.IsForbidden(err) ||
				err.Error() != `services "s" is forbidden: Use of external IPs is denied by admission control`) {
				t.Errorf("Validate = %v, want forbidden %t", err, tc.forbidden)
			}
		})
	}
	if err := (Plugin{}).Validate(context.Background(), &admission.Attributes{Resource: services, Object: &corev1.Pod{}}); !apierrors.IsInternalError(err) {
		t.Errorf("a Pod as a Service: %v, want kube's 500", err)
	}
}
