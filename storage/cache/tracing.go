package cache

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/tracing"
)

// startGetSpan starts kube's span of a get through the cache.
func startGetSpan(ctx context.Context, key string, opts storage.GetOptions) (context.Context, tracing.Span) {
	ctx, span := tracing.Start(ctx, "cacher.Get")
	if span.Recording() {
		span.Set(tracing.AuditID(ctx), attribute.String("key", key), attribute.String("resource-version", opts.ResourceVersion))
	}
	return ctx, span
}

// startSpan starts kube's span of a list or watch served by the cache
// ("cacher.GetList", "cacher.Watch") for a traced request.
func (c *Cacher) startSpan(ctx context.Context, name string) (context.Context, tracing.Span) {
	ctx, span := tracing.Start(ctx, name)
	if span.Recording() {
		span.Set(tracing.AuditID(ctx), attribute.String("type", c.backend.groupResource.String()))
	}
	return ctx, span
}
