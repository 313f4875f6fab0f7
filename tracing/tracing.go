// Package tracing is OpenTelemetry tracing as kube-apiserver does it: the
// TracingConfiguration of --tracing-config-file, a provider exporting over
// OTLP/gRPC that samples as kube (a sampled parent's children always, new
// traces at samplingRatePerMillion), child spans started from the span in
// a request's context, and the W3C traceparent passed on to webhooks and
// proxied backends.
//
// With tracing off no request carries a span, so Start returns at once
// and nothing is allocated: the cost of a span is paid only for requests
// that are traced.
package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// scope is kube's instrumentation scope of the spans its code starts.
const scope = "k8s.io/component-base/tracing"

// Span is a span of a traced request; the zero Span (the request is not
// traced, or not sampled) does nothing.
type Span struct{ s trace.Span }

// Start starts a child of ctx's span if that span is recording, and
// returns ctx unchanged and the zero Span otherwise. Attributes are set
// through the Span, guarded by Recording, so that an untraced request
// does not build them.
func Start(ctx context.Context, name string) (context.Context, Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, Span{}
	}
	ctx, s := parent.TracerProvider().Tracer(scope).Start(ctx, name)
	return ctx, Span{s}
}

// FromContext is the request's span, to add events to.
func FromContext(ctx context.Context) Span {
	if s := trace.SpanFromContext(ctx); s.IsRecording() {
		return Span{s}
	}
	return Span{}
}

// Recording tells whether the span records, and so whether attributes
// and events are worth building.
func (s Span) Recording() bool { return s.s != nil }

// Set sets attributes of the span.
func (s Span) Set(attrs ...attribute.KeyValue) {
	if s.s != nil {
		s.s.SetAttributes(attrs...)
	}
}

// Event adds a point-in-time event.
func (s Span) Event(name string, attrs ...attribute.KeyValue) {
	if s.s != nil {
		s.s.AddEvent(name, trace.WithAttributes(attrs...))
	}
}

// End ends the span.
func (s Span) End() {
	if s.s != nil {
		s.s.End()
	}
}

// Propagators are kube's: W3C trace context and baggage.
func Propagators() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

type auditIDKey struct{}

// maxAuditID is how much of a client's Audit-ID kube puts in a span.
const maxAuditID = 64

// WithAuditID keeps the request's audit ID for the attributes of its
// spans. Only a traced request needs it.
func WithAuditID(ctx context.Context, id string) context.Context {
	if len(id) > maxAuditID {
		id = id[:maxAuditID]
	}
	return context.WithValue(ctx, auditIDKey{}, id)
}

// AuditID is the "audit-id" attribute kube gives its spans.
func AuditID(ctx context.Context) attribute.KeyValue {
	id, _ := ctx.Value(auditIDKey{}).(string)
	return attribute.String("audit-id", id)
}
