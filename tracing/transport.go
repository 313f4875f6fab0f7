package tracing

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
)

// Transport passes the trace of a request's context on to the server it
// is sent to: a client span ("HTTP POST") of the context's span, and the
// W3C traceparent header. A request whose context carries no span goes
// straight to rt.
func Transport(rt http.RoundTripper) http.RoundTripper {
	return &transport{base: rt, traced: otelhttp.NewTransport(rt,
		otelhttp.WithPropagators(Propagators()),
		// No tracer provider: the context's span's provider is used.
		otelhttp.WithMeterProvider(noop.NewMeterProvider()),
	)}
}

type transport struct {
	base   http.RoundTripper
	traced http.RoundTripper
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !trace.SpanContextFromContext(r.Context()).IsValid() {
		return t.base.RoundTrip(r)
	}
	return t.traced.RoundTrip(r)
}

// CloseIdleConnections closes the base transport's idle connections, so
// that http.Client.CloseIdleConnections still reaches them.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
