package crd

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	resourcev1 "k8s.io/api/resource/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestKubeRoundTrip: kube-apiserver v1.37.2 creates the objects of the
// recording (CRDs, custom resources, a namespace, a config map, a secret
// and objects of the kinds GA in 1.37, stored at their betas) in its etcd; capstan, started on that etcd in its place, reads,
// watches and updates them; kube-apiserver, started again, reads capstan's
// writes and updates them once more. Set CAPSTAN_UPSTREAM_BIN to the
// directory bench/upstream/build.sh writes (bench/upstream/bin).
func TestKubeRoundTrip(t *testing.T) {
	bin := os.Getenv(e2eutil.UpstreamEnv)
	if bin == "" {
		t.Skipf("%s is not set: no kube-apiserver to compare with", e2eutil.UpstreamEnv)
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Fatalf("%s: %v", e2eutil.UpstreamEnv, err)
		}
	}
	kvs := readKubeEtcd(t)
	kube := e2eutil.StartUpstream(t, "UPSTREAM_BIN="+bin, recordArgs)
	createRecorded(t, kube)
	kube.Stop(t, "kube-apiserver")

	s := testkit.StartServer(t, "--etcd-servers", kube["ETCD_URL"], "--etcd-prefix", "/registry")
	read := etcdReader(t, kube["ETCD_URL"])
	before := map[string][]byte{}
	for key := range kvs {
		before[key] = read(key)
	}
	checkKubeStoredObjects(t, s.Config, before, read)
	s.Stop(t)

	again := e2eutil.StartUpstream(t, "UPSTREAM_BIN="+bin, "USE_ETCD="+kube["ETCD_URL"], recordArgs)
	cfg := again.Config(t)
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		gvr       schema.GroupVersionResource
		ns, name  string
		wantLabel string
	}{
		{e2eutil.CRDGVR, "", "gadgets.kubeform.example.com", "capstan-protobuf"},
		{widgetsV1, "kubeform", "w1", "capstan"},
		{widgetsV1, "kubeform", "w2", "capstan"},
		{gadgetsV1, "", "g1", "capstan"},
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "kubeform", "settings", "capstan-json"},
		{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "kubeform", "token", "capstan-json"},
		{certificatesv1.SchemeGroupVersion.WithResource("clustertrustbundles"), "", "example.com:kubeform:one", "capstan-json"},
		{certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests"), "kubeform", "web", "capstan-json"},
		{svmv1.SchemeGroupVersion.WithResource("storageversionmigrations"), "", "kubeform-configmaps", "capstan-json"},
		{resourcev1.SchemeGroupVersion.WithResource("devicetaintrules"), "", "kubeform-drain", "capstan-json"},
	} {
		ri := d.Resource(r.gvr).Namespace(r.ns)
		var got *unstructured.Unstructured
		e2eutil.Eventually(t, 60*time.Second, "kube reads "+r.name, func(c context.Context) (bool, error) {
			got, err = ri.Get(c, r.name, metav1.GetOptions{})
			return err == nil, nil
		})
		if got.GetLabels()[r.wantLabel] != "updated" {
			t.Errorf("kube reads %s without capstan's label %s: %v", r.name, r.wantLabel, got.GetLabels())
		}
		labels := got.GetLabels()
		labels["kube-again"] = "updated"
		got.SetLabels(labels)
		if _, err := ri.Update(e2eutil.Ctx(t), got, metav1.UpdateOptions{}); err != nil {
			t.Errorf("kube updating %s after capstan: %v", r.name, err)
		}
	}
	if st, err := d.Resource(widgetsV1).Namespace("kubeform").Get(e2eutil.Ctx(t), "w1", metav1.GetOptions{}); err != nil ||
		st.Object["status"].(map[string]any)["phase"] != "Serving" {
		t.Errorf("kube reads w1's status as %v, %v", st, err)
	}
	// The request capstan denied through v1 keeps, for kube, the fields
	// only v1beta1 has.
	legacy, err := d.Resource(certificatesv1beta1.SchemeGroupVersion.WithResource("podcertificaterequests")).Namespace("kubeform").
		Get(e2eutil.Ctx(t), "legacy", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("kube reading the legacy request: %v", err)
	}
	if key, _, _ := unstructured.NestedString(legacy.Object, "spec", "pkixPublicKey"); key == "" {
		t.Errorf("kube reads the legacy request without its public key: %v", legacy)
	}
	if conditions, _, _ := unstructured.NestedSlice(legacy.Object, "status", "conditions"); len(conditions) != 1 {
		t.Errorf("kube reads the legacy request's conditions as %v", conditions)
	}
}

// recordArgs starts kube-apiserver as bench/record-kube-etcd.sh does
// (its KUBE_APISERVER_ARGS).
const recordArgs = "APISERVER_ARGS=--runtime-config=certificates.k8s.io/v1beta1=true"

// createRecorded has bench/record-kube-etcd.sh create the recording's
// objects through kube's API (the script that made the recording).
func createRecorded(t *testing.T, kube e2eutil.Upstream) {
	t.Helper()
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "bench/record-kube-etcd.sh"))
	cmd.Env = append(os.Environ(), "KUBE_ENV="+filepath.Join(kube["OUT"], "env"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("record-kube-etcd.sh: %v\n%s", err, out)
	}
}

// etcdReader reads values from the etcd at url.
func etcdReader(t *testing.T, url string) func(key string) []byte {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return func(key string) []byte {
		resp, err := c.Get(e2eutil.Ctx(t), key)
		if err != nil {
			t.Fatalf("reading %s: %v", key, err)
		}
		if len(resp.Kvs) == 0 {
			return nil
		}
		return resp.Kvs[0].Value
	}
}
