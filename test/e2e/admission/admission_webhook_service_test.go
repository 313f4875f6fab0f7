package admission

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestAdmissionWebhookService: a webhook given as a Service is reached at
// the Service's ExternalName host on the clientConfig's port, over TLS for
// <service>.<namespace>.svc, at the service path.
func TestAdmissionWebhookService(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.LabeledNamespace(t, "svc")
	caPEM, cert := e2eutil.ServingCert(t, "hook."+ns+".svc")
	paths := make(chan string, 100)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		_ = json.NewDecoder(r.Body).Decode(&review)
		select {
		case paths <- r.URL.Path:
		default:
		}
		e2eutil.Allow(w, &review, &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "via service"}})
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, portText, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(portText)

	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hook"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}
	if _, err := e.Clientset.CoreV1().Services(ns).Create(e2eutil.Ctx(t), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h := e2eutil.ValidatingHook("svc.example.com", "", caPEM, "svc")
	h.ClientConfig = arv1.WebhookClientConfig{CABundle: caPEM,
		Service: &arv1.ServiceReference{Namespace: ns, Name: "hook", Path: ptr.To("/validate/here"), Port: ptr.To(int32(port))}}
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("svc")}, Webhooks: []arv1.ValidatingWebhook{h}}
	if _, err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last error
	e2eutil.Eventually(t, 30*time.Second, "service webhook refuses", func(ctx2 context.Context) (bool, error) {
		_, last = e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx2, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "x-"}}, metav1.CreateOptions{})
		return last != nil, nil
	})
	e2eutil.WantStatus(t, last, http.StatusBadRequest, "", `admission webhook "svc.example.com" denied the request: via service`)
	if p := <-paths; p != "/validate/here" {
		t.Errorf("path %q", p)
	}
}

// TestAdmissionWebhookCredentials: webhooks are called with the client
// credentials of the kubeconfig the --admission-control-config-file's
// WebhookAdmission names, the user chosen by the webhook's host.
func TestAdmissionWebhookCredentials(t *testing.T) {
	dir := t.TempDir()
	wh := e2eutil.NewAdmissionWebhook(t)
	auths := make(chan string, 100)
	url := wh.Handle("/creds", func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview) {
		select {
		case auths <- r.Header.Get("Authorization"):
		default:
		}
		e2eutil.Allow(w, review, &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "seen"}})
	})
	host := strings.TrimPrefix(wh.Server.URL, "https://")
	kubeconfig := filepath.Join(dir, "webhooks.kubeconfig")
	e2eutil.WriteFile(t, kubeconfig, []byte("apiVersion: v1\nkind: Config\nusers:\n- name: '*'\n  user: {token: other}\n- name: '"+host+"'\n  user: {token: s3cret}\n"))
	admissionConfig := filepath.Join(dir, "admission.yaml")
	e2eutil.WriteFile(t, admissionConfig, []byte(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: `+kubeconfig+"\n"))
	e := e2eutil.Start(t, "--admission-control-config-file", admissionConfig)
	ns := e.LabeledNamespace(t, "creds")
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("creds")},
		Webhooks: []arv1.ValidatingWebhook{e2eutil.ValidatingHook("creds.example.com", url, wh.CABundle, "creds")}}
	if _, err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 30*time.Second, "webhook called", func(ctx2 context.Context) (bool, error) {
		_, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx2, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "x-"}}, metav1.CreateOptions{})
		return err != nil, nil
	})
	if got := <-auths; got != "Bearer s3cret" {
		t.Errorf("Authorization %q, want the token of the webhook's host", got)
	}
}

// TestAdmissionWebhookExecCredentials: a kubeconfig user with an exec
// plugin and impersonation (as, as-groups) calls webhooks with the
// plugin's token and the Impersonate-* headers, as client-go sends them.
func TestAdmissionWebhookExecCredentials(t *testing.T) {
	dir := t.TempDir()
	wh := e2eutil.NewAdmissionWebhook(t)
	headers := make(chan http.Header, 100)
	url := wh.Handle("/exec", func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview) {
		select {
		case headers <- r.Header.Clone():
		default:
		}
		e2eutil.Allow(w, review, &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "seen"}})
	})
	plugin := filepath.Join(dir, "plugin.sh")
	e2eutil.WriteFile(t, plugin, []byte("#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"from-exec\"}}'\n"))
	if err := os.Chmod(plugin, 0o755); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(wh.Server.URL, "https://")
	kubeconfig := filepath.Join(dir, "webhooks.kubeconfig")
	e2eutil.WriteFile(t, kubeconfig, []byte("apiVersion: v1\nkind: Config\nusers:\n- name: '"+host+"'\n  user:\n    as: caller\n    as-groups: [callers]\n"+
		"    exec: {apiVersion: client.authentication.k8s.io/v1, command: "+plugin+", interactiveMode: Never}\n"))
	admissionConfig := filepath.Join(dir, "admission.yaml")
	e2eutil.WriteFile(t, admissionConfig, []byte(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: `+kubeconfig+"\n"))
	e := e2eutil.Start(t, "--admission-control-config-file", admissionConfig)
	ns := e.LabeledNamespace(t, "exec")
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("exec")},
		Webhooks: []arv1.ValidatingWebhook{e2eutil.ValidatingHook("exec.example.com", url, wh.CABundle, "exec")}}
	if _, err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 30*time.Second, "webhook called", func(ctx2 context.Context) (bool, error) {
		_, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx2, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "x-"}}, metav1.CreateOptions{})
		return err != nil && strings.Contains(err.Error(), "seen"), nil
	})
	h := <-headers
	if h.Get("Authorization") != "Bearer from-exec" || h.Get("Impersonate-User") != "caller" || h.Get("Impersonate-Group") != "callers" {
		t.Errorf("headers %v, want the exec plugin's token and the impersonation", h)
	}
}
