package e2e

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

// env is one server and an admin clientset for a test.
type env struct {
	*testkit.Server
	c kubernetes.Interface
}

func start(t *testing.T, flags ...string) *env {
	t.Helper()
	// Most tests count what a fresh namespace holds: without a
	// --controllers flag of their own, the root-ca-cert-publisher, which
	// puts kube-root-ca.crt in every namespace, does not run.
	if !slices.ContainsFunc(flags, func(f string) bool { return strings.HasPrefix(f, "--controllers") }) {
		flags = append([]string{"--controllers=*,-root-ca-cert-publisher"}, flags...)
	}
	s := testkit.StartServer(t, flags...)
	return &env{Server: s, c: s.Client(t)}
}

// ctx is the context of a test's requests: long enough for -race on a busy
// machine, short enough that a hang fails the test.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

var nameSeq atomic.Int64

var sprintf = fmt.Sprintf

// unique returns a fresh name with the given prefix.
func unique(prefix string) string { return fmt.Sprintf("%s-%d", prefix, nameSeq.Add(1)) }

// namespace creates a fresh namespace and returns its name.
func (e *env) namespace(t *testing.T) string {
	t.Helper()
	name := unique("ns")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := e.c.CoreV1().Namespaces().Create(ctx(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// configMap creates a config map with the given labels and data k=v.
func (e *env) configMap(t *testing.T, ns, name string, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"k": "v"}}
	out, err := e.c.CoreV1().ConfigMaps(ns).Create(ctx(t), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating configmap %s/%s: %v", ns, name, err)
	}
	return out
}

// wantStatus checks that err is an API error with code, reason and, unless
// empty, message.
func wantStatus(t *testing.T, err error, code int32, reason metav1.StatusReason, message string) *metav1.Status {
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

// wantCause checks that status has a cause of type typ on field.
func wantCause(t *testing.T, s *metav1.Status, typ metav1.CauseType, field string) {
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

// response is a raw HTTP answer.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// status decodes the body as a JSON or YAML metav1.Status.
func (r response) status(t *testing.T) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := yaml.Unmarshal(r.body, &s); err != nil || s.Kind != "Status" {
		t.Fatalf("body is not a Status (%v): %.300s", err, r.body)
	}
	return s
}

// wantStatus checks the code, the Status's reason and, unless empty, its
// message.
func (r response) wantStatus(t *testing.T, code int, reason metav1.StatusReason, message string) metav1.Status {
	t.Helper()
	if r.code != code {
		t.Fatalf("code = %d, want %d: %.500s", r.code, code, r.body)
	}
	s := r.status(t)
	if s.Code != int32(code) || s.Reason != reason {
		t.Fatalf("status = %d %s (%s), want %d %s", s.Code, s.Reason, s.Message, code, reason)
	}
	if message != "" && s.Message != message {
		t.Fatalf("message = %q\n want %q", s.Message, message)
	}
	return s
}

// do sends a raw request as the admin. headers are name, value pairs.
func (e *env) do(t *testing.T, method, path string, body []byte, headers ...string) response {
	t.Helper()
	return doWith(t, e.httpClient(t), method, e.URL+path, body, headers...)
}

func (e *env) httpClient(t *testing.T) *http.Client {
	t.Helper()
	hc, err := rest.HTTPClientFor(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

func doWith(t *testing.T, hc *http.Client, method, url string, body []byte, headers ...string) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx(t), method, url, rd)
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
	return response{code: resp.StatusCode, header: resp.Header, body: data}
}

// cmPath is the API path of a config map (or of the collection if name is "").
func cmPath(ns, name string) string {
	p := "/api/v1/namespaces/" + ns + "/configmaps"
	if name != "" {
		p += "/" + name
	}
	return p
}

// eventually polls cond every 50ms for up to d.
func eventually(t *testing.T, d time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx(t), 50*time.Millisecond, d, true, cond)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// warnings collects the Warning headers client-go reports.
type warnings struct {
	mu  sync.Mutex // guards got
	got []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, text)
}

func (w *warnings) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = nil
}

func (w *warnings) joined() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.got, "\n")
}

// clientWith returns a clientset whose config cfg has adjusted.
func (e *env) clientWith(t *testing.T, adjust func(cfg *rest.Config)) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(e.Config)
	adjust(cfg)
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// names lists the names of objects, comma separated, in list order.
func names[T any, PT interface {
	*T
	GetName() string
}](items []T) string {
	out := make([]string, len(items))
	for i := range items {
		out[i] = PT(&items[i]).GetName()
	}
	return strings.Join(out, ",")
}

// requestLog records what a client's transport sees.
type requestLog struct {
	mu      sync.Mutex // guards entries
	entries []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		l.add(r.URL.RequestURI())
		return rt.RoundTrip(r)
	})
}

func (l *requestLog) add(entry string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, entry)
}

func (l *requestLog) seen(part string) bool {
	for _, u := range l.list() {
		if strings.Contains(u, part) {
			return true
		}
	}
	return false
}

func (l *requestLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.entries...)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// expiredSoon retries call until it fails with 410 Expired, as it does
// once the watch cache has followed a compaction, and returns that Status.
func expiredSoon(t *testing.T, call func() error) *metav1.Status {
	t.Helper()
	var last error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if last = call(); apierrors.IsResourceExpired(last) || apierrors.IsGone(last) {
			s := last.(apierrors.APIStatus).Status()
			return &s
		}
	}
	t.Fatalf("no 410 Expired within 10s after a compaction; last answer %v", last)
	return nil
}
