package e2eutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/internal/testkit"
)

// Env is one server and an admin clientset for a test.
type Env struct {
	*testkit.Server
	Clientset kubernetes.Interface
}

// Start runs a fresh capstan with flags for the test and returns it with
// an admin clientset; it stops when the test ends.
func Start(t *testing.T, flags ...string) *Env {
	t.Helper()
	// Most tests count what a fresh namespace holds: without a
	// --controllers flag of their own, the root-ca-cert-publisher, which
	// puts kube-root-ca.crt in every namespace, does not run.
	if !slices.ContainsFunc(flags, func(f string) bool { return strings.HasPrefix(f, "--controllers") }) {
		flags = append([]string{"--controllers=*,-root-ca-cert-publisher"}, flags...)
	}
	s := testkit.StartServer(t, flags...)
	return &Env{Server: s, Clientset: s.Client(t)}
}

// Ctx is the context of a test's requests: long enough for -race on a busy
// machine, short enough that a hang fails the test.
func Ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// NameSeq numbers the names Unique makes.
var NameSeq atomic.Int64

// Sprintf is fmt.Sprintf, short for the tests' tables.
var Sprintf = fmt.Sprintf

// Unique returns a fresh name with the given prefix.
func Unique(prefix string) string { return fmt.Sprintf("%s-%d", prefix, NameSeq.Add(1)) }

// Namespace creates a fresh namespace and returns its name.
func (e *Env) Namespace(t *testing.T) string {
	t.Helper()
	name := Unique("ns")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := e.Clientset.CoreV1().Namespaces().Create(Ctx(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// ConfigMap creates a config map with the given labels and data k=v.
func (e *Env) ConfigMap(t *testing.T, ns, name string, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"k": "v"}}
	out, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(Ctx(t), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating configmap %s/%s: %v", ns, name, err)
	}
	return out
}

// WantStatus checks that err is an API error with code, reason and, unless
// empty, message.
func WantStatus(t *testing.T, err error, code int32, reason metav1.StatusReason, message string) *metav1.Status {
	t.Helper()
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		t.Fatalf("error = %v (%T), want a %d %s Status", err, err, code, reason)
	}
	s := se.Status()
	if s.Code != code || s.Reason != reason || s.Status != metav1.StatusFailure {
		t.Fatalf("status = %d %s %q (%s), want %d %s", s.Code, s.Reason, s.Status, s.Message, code, reason)
	}
	if message != "" && s.Message != message {
		t.Fatalf("message = %q\n want %q", s.Message, message)
	}
	return &s
}

// WantCause checks that status has a cause of type typ on field.
func WantCause(t *testing.T, s *metav1.Status, typ metav1.CauseType, field string) {
	t.Helper()
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Type == typ && c.Field == field {
				return
			}
		}
	}
	t.Fatalf("status %q has no cause %s on %s: %+v", s.Message, typ, field, s.Details)
}

// Response is a raw HTTP answer.
type Response struct {
	Code   int
	Header http.Header
	Body   []byte
}

// Status decodes the body as a JSON or YAML metav1.Status.
func (r Response) Status(t *testing.T) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := yaml.Unmarshal(r.Body, &s); err != nil || s.Kind != "Status" {
		t.Fatalf("body is not a Status (%v): %.300s", err, r.Body)
	}
	return s
}

// WantStatus checks the code, the Status's reason and, unless empty, its
// message.
func (r Response) WantStatus(t *testing.T, code int, reason metav1.StatusReason, message string) metav1.Status {
	t.Helper()
	if r.Code != code {
		t.Fatalf("code = %d, want %d: %.500s", r.Code, code, r.Body)
	}
	s := r.Status(t)
	if s.Code != int32(code) || s.Reason != reason {
		t.Fatalf("status = %d %s (%s), want %d %s", s.Code, s.Reason, s.Message, code, reason)
	}
	if message != "" && s.Message != message {
		t.Fatalf("message = %q\n want %q", s.Message, message)
	}
	return s
}

// Do sends a raw request as the admin. headers are name, value pairs.
func (e *Env) Do(t *testing.T, method, path string, body []byte, headers ...string) Response {
	t.Helper()
	return DoWith(t, e.HTTPClient(t), method, e.URL+path, body, headers...)
}

func (e *Env) HTTPClient(t *testing.T) *http.Client {
	t.Helper()
	hc, err := rest.HTTPClientFor(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

func DoWith(t *testing.T, hc *http.Client, method, url string, body []byte, headers ...string) Response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(Ctx(t), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return Response{Code: resp.StatusCode, Header: resp.Header, Body: data}
}

// CMPath is the API path of a config map (or of the collection if name is "").
func CMPath(ns, name string) string {
	p := "/api/v1/namespaces/" + ns + "/configmaps"
	if name != "" {
		p += "/" + name
	}
	return p
}

// Eventually polls cond every 50ms for up to d.
func Eventually(t *testing.T, d time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(Ctx(t), 50*time.Millisecond, d, true, cond)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Warnings collects the Warning headers client-go reports.
type Warnings struct {
	mu  sync.Mutex // guards got
	Got []string
}

func (w *Warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.Got = append(w.Got, text)
}

func (w *Warnings) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.Got = nil
}

func (w *Warnings) Joined() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.Got, "\n")
}

// ClientWith returns a clientset whose config cfg has adjusted.
func (e *Env) ClientWith(t *testing.T, adjust func(cfg *rest.Config)) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(e.Config)
	adjust(cfg)
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type RoundTripperFunc func(*http.Request) (*http.Response, error)

func (f RoundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
