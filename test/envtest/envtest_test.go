// Package envtest runs controller-runtime's envtest, unchanged, with the
// capstan binary as its kube-apiserver and its etcd (a KUBEBUILDER_ASSETS
// directory `capstan envtest-assets` writes), and a subset of
// controller-runtime's own envtest-based test packages against it
// (hack/envtest-suite.sh runs them all).
package envtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/capstan-io/capstan/internal/testkit"
)

// assets builds capstan and writes a KUBEBUILDER_ASSETS directory with it.
func assets(t *testing.T) string {
	t.Helper()
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "capstan")
	build := exec.Command("go", "build", "-o", bin, "./cmd/capstan")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/capstan: %v\n%s", err, out)
	}
	assets := filepath.Join(dir, "assets")
	out, err := exec.Command(bin, "envtest-assets", assets).CombinedOutput()
	if err != nil {
		t.Fatalf("capstan envtest-assets: %v\n%s", err, out)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, name)); err != nil {
			t.Fatal(err)
		}
	}
	return assets
}

// TestEnvtestDefaults starts envtest with its default arguments and a CRD
// to install, writes through it, and stops it.
func TestEnvtestDefaults(t *testing.T) {
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets(t),
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "testserver", "testdata", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest did not start capstan: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("envtest did not stop capstan: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "envtest-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// envtest's defaults turn the ServiceAccount admission plugin off: a
	// pod without a service account is accepted in a fresh namespace.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns.Name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr(true)}}}}}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatalf("privileged pod (envtest passes --allow-privileged=true): %v", err)
	}
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.capstan.io", Version: "v1", Kind: "Widget"})
	w.SetNamespace(ns.Name)
	w.SetName("w")
	if err := c.Create(ctx, w); err != nil {
		t.Fatalf("custom resource of the installed CRD: %v", err)
	}
	// envtest's user is an admin of its own client CA.
	if !strings.HasPrefix(cfg.Host, "https://127.0.0.1:") {
		t.Errorf("envtest's config points at %s", cfg.Host)
	}
}

func ptr[T any](v T) *T { return &v }
