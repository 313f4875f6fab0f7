package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"encoding/json"
	"net/http"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/storage/embedded"
)

// startEtcd runs an etcd of the test's own, reached over HTTP as an
// external --etcd-servers is.
func startEtcd(t *testing.T) *embedded.Server {
	t.Helper()
	s, err := embedded.Start(e2eutil.Ctx(t), embedded.Config{Dir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func keyCount(t *testing.T, c *clientv3.Client, prefix string) int64 {
	t.Helper()
	resp, err := c.Get(e2eutil.Ctx(t), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

// TestEtcdServersOverrides: --etcd-servers-overrides stores one resource
// on other etcd servers; the rest stays on --etcd-servers.
func TestEtcdServersOverrides(t *testing.T) {
	t.Parallel()
	main, other := startEtcd(t), startEtcd(t)
	e := e2eutil.Start(t, "--etcd-servers="+strings.Join(main.Endpoints(), ","),
		"--etcd-servers-overrides=/configmaps#"+strings.Join(other.Endpoints(), ";"))
	ns := e.Namespace(t)
	e.ConfigMap(t, ns, "moved", nil)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}
	if _, err := e.Clientset.CoreV1().Secrets(ns).Create(e2eutil.Ctx(t), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := keyCount(t, other.Client(), "/registry/configmaps/"+ns+"/moved"); n != 1 {
		t.Errorf("the override's etcd holds %d keys of the config map, want 1", n)
	}
	if n := keyCount(t, main.Client(), "/registry/configmaps/"+ns+"/"); n != 0 {
		t.Errorf("--etcd-servers holds %d config maps of %s, want 0", n, ns)
	}
	if n := keyCount(t, main.Client(), "/registry/secrets/"+ns+"/kept"); n != 1 {
		t.Errorf("--etcd-servers holds %d keys of the secret, want 1", n)
	}
	if n := keyCount(t, other.Client(), "/registry/secrets/"); n != 0 {
		t.Errorf("the override's etcd holds %d secrets, want 0", n)
	}
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(e2eutil.Ctx(t), "moved", metav1.GetOptions{}); err != nil {
		t.Errorf("reading the moved config map back: %v", err)
	}
}

// TestEnableGarbageCollectorOff: with --enable-garbage-collector=false a
// foreground delete adds no foregroundDeletion finalizer (nothing would
// remove it): the object is gone at once, and the answer is a Status. With
// the collector on, the same delete answers with the object being
// deleted.
func TestEnableGarbageCollectorOff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag     string
		wantKind string
	}{
		{"--enable-garbage-collector=false", "Status"},
		{"--enable-garbage-collector=true", "ConfigMap"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			t.Parallel()
			e := e2eutil.Start(t, tc.flag)
			ns := e.Namespace(t)
			e.ConfigMap(t, ns, "cm", nil)
			body := []byte(`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"}`)
			r := e.Do(t, http.MethodDelete, e2eutil.CMPath(ns, "cm"), body, "Content-Type", "application/json")
			if r.Code != http.StatusOK {
				t.Fatalf("delete: %d %s", r.Code, r.Body)
			}
			var got metav1.TypeMeta
			if err := json.Unmarshal(r.Body, &got); err != nil || got.Kind != tc.wantKind {
				t.Fatalf("delete answered %s (%v), want a %s", r.Body, err, tc.wantKind)
			}
			if tc.wantKind == "Status" {
				if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(e2eutil.Ctx(t), "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("after the delete: %v, want NotFound", err)
				}
			}
		})
	}
}
