package parity

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"

	"github.com/capstan-io/capstan/internal/testkit"
)

// Backends are the servers some sequences' plugins call, run by the test
// for both kube-apiserver and capstan. A flag naming {imagepolicy} names
// the directory of an AdmissionConfiguration (admission.yaml) whose
// ImagePolicyWebhook asks imagePolicyBackend.

// expandFlags puts the absolute path of testdata in place of {testdata}
// (flags may name configuration files both servers read), and the
// directory of the image policy backend's configuration in place of
// {imagepolicy}, starting the backend on first use.
func expandFlags(t *testing.T, flags []string) []string {
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(flags))
	for i, f := range flags {
		f = strings.ReplaceAll(f, "{testdata}", dir)
		if strings.Contains(f, "{imagepolicy}") {
			f = strings.ReplaceAll(f, "{imagepolicy}", imagePolicyDir(t))
		}
		out[i] = f
	}
	return out
}

// imagePolicyDir starts imagePolicyBackend over TLS and writes the
// configuration that makes ImagePolicyWebhook ask it: admission.yaml,
// imagepolicy.yaml (deny on errors, nothing cached for long) and the
// backend's kubeconfig.
func imagePolicyDir(t *testing.T) string {
	t.Helper()
	backend := httptest.NewTLSServer(http.HandlerFunc(imagePolicyBackend))
	t.Cleanup(backend.Close)
	dir := t.TempDir()
	kubeconfig := testkit.WebhookKubeconfig(t, dir, "backend.kubeconfig", backend.URL, testkit.CertificatePEM(backend))
	files := map[string]string{
		"imagepolicy.yaml": fmt.Sprintf("imagePolicy:\n  kubeConfigFile: %s\n  allowTTL: 1\n  denyTTL: 1\n  retryBackoff: 500\n  defaultAllow: false\n", kubeconfig),
		"admission.yaml":   "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ImagePolicyWebhook\n  path: imagepolicy.yaml\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// imagePolicyBackend reviews images: "bad" is denied with a reason,
// "silent" without one, "ticketed" unless the pod's annotation
// ticket.image-policy.k8s.io/id (passed on by the plugin) is set;
// anything else is allowed, with an audit annotation.
func imagePolicyBackend(w http.ResponseWriter, r *http.Request) {
	var review imagepolicyv1alpha1.ImageReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	review.Status = imagepolicyv1alpha1.ImageReviewStatus{Allowed: true, AuditAnnotations: map[string]string{"reviewed": "yes"}}
	for _, c := range review.Spec.Containers {
		switch {
		case c.Image == "bad":
			review.Status = imagepolicyv1alpha1.ImageReviewStatus{Reason: "bad image"}
		case c.Image == "silent":
			review.Status = imagepolicyv1alpha1.ImageReviewStatus{}
		case c.Image == "ticketed" && review.Spec.Annotations["ticket.image-policy.k8s.io/id"] == "":
			review.Status = imagepolicyv1alpha1.ImageReviewStatus{Reason: "no ticket"}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}
