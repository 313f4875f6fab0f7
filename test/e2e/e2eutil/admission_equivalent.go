package e2eutil

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

// LastReview is the last review the webhook at path got.
func LastReview(t *testing.T, wh *AdmissionWebhook, path string) *admissionv1.AdmissionRequest {
	t.Helper()
	seen := wh.Seen(path)
	if len(seen) == 0 {
		t.Fatalf("webhook %s never called", path)
	}
	return seen[len(seen)-1].Request
}
