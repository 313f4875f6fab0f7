package filters

import (
	"net/http"
	"slices"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/tracing"
)

// monitoringGroup is kube's group of monitoring clients, whose trace
// context is trusted like that of system:masters.
const monitoringGroup = "system:monitoring"

// WithTracing starts the request's server span ("KubernetesAPI", named
// for its resource path once known), as kube does after authentication:
// the traceparent of a system:masters or system:monitoring client is the
// span's parent, so its sampling decision holds; any other client's is
// only linked, and the request is sampled at the configured rate. Off
// (nil) without a tracer provider.
func WithTracing(tp trace.TracerProvider) Filter {
	if tp == nil {
		return nil
	}
	opts := []otelhttp.Option{
		otelhttp.WithPropagators(tracing.Propagators()),
		otelhttp.WithPublicEndpointFn(notPrivileged),
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		otelhttp.WithSpanNameFormatter(spanName),
	}
	return func(h http.Handler) http.Handler {
		inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if span := trace.SpanFromContext(r.Context()); span.IsRecording() {
				span.SetAttributes(attribute.String("http.target", r.URL.RequestURI()), tracing.AuditID(r.Context()))
			}
			h.ServeHTTP(w, r)
		})
		return otelhttp.NewHandler(inner, "KubernetesAPI", opts...)
	}
}

// WithTraceAuditID keeps the request's audit ID in its context for the
// "audit-id" attribute of its spans; it reads it from the response
// header WithAuditID set, before the timeout filter gives handlers a
// header map of their own. Off (nil) without a tracer provider.
func WithTraceAuditID(tp trace.TracerProvider) Filter {
	if tp == nil {
		return nil
	}
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(tracing.WithAuditID(r.Context(), headerValue(w.Header(), auditIDKey))))
		})
	}
}

// WithFilterSpan spans the rest of the chain from the filter named name
// on, as kube's filter latency tracker does ("audit", "authorization",
// ...). Off (nil) without a tracer provider.
func WithFilterSpan(tp trace.TracerProvider, name string) Filter {
	if tp == nil {
		return nil
	}
	tracer := tp.Tracer("k8s.op/apiserver/pkg/endpoints/filterlatency")
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !trace.SpanFromContext(r.Context()).IsRecording() {
				h.ServeHTTP(w, r)
				return
			}
			ctx, span := tracer.Start(r.Context(), name)
			defer span.End()
			h.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// notPrivileged tells otelhttp whether the client's trace context is only
// to be linked: it is, unless the user is in system:masters or
// system:monitoring.
func notPrivileged(r *http.Request) bool {
	u, ok := authn.UserFrom(r.Context())
	if !ok {
		return true
	}
	return !slices.ContainsFunc(u.Groups, func(g string) bool {
		return g == authn.SystemPrivilegedGroup || g == monitoringGroup
	})
}

// spanName is kube's: the method and the resource path with the
// namespace and name left as placeholders, or the method alone for a
// non-resource request.
func spanName(_ string, r *http.Request) string {
	info, ok := request.InfoFrom(r.Context())
	if !ok || !info.IsResourceRequest {
		return r.Method
	}
	name := "/" + info.APIPrefix
	if info.APIGroup != "" {
		name += "/" + info.APIGroup
	}
	name += "/" + info.APIVersion
	if info.Namespace != "" {
		name += "/namespaces/{:namespace}"
	}
	name += "/" + info.Resource
	if info.Name != "" {
		name += "/{:name}"
	}
	if info.Subresource != "" {
		name += "/" + info.Subresource
	}
	return r.Method + " " + name
}
