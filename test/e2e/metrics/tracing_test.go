package metrics

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// otlpReceiver is an OTLP/gRPC trace collector in the test process; it
// keeps every span exported to it.
type otlpReceiver struct {
	collectortrace.UnimplementedTraceServiceServer
	addr string

	mu    sync.Mutex
	spans []*tracev1.Span
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rec := &otlpReceiver{addr: l.Addr().String()}
	s := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(s, rec)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return rec
}

func (rec *otlpReceiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			rec.spans = append(rec.spans, ss.Spans...)
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// trace returns the spans of the trace with the given hex ID.
func (rec *otlpReceiver) trace(id string) []*tracev1.Span {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []*tracev1.Span
	for _, s := range rec.spans {
		if hex.EncodeToString(s.TraceId) == id {
			out = append(out, s)
		}
	}
	return out
}

// traceIDs are the hex IDs of every trace received.
func (rec *otlpReceiver) traceIDs() map[string]bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := map[string]bool{}
	for _, s := range rec.spans {
		out[hex.EncodeToString(s.TraceId)] = true
	}
	return out
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// spanNamed finds the span called name.
func spanNamed(spans []*tracev1.Span, name string) *tracev1.Span {
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func spanAttr(s *tracev1.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return anyValue(kv.Value)
		}
	}
	return ""
}

func anyValue(v *commonv1.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonv1.AnyValue_StringValue:
		return x.StringValue
	case *commonv1.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	}
	return v.String()
}

// TestTracing: with --tracing-config-file and no sampling rate, a request
// whose privileged client sends a sampled W3C traceparent is traced under
// it (the handler chain, the verb, storage and the webhook call, with
// kube's span names and attributes) and the trace goes on to the admission
// webhook; unsampled, anonymous and traceless requests export nothing.
func TestTracing(t *testing.T) {
	rec := startOTLPReceiver(t)
	cfg := filepath.Join(t.TempDir(), "tracing.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: "+rec.addr+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := e2eutil.Start(t, "--tracing-config-file="+cfg)
	wh := e2eutil.NewAdmissionWebhook(t)
	var mu sync.Mutex
	parents := map[string]bool{}
	url := wh.Handle("/validate", func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview) {
		mu.Lock()
		parents[r.Header.Get("traceparent")] = true
		mu.Unlock()
		e2eutil.Allow(w, review, nil)
	})
	ns := e.LabeledNamespace(t, "trace")
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("vwc")},
		Webhooks: []arv1.ValidatingWebhook{e2eutil.ValidatingHook("trace.example.com", url, wh.CABundle, "trace")}}
	if _, err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.WaitCalled(t, e, wh, "/validate", ns)

	// First what must not be traced, so that it would be exported before
	// the traced requests' spans are.
	unsampled, anonymous := randomHex(t, 16), randomHex(t, 16)
	cm := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"unsampled"}}`)
	if r := e.Do(t, "POST", e2eutil.CMPath(ns, ""), cm, "traceparent", "00-"+unsampled+"-"+randomHex(t, 8)+"-00"); r.Code != http.StatusCreated {
		t.Fatalf("unsampled create: %d %s", r.Code, r.Body)
	}
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if r := e2eutil.DoWith(t, anon, "GET", e.URL+"/version", nil, "traceparent", "00-"+anonymous+"-"+randomHex(t, 8)+"-01"); r.Code != http.StatusOK {
		t.Fatalf("anonymous GET /version: %d %s", r.Code, r.Body)
	}

	traced, parent := randomHex(t, 16), randomHex(t, 8)
	cm = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"traced"}}`)
	created := e.Do(t, "POST", e2eutil.CMPath(ns, ""), cm, "traceparent", "00-"+traced+"-"+parent+"-01")
	if created.Code != http.StatusCreated {
		t.Fatalf("traced create: %d %s", created.Code, created.Body)
	}
	got, getParent := randomHex(t, 16), randomHex(t, 8)
	if r := e.Do(t, "GET", e2eutil.CMPath(ns, "traced"), nil, "traceparent", "00-"+got+"-"+getParent+"-01"); r.Code != http.StatusOK {
		t.Fatalf("traced get: %d %s", r.Code, r.Body)
	}

	createSpans := []string{"POST /api/v1/namespaces/{:namespace}/configmaps", "audit", "impersonation", "priorityandfairness",
		"authorization", "Create", "Create etcd3", "etcdserverpb.KV/Txn", "Call validating webhook", "HTTP POST"}
	getSpans := []string{"GET /api/v1/namespaces/{:namespace}/configmaps/{:name}", "Get", "cacher.Get"}
	e2eutil.Eventually(t, time.Minute, "the traced requests' spans exported", func(context.Context) (bool, error) {
		return hasSpans(rec.trace(traced), createSpans) && hasSpans(rec.trace(got), getSpans), nil
	})
	spans := rec.trace(traced)
	server := spanNamed(spans, createSpans[0])
	if hex.EncodeToString(server.ParentSpanId) != parent {
		t.Errorf("server span's parent = %x, want the client's %s", server.ParentSpanId, parent)
	}
	if server.Kind != tracev1.Span_SPAN_KIND_SERVER {
		t.Errorf("server span kind = %v", server.Kind)
	}
	auditID := created.Header.Get("Audit-Id")
	for name, want := range map[string]map[string]string{
		createSpans[0]:            {"http.target": e2eutil.CMPath(ns, ""), "audit-id": auditID},
		"Create":                  {"verb": "create", "resource": "configmaps", "namespace": ns, "scope": "resource", "audit-id": auditID},
		"Create etcd3":            {"key": "/configmaps/" + ns + "/traced", "resource": "configmaps", "audit-id": auditID},
		"Call validating webhook": {"webhook": "trace.example.com", "configuration": vwc.Name, "operation": "CREATE"},
	} {
		s := spanNamed(spans, name)
		for k, v := range want {
			if got := spanAttr(s, k); got != v {
				t.Errorf("span %q: %s = %q, want %q", name, k, got, v)
			}
		}
	}
	// The etcd client's span, under the storage span that called it.
	if txn, store := spanNamed(spans, "etcdserverpb.KV/Txn"), spanNamed(spans, "Create etcd3"); string(txn.ParentSpanId) != string(store.SpanId) ||
		txn.Kind != tracev1.Span_SPAN_KIND_CLIENT {
		t.Errorf("etcd client span: kind %v, parent %x, want a client span under Create etcd3 (%x)", txn.Kind, txn.ParentSpanId, store.SpanId)
	}
	client := spanNamed(spans, "HTTP POST")
	mu.Lock()
	sent := parents["00-"+traced+"-"+hex.EncodeToString(client.SpanId)+"-01"]
	unsampledSent := slices.ContainsFunc(keys(parents), func(tp string) bool { return len(tp) == 55 && tp[3:35] == unsampled && tp[53:] == "00" })
	mu.Unlock()
	if !sent {
		t.Errorf("the webhook did not get the traceparent of the client span; it got %v", keys(parents))
	}
	if !unsampledSent {
		t.Errorf("the webhook did not get the unsampled request's traceparent; it got %v", keys(parents))
	}
	ids := rec.traceIDs()
	delete(ids, traced)
	delete(ids, got)
	if len(ids) > 0 {
		t.Errorf("traces exported beside the sampled ones (unsampled %s, anonymous %s): %v", unsampled, anonymous, ids)
	}
}

func hasSpans(spans []*tracev1.Span, names []string) bool {
	for _, n := range names {
		if spanNamed(spans, n) == nil {
			return false
		}
	}
	return true
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
