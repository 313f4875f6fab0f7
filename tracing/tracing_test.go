package tracing

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestStartUntraced: a request without a recording span costs no
// allocation, whatever its spans would have carried.
func TestStartUntraced(t *testing.T) {
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		c, span := Start(ctx, "Get etcd3")
		if span.Recording() {
			span.Set(AuditID(c), attribute.String("key", "/pods/a/b"))
		}
		FromContext(c).Event("Get call succeeded")
		span.End()
	})
	if allocs != 0 {
		t.Errorf("allocations = %v, want 0", allocs)
	}
}

// TestStartTraced: a child of the context's span, with the audit ID.
func TestStartTraced(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, parent := tp.Tracer("test").Start(WithAuditID(context.Background(), string(make([]byte, 100))), "parent")
	_, span := Start(ctx, "child")
	if !span.Recording() {
		t.Fatal("child of a recording span does not record")
	}
	span.Set(AuditID(ctx))
	span.Event("done")
	span.End()
	parent.End()
	ended := rec.Ended()
	if len(ended) != 2 || ended[0].Name() != "child" {
		t.Fatalf("ended spans: %v", ended)
	}
	child := ended[0]
	if child.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Errorf("child's parent = %v, want %v", child.Parent().SpanID(), parent.SpanContext().SpanID())
	}
	if got := child.Attributes()[0].Value.AsString(); len(got) != maxAuditID {
		t.Errorf("audit-id of %d bytes, want it cut to %d", len(got), maxAuditID)
	}
	if len(child.Events()) != 1 || child.InstrumentationScope().Name != scope {
		t.Errorf("events %v, scope %q", child.Events(), child.InstrumentationScope().Name)
	}
}
