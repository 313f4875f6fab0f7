package webhook

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
