package webhook

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-io/capstan/tracing"
)

// startCallSpan starts kube's span of a webhook call ("Call mutating
// webhook", "Call validating webhook") for a traced request.
func startCallSpan(ctx context.Context, h *hook, req *request, uid types.UID, mutating bool) (context.Context, tracing.Span) {
	name := "Call validating webhook"
	if mutating {
		name = "Call mutating webhook"
	}
	ctx, span := tracing.Start(ctx, name)
	if span.Recording() {
		span.Set(attribute.String("configuration", h.configuration), attribute.String("webhook", h.name),
			attribute.String("resource", req.attrs.Resource.String()), attribute.String("subresource", req.attrs.Subresource),
			attribute.String("operation", string(req.attrs.Operation)), attribute.String("UID", string(uid)))
	}
	return ctx, span
}
