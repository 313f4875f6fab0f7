package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
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

// servingCert is a CA and a certificate it signed for dnsName.
func servingCert(t *testing.T, dnsName string) (caPEM []byte, cert tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestAdmissionWebhookService: a webhook given as a Service is reached at
// the Service's ExternalName host on the clientConfig's port, over TLS for
// <service>.<namespace>.svc, at the service path.
func TestAdmissionWebhookService(t *testing.T) {
	e := start(t)
	ns := e.labeledNamespace(t, "svc")
	caPEM, cert := servingCert(t, "hook."+ns+".svc")
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
		allow(w, &review, &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "via service"}})
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, portText, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(portText)

	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hook"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}
	if _, err := e.c.CoreV1().Services(ns).Create(ctx(t), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h := validatingHook("svc.example.com", "", caPEM, "svc")
	h.ClientConfig = arv1.WebhookClientConfig{CABundle: caPEM,
		Service: &arv1.ServiceReference{Namespace: ns, Name: "hook", Path: ptr.To("/validate/here"), Port: ptr.To(int32(port))}}
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: unique("svc")}, Webhooks: []arv1.ValidatingWebhook{h}}
	if _, err := e.c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last error
	eventually(t, 30*time.Second, "service webhook refuses", func(ctx2 context.Context) (bool, error) {
		_, last = e.c.CoreV1().ConfigMaps(ns).Create(ctx2, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "x-"}}, metav1.CreateOptions{})
		return last != nil, nil
	})
	wantStatus(t, last, http.StatusBadRequest, "", `admission webhook "svc.example.com" denied the request: via service`)
	if p := <-paths; p != "/validate/here" {
		t.Errorf("path %q", p)
	}
}

// TestAdmissionWebhookCredentials: webhooks are called with the client
// credentials of the kubeconfig the --admission-control-config-file's
// WebhookAdmission names, the user chosen by the webhook's host.
func TestAdmissionWebhookCredentials(t *testing.T) {
	dir := t.TempDir()
	wh := newAdmissionWebhook(t)
	auths := make(chan string, 100)
	url := wh.handle("/creds", func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview) {
		select {
		case auths <- r.Header.Get("Authorization"):
		default:
		}
		allow(w, review, &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "seen"}})
	})
	host := strings.TrimPrefix(wh.srv.URL, "https://")
	kubeconfig := filepath.Join(dir, "webhooks.kubeconfig")
	writeFile(t, kubeconfig, []byte("apiVersion: v1\nkind: Config\nusers:\n- name: '*'\n  user: {token: other}\n- name: '"+host+"'\n  user: {token: s3cret}\n"))
	admissionConfig := filepath.Join(dir, "admission.yaml")
	writeFile(t, admissionConfig, []byte(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: `+kubeconfig+"\n"))
	e := start(t, "--admission-control-config-file", admissionConfig)
	ns := e.labeledNamespace(t, "creds")
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: unique("creds")},
		Webhooks: []arv1.ValidatingWebhook{validatingHook("creds.example.com", url, wh.caBundle, "creds")}}
	if _, err := e.c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "webhook called", func(ctx2 context.Context) (bool, error) {
		_, err := e.c.CoreV1().ConfigMaps(ns).Create(ctx2, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "x-"}}, metav1.CreateOptions{})
		return err != nil, nil
	})
	if got := <-auths; got != "Bearer s3cret" {
		t.Errorf("Authorization %q, want the token of the webhook's host", got)
	}
}
