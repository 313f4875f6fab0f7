package admplugins

import (
	"github.com/capstan-io/capstan/internal/testkit"
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// imagePolicyServer starts capstan with ImagePolicyWebhook asking server.
func imagePolicyServer(t *testing.T, server string, ca []byte, defaultAllow bool) *e2eutil.Env {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := testkit.WebhookKubeconfig(t, dir, "backend.kubeconfig", server, ca)
	e2eutil.WriteFile(t, filepath.Join(dir, "imagepolicy.yaml"), fmt.Appendf(nil,
		"imagePolicy:\n  kubeConfigFile: %s\n  allowTTL: 50\n  denyTTL: 50\n  retryBackoff: 1\n  defaultAllow: %t\n", kubeconfig, defaultAllow))
	cfg := filepath.Join(dir, "admission.yaml")
	e2eutil.WriteFile(t, cfg, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ImagePolicyWebhook\n  path: imagepolicy.yaml\n"))
	return e2eutil.Start(t, "--enable-admission-plugins=ImagePolicyWebhook", "--admission-control-config-file="+cfg)
}

// TestImagePolicyWebhook: an HTTPS backend reviews a pod's images; its
// denials are kube's 403 with its reason, its answers are cached, and a
// backend that cannot be reached denies, or with defaultAllow admits the
// pod marked failed-open.
func TestImagePolicyWebhook(t *testing.T) {
	var calls atomic.Int32
	backend := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var review imagepolicyv1alpha1.ImageReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Kind != "ImageReview" || review.APIVersion != "imagepolicy.k8s.io/v1alpha1" {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		review.Status.Allowed = true
		for _, c := range review.Spec.Containers {
			switch c.Image {
			case "bad":
				review.Status = imagepolicyv1alpha1.ImageReviewStatus{Reason: "bad image"}
			case "silent":
				review.Status = imagepolicyv1alpha1.ImageReviewStatus{}
			}
		}
		_ = json.NewEncoder(w).Encode(review)
	}))
	defer backend.Close()
	ca := testkit.CertificatePEM(backend)

	e := imagePolicyServer(t, backend.URL, ca, false)
	ns := e.Namespace(t)
	pod := func(name, image string) error {
		p := plainPod(name)
		p.Spec.Containers[0].Image = image
		_, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), p, metav1.CreateOptions{})
		return err
	}
	for _, name := range []string{"a", "b"} {
		if err := pod(name, "good"); err != nil {
			t.Fatal(err)
		}
	}
	e2eutil.WantStatus(t, pod("c", "bad"), 403, metav1.StatusReasonForbidden, `pods "c" is forbidden: image policy webhook backend denied one or more images: bad image`)
	e2eutil.WantStatus(t, pod("d", "bad"), 403, metav1.StatusReasonForbidden, `pods "d" is forbidden: image policy webhook backend denied one or more images: bad image`)
	e2eutil.WantStatus(t, pod("e", "silent"), 403, metav1.StatusReasonForbidden, `pods "e" is forbidden: one or more images rejected by webhook backend`)
	if n := calls.Load(); n != 3 {
		t.Errorf("backend asked %d times, want 3 (the same review's answer is cached)", n)
	}

	// A backend nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "https://" + l.Addr().String()
	l.Close()
	closed := imagePolicyServer(t, gone, ca, false)
	_, err = closed.Clientset.CoreV1().Pods(closed.Namespace(t)).Create(e2eutil.Ctx(t), plainPod("p"), metav1.CreateOptions{})
	if s := e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, ""); !strings.HasPrefix(s.Message, `pods "p" is forbidden: Post "`+gone) {
		t.Errorf("message %q", s.Message)
	}
	open := imagePolicyServer(t, gone, ca, true)
	got, err := open.Clientset.CoreV1().Pods(open.Namespace(t)).Create(e2eutil.Ctx(t), plainPod("p"), metav1.CreateOptions{})
	if err != nil || got.Annotations["alpha.image-policy.k8s.io/failed-open"] != "true" {
		t.Errorf("fail open: annotations %v (%v)", got.Annotations, err)
	}
}
