package webhook

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
)

func TestMatchResource(t *testing.T) {
	tests := []struct {
		patterns      []string
		resource, sub string
		want          bool
	}{
		{[]string{"pods"}, "pods", "", true},
		{[]string{"pods"}, "pods", "status", false},
		{[]string{"*"}, "pods", "", true},
		{[]string{"*"}, "pods", "status", false},
		{[]string{"*/*"}, "pods", "status", true},
		{[]string{"pods/*"}, "pods", "status", true},
		{[]string{"pods/*"}, "pods", "", true}, // kube: "*" is any subresource, none included
		{[]string{"*/status"}, "deployments", "status", true},
		{[]string{"pods/status"}, "pods", "exec", false},
	}
	for _, tc := range tests {
		if got := matchResource(tc.patterns, tc.resource, tc.sub); got != tc.want {
			t.Errorf("matchResource(%v, %s, %s) = %v", tc.patterns, tc.resource, tc.sub, got)
		}
	}
}

func TestMatchScope(t *testing.T) {
	ns, cluster := arv1.NamespacedScope, arv1.ClusterScope
	pods := &admission.Attributes{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: "a"}
	nodes := &admission.Attributes{Resource: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}}
	namespace := &admission.Attributes{Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Namespace: "a"}
	for _, tc := range []struct {
		scope *arv1.ScopeType
		a     *admission.Attributes
		want  bool
	}{
		{nil, pods, true}, {&ns, pods, true}, {&cluster, pods, false},
		{&ns, nodes, false}, {&cluster, nodes, true},
		{&ns, namespace, false}, {&cluster, namespace, true},
	} {
		if got := matchScope(tc.scope, tc.a); got != tc.want {
			t.Errorf("matchScope(%v, %s) = %v", tc.scope, tc.a.Resource.Resource, got)
		}
	}
}

func TestRejection(t *testing.T) {
	for _, tc := range []struct {
		result *metav1.Status
		code   int32
		msg    string
	}{
		{nil, 400, `admission webhook "w" denied the request without explanation`},
		{&metav1.Status{Message: "no", Code: 403}, 403, `admission webhook "w" denied the request: no`},
		{&metav1.Status{Reason: "Because", Code: 200}, 400, `admission webhook "w" denied the request: Because`},
	} {
		err := rejection("w", tc.result)
		if err.ErrStatus.Code != tc.code || err.ErrStatus.Message != tc.msg || err.ErrStatus.Status != metav1.StatusFailure {
			t.Errorf("rejection(%v) = %+v", tc.result, err.ErrStatus)
		}
	}
}

func TestVerifyResponse(t *testing.T) {
	jsonPatch := admissionv1.PatchTypeJSONPatch
	for _, tc := range []struct {
		name     string
		body     string
		version  string
		mutating bool
		wantErr  string
	}{
		{"ok", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true}}`, "v1", false, ""},
		{"wrong kind", `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","response":{"uid":"u"}}`, "v1", false,
			"expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview"},
		{"absent", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, "v1", false, "webhook response was absent"},
		{"uid", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"x"}}`, "v1", false, `expected response.uid="u", got "x"`},
		{"patch without type", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","patch":"W10="}}`, "v1", true,
			"webhook returned response.patch but not response.patchType"},
		{"validating patch", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","patch":"W10=","patchType":"JSONPatch"}}`, "v1", false,
			"validating webhook may not return response.patch"},
		{"v1beta1 patch", `{"response":{"patch":"W10="}}`, "v1beta1", true, ""},
	} {
		resp, err := verifyResponse([]byte(tc.body), tc.version, "u", tc.mutating)
		if got := errString(err); got != tc.wantErr {
			t.Errorf("%s: error %q, want %q", tc.name, got, tc.wantErr)
		}
		if tc.name == "v1beta1 patch" && (resp == nil || resp.PatchType == nil || *resp.PatchType != jsonPatch) {
			t.Errorf("v1beta1 patch type not defaulted: %+v", resp)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
