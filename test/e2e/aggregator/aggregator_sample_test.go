package aggregator

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/testkit"
)

// aggEnv is a capstan with a front-proxy CA and client certificate, so
// that extension servers authenticate the requests it proxies.
type aggEnv struct {
	*e2eutil.Env
	dir string
}

// frontProxyFiles writes a front-proxy CA and a client certificate it
// signed for front-proxy-client; it returns the capstan flags naming them.
func frontProxyFiles(t *testing.T, dir string) []string {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "front-proxy-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "front-proxy-client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	e2eutil.WriteFile(t, filepath.Join(dir, "front-proxy-ca.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	e2eutil.WriteFile(t, filepath.Join(dir, "front-proxy-client.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	e2eutil.WriteFile(t, filepath.Join(dir, "front-proxy-client.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	return []string{"--requestheader-client-ca-file", filepath.Join(dir, "front-proxy-ca.crt"),
		"--requestheader-allowed-names", "front-proxy-client", "--requestheader-username-headers", "X-Remote-User",
		"--requestheader-group-headers", "X-Remote-Group", "--requestheader-extra-headers-prefix", "X-Remote-Extra-",
		"--requestheader-uid-headers", "X-Remote-Uid",
		"--proxy-client-cert-file", filepath.Join(dir, "front-proxy-client.crt"),
		"--proxy-client-key-file", filepath.Join(dir, "front-proxy-client.key")}
}

func startAggregator(t *testing.T, flags ...string) *aggEnv {
	t.Helper()
	dir := t.TempDir()
	return &aggEnv{Env: e2eutil.Start(t, append(frontProxyFiles(t, dir), flags...)...), dir: dir}
}

// startSample runs sample-apiserver on a free loopback port with
// delegated authentication and authorization against capstan, its objects
// in capstan's etcd under a prefix of its own. It returns the port.
func (e *aggEnv) startSample(t *testing.T) int {
	t.Helper()
	bin := testkit.SampleAPIServer(t)
	port := testkit.FreePort(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "--secure-port", strconv.Itoa(port), "--bind-address", "127.0.0.1", "--cert-dir", dir,
		"--etcd-servers", strings.Join(e.EtcdEndpoints(), ","), "--etcd-prefix", "/"+e2eutil.Unique("wardle"),
		"--kubeconfig", e.Kubeconfig, "--authentication-kubeconfig", e.Kubeconfig, "--authorization-kubeconfig", e.Kubeconfig,
		"--disable-admission-plugins", "MutatingAdmissionPolicy,ValidatingAdmissionPolicy,MutatingAdmissionWebhook,ValidatingAdmissionWebhook")
	logFile, err := os.Create(filepath.Join(dir, "sample-apiserver.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		logFile.Close()
		if t.Failed() {
			log, _ := os.ReadFile(logFile.Name())
			t.Logf("sample-apiserver log:\n%s", tail(string(log), 4000))
		}
	})
	return port
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// registerWardle makes a Service named name in ns (an ExternalName for
// localhost) and the APIService v1alpha1.wardle.example.com on port.
func (e *aggEnv) registerWardle(t *testing.T, ns string, port int, mutate func(*apiregv1.APIService)) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}
	if _, err := e.Clientset.CoreV1().Services(ns).Create(e2eutil.Ctx(t), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	as := &apiregv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.wardle.example.com"}, Spec: apiregv1.APIServiceSpec{
		Group: "wardle.example.com", Version: "v1alpha1", GroupPriorityMinimum: 1000, VersionPriority: 15,
		InsecureSkipTLSVerify: true, Service: &apiregv1.ServiceReference{Namespace: ns, Name: "api", Port: ptr.To(int32(port))}}}
	if mutate != nil {
		mutate(as)
	}
	if _, err := e.AggregatorClient(t).ApiregistrationV1().APIServices().Create(e2eutil.Ctx(t), as, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitCondition waits until the APIService's Available condition has
// status and reason, and returns its message.
func (e *aggEnv) waitCondition(t *testing.T, name string, status apiregv1.ConditionStatus, reason string) string {
	t.Helper()
	var last apiregv1.APIServiceCondition
	c := e.AggregatorClient(t).ApiregistrationV1().APIServices()
	err := pollUntil(e2eutil.Ctx(t), 90*time.Second, func(ctx context.Context) bool {
		svc, err := c.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, cond := range svc.Status.Conditions {
			if cond.Type == apiregv1.Available {
				last = cond
			}
		}
		return last.Status == status && last.Reason == reason
	})
	if err != nil {
		t.Fatalf("APIService %s: Available %s (%s), want %s (%s): %s", name, last.Status, last.Reason, status, reason, last.Message)
	}
	return last.Message
}

func pollUntil(ctx context.Context, d time.Duration, cond func(context.Context) bool) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond(ctx) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

var flunders = schema.GroupVersionResource{Group: "wardle.example.com", Version: "v1alpha1", Resource: "flunders"}

// TestAggregatorSampleAPIServer: k8s.io/sample-apiserver registered
// through an APIService is available, listed in discovery, and served
// through capstan to kubectl and client-go (get, create, watch, delete),
// as the user capstan authenticated; a user without access is refused by
// capstan; deleting the APIService takes the group away.
func TestAggregatorSampleAPIServer(t *testing.T) {
	e := startAggregator(t)
	port := e.startSample(t)
	ns := e.Namespace(t)
	e.registerWardle(t, ns, port, nil)
	if msg := e.waitCondition(t, "v1alpha1.wardle.example.com", apiregv1.ConditionTrue, "Passed"); msg != "all checks passed" {
		t.Errorf("message %q", msg)
	}
	run := func(stdin string, args ...string) string {
		t.Helper()
		var in *strings.Reader
		if stdin != "" {
			in = strings.NewReader(stdin)
		}
		var out, stderr string
		var err error
		if in != nil {
			out, stderr, err = testkit.RunKubectl(t, e.Kubeconfig, in, args...)
		} else {
			out, stderr, err = testkit.RunKubectl(t, e.Kubeconfig, nil, args...)
		}
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, stderr)
		}
		return out
	}
	// Discovery lists the group; kubectl finds the resource by its name.
	e2eutil.Eventually(t, 30*time.Second, "wardle in discovery", func(ctx context.Context) (bool, error) {
		groups, err := e.Clientset.Discovery().ServerGroups()
		if err != nil {
			return false, nil
		}
		for _, g := range groups.Groups {
			if g.Name == "wardle.example.com" {
				return true, nil
			}
		}
		return false, nil
	})
	flunder := fmt.Sprintf("apiVersion: wardle.example.com/v1alpha1\nkind: Flunder\nmetadata:\n  name: one\n  namespace: %s\n", ns)
	run(flunder, "create", "-f", "-")
	var err error
	if out := run("", "get", "flunders", "-n", ns, "-o", "name"); out != "flunder.wardle.example.com/one\n" {
		t.Errorf("kubectl get flunders: %q", out)
	}
	// kubectl explain reads the kinds from capstan's OpenAPI v3, which has
	// them from sample-apiserver's.
	var explained string
	e2eutil.Eventually(t, 30*time.Second, "kubectl explain flunders.spec", func(context.Context) (bool, error) {
		explained, _, err = testkit.RunKubectl(t, e.Kubeconfig, nil, "explain", "flunders.spec")
		return err == nil, nil
	})
	if !strings.Contains(explained, "KIND:       Flunder") || !strings.Contains(explained, "referenceType\t<string>") {
		t.Errorf("kubectl explain flunders.spec:\n%s", explained)
	}
	// A watch through capstan sees a create.
	dyn := dynamic.NewForConfigOrDie(e.Config)
	w, err := dyn.Resource(flunders).Namespace(ns).Watch(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	two := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
		"metadata": map[string]any{"name": "two"}}}
	if _, err := dyn.Resource(flunders).Namespace(ns).Create(e2eutil.Ctx(t), two, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for seen := false; !seen; {
		select {
		case ev := <-w.ResultChan():
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && u.GetName() == "two" {
				seen = true
			}
		case <-deadline:
			t.Fatal("the watch through capstan did not see flunder two")
		}
	}
	// A user without access is refused by capstan, before the backend.
	nobody := rest.CopyConfig(e.Config)
	nobody.Impersonate.UserName = "nobody"
	_, err = dynamic.NewForConfigOrDie(nobody).Resource(flunders).Namespace(ns).List(e2eutil.Ctx(t), metav1.ListOptions{})
	e2eutil.WantStatus(t, err, http.StatusForbidden, metav1.StatusReasonForbidden,
		`flunders.wardle.example.com is forbidden: User "nobody" cannot list resource "flunders" in API group "wardle.example.com" in the namespace "`+ns+`"`)
	run("", "delete", "flunder", "one", "-n", ns)
	// Without its APIService the group is gone.
	if err := e.AggregatorClient(t).ApiregistrationV1().APIServices().Delete(e2eutil.Ctx(t), "v1alpha1.wardle.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 30*time.Second, "wardle gone", func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(flunders).Namespace(ns).List(ctx, metav1.ListOptions{})
		return err != nil && strings.Contains(err.Error(), "could not find the requested resource"), nil
	})
}
