package filters

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/flowcontrol"
	"github.com/capstan-io/capstan/request"
)

// benchWriter is a ResponseWriter that a benchmark reuses.
type benchWriter struct{ header http.Header }

func (w *benchWriter) Header() http.Header         { return w.header }
func (w *benchWriter) WriteHeader(int)             {}
func (w *benchWriter) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkListChain is the server's filter chain, in its order, around
// a handler that answers at once: what the filters cost a list of a
// system:masters user (exempt from APF, as capstan-load's lists are),
// with and without kube's per-filter latencies.
func BenchmarkListChain(b *testing.B) {
	for _, timed := range []bool{false, true} {
		name := "untimed"
		if timed {
			name = "filter-latencies"
		}
		b.Run(name, func(b *testing.B) { benchmarkListChain(b, timed) })
	}
}

func benchmarkListChain(b *testing.B, timed bool) {
	logger := slog.New(slog.DiscardHandler)
	user := &authn.User{Name: "admin", Groups: []string{"system:masters", "system:authenticated"}}
	auth := authn.AuthenticatorFunc(func(*http.Request) (*authn.Response, bool, error) {
		return &authn.Response{User: user}, true, nil
	})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("k8s"))
	})
	fc := flowcontrol.NewController(flowcontrol.Config{Logger: logger})
	latency := func(name string, f Filter) Filter {
		if timed {
			return WithFilterLatency(name, f)
		}
		return f
	}
	h := Chain(handler,
		WithAuditID(audit.Config{}),
		WithPanicRecovery(logger),
		WithRequestInfo(request.NewParser()),
		WithMetrics(),
		WithLongRunningStop(context.Background()),
		WithTimeout(time.Minute),
		WithWarningRecorder(),
		latency("authentication", WithAuthentication(auth, authn.RequestHeaders{}, logger)),
		latency("audit", WithAudit(audit.Config{}, logger)),
		latency("impersonation", WithImpersonation(authz.AlwaysAllow, logger)),
		latency("priorityandfairness", WithPriorityAndFairness(fc)),
		latency("authorization", WithAuthorization(authz.AlwaysAllow, logger)),
	)
	r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps", nil)
	r.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
	w := &benchWriter{header: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.header)
		h.ServeHTTP(w, r)
	}
}
