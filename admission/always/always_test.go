package always

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
)

func TestDeny(t *testing.T) {
	a := &admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "cm-"}}}
	// kube v1.37.2 plugin/pkg/admission/deny answers so (NewForbidden: the generateName).
	const want = `configmaps "cm-" is forbidden: admission control is denying all modifications`
	for _, err := range []error{Deny{}.Admit(context.Background(), a), Deny{}.Validate(context.Background(), a)} {
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	}
	if err := (Admit{}).Admit(context.Background(), a); err != nil {
		t.Errorf("AlwaysAdmit: %v", err)
	}
}
