package metrics

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	compbase "k8s.io/component-base/metrics"

	"github.com/capstan-io/capstan/request"
)

// BenchmarkRequestMetrics is what capstan's metrics cost one GET of an
// object: the request families (Start, Routed, Done), the in-flight
// watermark, authentication and authorization, and APF's dispatch.
func BenchmarkRequestMetrics(b *testing.B) {
	r := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps/a", nil)
	info, _ := request.NewParser().Parse(r)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		ctx, rq := Start(r.Context(), start)
		done := Executing(false)
		Authentication(start, true, nil, "admin")
		executed := FlowExecuting("exempt", "exempt", 1, start)
		Authorization(start, "allowed")
		routed := Routed(r.WithContext(ctx), info)
		routed()
		executed()
		done()
		rq.Done(r, "", info, 200, 512)
	}
}

// BenchmarkRequestMetricsComponentBase records the same series through
// k8s.io/component-base/metrics, kube's wrapper of client_golang: the
// alternative the library was chosen against.
func BenchmarkRequestMetricsComponentBase(b *testing.B) {
	reg := compbase.NewKubeRegistry()
	counter := func(name string, labels ...string) *compbase.CounterVec {
		v := compbase.NewCounterVec(&compbase.CounterOpts{Name: name, Help: name}, labels)
		reg.MustRegister(v)
		return v
	}
	histogram := func(name string, labels ...string) *compbase.HistogramVec {
		v := compbase.NewHistogramVec(&compbase.HistogramOpts{Name: name, Help: name, Buckets: prometheus.DefBuckets}, labels)
		reg.MustRegister(v)
		return v
	}
	gauge := func(name string, labels ...string) *compbase.GaugeVec {
		v := compbase.NewGaugeVec(&compbase.GaugeOpts{Name: name, Help: name}, labels)
		reg.MustRegister(v)
		return v
	}
	total := counter("request_total", "verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code")
	duration := histogram("request_duration", "verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")
	sli := histogram("request_sli", "verb", "group", "version", "resource", "subresource", "scope", "component")
	sizes := histogram("response_sizes", "verb", "group", "version", "resource", "subresource", "scope", "component")
	fieldValidation := histogram("field_validation", "field_validation")
	inflight := gauge("inflight", "request_kind")
	users, attempts, authnDur := counter("users", "username"), counter("attempts", "result"), histogram("authn", "result")
	authzAttempts, authzDur := counter("authz_attempts", "result"), histogram("authz", "result")
	dispatched, wait := counter("dispatched", "priority_level", "flow_schema"), histogram("wait", "priority_level", "flow_schema", "execute")
	seats, execution := histogram("seats", "priority_level", "flow_schema"), histogram("execution", "priority_level", "flow_schema", "type")
	executing, executingSeats := gauge("executing", "priority_level", "flow_schema"), gauge("executing_seats", "priority_level", "flow_schema")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		inflight.WithContext(ctx).WithLabelValues("readOnly").Inc()
		users.WithContext(ctx).WithLabelValues("admin").Inc()
		attempts.WithContext(ctx).WithLabelValues("success").Inc()
		authnDur.WithContext(ctx).WithLabelValues("success").Observe(time.Since(start).Seconds())
		dispatched.WithContext(ctx).WithLabelValues("exempt", "exempt").Inc()
		wait.WithContext(ctx).WithLabelValues("exempt", "exempt", "true").Observe(time.Since(start).Seconds())
		seats.WithContext(ctx).WithLabelValues("exempt", "exempt").Observe(1)
		executing.WithContext(ctx).WithLabelValues("exempt", "exempt").Inc()
		executingSeats.WithContext(ctx).WithLabelValues("exempt", "exempt").Add(1)
		authzAttempts.WithContext(ctx).WithLabelValues("allowed").Inc()
		authzDur.WithContext(ctx).WithLabelValues("allowed").Observe(time.Since(start).Seconds())
		executing.WithContext(ctx).WithLabelValues("exempt", "exempt").Dec()
		executingSeats.WithContext(ctx).WithLabelValues("exempt", "exempt").Add(-1)
		execution.WithContext(ctx).WithLabelValues("exempt", "exempt", "regular").Observe(time.Since(start).Seconds())
		inflight.WithContext(ctx).WithLabelValues("readOnly").Dec()
		d := time.Since(start).Seconds()
		total.WithContext(ctx).WithLabelValues("GET", "", "", "v1", "configmaps", "", "resource", "apiserver", "200").Inc()
		duration.WithContext(ctx).WithLabelValues("GET", "", "", "v1", "configmaps", "", "resource", "apiserver").Observe(d)
		fieldValidation.WithContext(ctx).WithLabelValues("")
		sli.WithContext(ctx).WithLabelValues("GET", "", "v1", "configmaps", "", "resource", "apiserver").Observe(d)
		sizes.WithContext(ctx).WithLabelValues("GET", "", "v1", "configmaps", "", "resource", "apiserver").Observe(512)
	}
}
