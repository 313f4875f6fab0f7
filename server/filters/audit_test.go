package filters

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/audit/backend"
	"github.com/capstan-io/capstan/request"
)

type discard struct{ io.Writer }

func (discard) Close() error { return nil }

// BenchmarkAuditGet is the cost of auditing a GET at the Metadata level
// against auditing off: the filters and the handler's response hook.
func BenchmarkAuditGet(b *testing.B) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		audit.LogResponseObject(r.Context(), cm, schema.GroupVersion{Version: "v1"}, scheme.Codecs)
		w.WriteHeader(http.StatusOK)
	})
	log, _ := backend.NewLog(discard{io.Discard}, backend.FormatJSON, slog.New(slog.DiscardHandler))
	on := audit.Config{Policy: audit.NewPolicy(&auditv1.Policy{Rules: []auditv1.PolicyRule{{Level: auditv1.LevelMetadata}}}), Sink: log}
	for name, c := range map[string]audit.Config{"off": {}, "metadata": on} {
		b.Run(name, func(b *testing.B) {
			logger := slog.New(slog.DiscardHandler)
			h := Chain(handler, WithAuditID(c), WithRequestInfo(request.NewParser()), WithAudit(c, logger))
			r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps/c", nil)
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), r)
			}
		})
	}
}
