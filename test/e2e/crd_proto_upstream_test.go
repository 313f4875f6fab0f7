package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-io/capstan/internal/testkit"
)

// upstreamEnv names the directory of the kube-apiserver and etcd binaries
// bench/upstream builds; without it TestKubeRoundTrip is skipped.
const upstreamEnv = "CAPSTAN_UPSTREAM_BIN"

// upstream is one bench/upstream/run.sh start: its env file's values.
type upstream map[string]string

// startUpstream runs bench/upstream/run.sh with env and reads its env file.
func startUpstream(t *testing.T, env ...string) upstream {
	t.Helper()
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command(filepath.Join(root, "bench/upstream/run.sh"))
	cmd.Env = append(os.Environ(), append([]string{"OUT=" + out, "BUILD=0", "AUTHZ=AlwaysAllow", "READY_TIMEOUT=120"}, env...)...)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run.sh: %v\n%s", err, output)
	}
	f, err := os.Open(filepath.Join(out, "env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := upstream{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		u[k] = v
	}
	t.Cleanup(func() { u.stop(t, "") })
	return u
}

// stop ends the kube-apiserver of u, and its etcd unless only is
// "kube-apiserver". Stopping twice is harmless.
func (u upstream) stop(t *testing.T, only string) {
	t.Helper()
	root, _ := testkit.RepoRoot()
	if only == "kube-apiserver" {
		if pid := u["APISERVER_PID"]; pid != "" {
			if err := exec.Command("kill", pid).Run(); err == nil {
				waitGone(t, pid)
			}
		}
		return
	}
	if _, err := os.Stat(filepath.Join(u["OUT"], "pids")); err == nil {
		if out, err := exec.Command(filepath.Join(root, "bench/upstream/stop.sh"), u["OUT"]).CombinedOutput(); err != nil {
			t.Errorf("stop.sh: %v\n%s", err, out)
		}
	}
}

// waitGone waits until the process pid has ended.
func waitGone(t *testing.T, pid string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if exec.Command("kill", "-0", pid).Run() != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("process %s did not end", pid)
}

func (u upstream) config(t *testing.T) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", u["KUBECONFIG"])
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestKubeRoundTrip: kube-apiserver v1.37.2 creates the objects of the
// recording (CRDs, custom resources, a namespace, a config map and a
// secret) in its etcd; capstan, started on that etcd in its place, reads,
// watches and updates them; kube-apiserver, started again, reads capstan's
// writes and updates them once more. Set CAPSTAN_UPSTREAM_BIN to the
// directory bench/upstream/build.sh writes (bench/upstream/bin).
func TestKubeRoundTrip(t *testing.T) {
	bin := os.Getenv(upstreamEnv)
	if bin == "" {
		t.Skipf("%s is not set: no kube-apiserver to compare with", upstreamEnv)
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Fatalf("%s: %v", upstreamEnv, err)
		}
	}
	kvs := readKubeEtcd(t)
	kube := startUpstream(t, "UPSTREAM_BIN="+bin)
	createRecorded(t, kube)
	kube.stop(t, "kube-apiserver")

	s := testkit.StartServer(t, "--etcd-servers", kube["ETCD_URL"], "--etcd-prefix", "/registry")
	read := etcdReader(t, kube["ETCD_URL"])
	before := map[string][]byte{}
	for key := range kvs {
		before[key] = read(key)
	}
	checkKubeStoredObjects(t, s.Config, before, read)
	s.Stop(t)

	again := startUpstream(t, "UPSTREAM_BIN="+bin, "USE_ETCD="+kube["ETCD_URL"])
	cfg := again.config(t)
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		gvr       schema.GroupVersionResource
		ns, name  string
		wantLabel string
	}{
		{crdGVR, "", "gadgets.kubeform.example.com", "capstan-protobuf"},
		{widgetsV1, "kubeform", "w1", "capstan"},
		{widgetsV1, "kubeform", "w2", "capstan"},
		{gadgetsV1, "", "g1", "capstan"},
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "kubeform", "settings", "capstan-json"},
		{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "kubeform", "token", "capstan-json"},
	} {
		ri := d.Resource(r.gvr).Namespace(r.ns)
		var got *unstructured.Unstructured
		eventually(t, 60*time.Second, "kube reads "+r.name, func(c context.Context) (bool, error) {
			got, err = ri.Get(c, r.name, metav1.GetOptions{})
			return err == nil, nil
		})
		if got.GetLabels()[r.wantLabel] != "updated" {
			t.Errorf("kube reads %s without capstan's label %s: %v", r.name, r.wantLabel, got.GetLabels())
		}
		labels := got.GetLabels()
		labels["kube-again"] = "updated"
		got.SetLabels(labels)
		if _, err := ri.Update(ctx(t), got, metav1.UpdateOptions{}); err != nil {
			t.Errorf("kube updating %s after capstan: %v", r.name, err)
		}
	}
	if st, err := d.Resource(widgetsV1).Namespace("kubeform").Get(ctx(t), "w1", metav1.GetOptions{}); err != nil ||
		st.Object["status"].(map[string]any)["phase"] != "Serving" {
		t.Errorf("kube reads w1's status as %v, %v", st, err)
	}
}

// createRecorded has bench/record-kube-etcd.sh create the recording's
// objects through kube's API (the script that made the recording).
func createRecorded(t *testing.T, kube upstream) {
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
		resp, err := c.Get(ctx(t), key)
		if err != nil {
			t.Fatalf("reading %s: %v", key, err)
		}
		if len(resp.Kvs) == 0 {
			return nil
		}
		return resp.Kvs[0].Value
	}
}
