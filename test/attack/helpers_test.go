// Package attack holds one end-to-end test per class of attack on an API
// server that kube has met, each named for the CVE it stands for (or
// saying that there is none), against a real capstan.
package attack

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/testserver"
)

// server is a started capstan with the admin's clients.
type server struct {
	*testserver.Server
	client kubernetes.Interface
	http   *http.Client
}

func start(t *testing.T, opts ...testserver.Option) *server {
	t.Helper()
	s := testserver.Start(t, opts...)
	return &server{Server: s, client: kubernetes.NewForConfigOrDie(s.RESTConfig()), http: httpClient(t, s.RESTConfig())}
}

func httpClient(t *testing.T, cfg *rest.Config) *http.Client {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

// ctx is a request's context: long enough for -race on a busy machine,
// short enough that a hang fails the test.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// answer is a response read whole.
type answer struct {
	code   int
	header http.Header
	body   []byte
}

// status is the answer's body as a Status; the test fails if it is not one.
func (a answer) status(t *testing.T) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal(a.body, &s); err != nil || s.Kind != "Status" {
		t.Fatalf("%d with a body that is not a Status: %.300q", a.code, a.body)
	}
	return s
}

func (s *server) do(t *testing.T, method, path, contentType string, body []byte) answer {
	t.Helper()
	return doWith(t, s.http, method, s.URL+path, contentType, body)
}

func doWith(t *testing.T, hc *http.Client, method, url, contentType string, body []byte) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{code: resp.StatusCode, header: resp.Header, body: data}
}

// ready fails the test unless the server still answers /readyz: an attack
// must cost the attacker a refusal, not the server its life.
func (s *server) ready(t *testing.T) {
	t.Helper()
	if a := s.do(t, http.MethodGet, "/readyz", "", nil); a.code != http.StatusOK {
		t.Fatalf("/readyz after the attack: %d %s", a.code, a.body)
	}
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
