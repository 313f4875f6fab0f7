package endpoints

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/tracing"
)

// verbSpans are the names of kube's handler spans, by verb. A watch is
// spanned as kube's watch server spans it, for as long as it serves.
var verbSpans = map[string]string{
	"get": "Get", "list": "List", "create": "Create", "update": "Update", "patch": "Patch",
	"delete": "Delete", "deletecollection": "Delete", "watch": "WatchServer.HandleHTTP",
}

// maxUserAgent is where kube cuts a user agent in span attributes.
const maxUserAgent = 1024

// startVerbSpan starts the handler's span of a traced request, with the
// attributes kube's handlers give it.
func startVerbSpan(ctx context.Context, r *http.Request, info *request.Info) (context.Context, tracing.Span) {
	if !tracing.FromContext(ctx).Recording() {
		return ctx, tracing.Span{}
	}
	name, ok := verbSpans[info.Verb]
	if !ok {
		return ctx, tracing.Span{}
	}
	ctx, span := tracing.Start(ctx, name)
	if info.Verb == "watch" {
		span.Set(tracing.AuditID(ctx), attribute.String("method", r.Method), attribute.String("url", r.URL.Path),
			attribute.String("protocol", r.Proto))
		return ctx, span
	}
	span.Set(
		attribute.String("accept", r.Header.Get("Accept")),
		tracing.AuditID(ctx),
		attribute.String("client", clientIP(r)),
		attribute.String("api-group", info.APIGroup),
		attribute.String("api-version", info.APIVersion),
		attribute.String("name", info.Name),
		attribute.String("subresource", info.Subresource),
		attribute.String("namespace", info.Namespace),
		attribute.String("protocol", r.Proto),
		attribute.String("resource", info.Resource),
		attribute.String("scope", metrics.ResourceLabels(r, info).Scope),
		attribute.String("url", r.URL.Path),
		attribute.String("user-agent", userAgent(r)),
		attribute.String("verb", info.Verb),
	)
	return ctx, span
}

func clientIP(r *http.Request) string {
	if ip := utilnet.GetClientIP(r); ip != nil {
		return ip.String()
	}
	return "unknown"
}

func userAgent(r *http.Request) string {
	ua := utilnet.GetHTTPClient(r)
	if len(ua) > maxUserAgent {
		ua = ua[:maxUserAgent] + "...TRUNCATED"
	}
	return ua
}
