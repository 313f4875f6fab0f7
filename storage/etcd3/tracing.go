package etcd3

import (
	"context"
	"reflect"

	"go.opentelemetry.io/otel/attribute"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/tracing"
)

// startSpan starts kube's span of a call on key ("Get etcd3", "Create
// etcd3", "GuaranteedUpdate etcd3") for a traced request; obj, if given,
// names the type.
func (s *Store) startSpan(ctx context.Context, name, key string, obj runtime.Object) (context.Context, tracing.Span) {
	ctx, span := tracing.Start(ctx, name)
	if !span.Recording() {
		return ctx, span
	}
	span.Set(tracing.AuditID(ctx), attribute.String("key", key))
	if obj != nil {
		span.Set(attribute.String("type", reflect.TypeOf(obj).String()))
	}
	span.Set(attribute.String("group", s.groupResource.Group), attribute.String("resource", s.groupResource.Resource))
	return ctx, span
}

// startListSpan starts kube's span of a list.
func startListSpan(ctx context.Context, key string, opts storage.ListOptions) (context.Context, tracing.Span) {
	name := "List(recursive=false) etcd3"
	if opts.Recursive {
		name = "List(recursive=true) etcd3"
	}
	ctx, span := tracing.Start(ctx, name)
	if span.Recording() {
		span.Set(tracing.AuditID(ctx), attribute.String("key", key),
			attribute.String("resourceVersion", opts.ResourceVersion),
			attribute.String("resourceVersionMatch", string(opts.ResourceVersionMatch)),
			attribute.Int("limit", int(opts.Predicate.Limit)),
			attribute.String("continue", opts.Predicate.Continue))
	}
	return ctx, span
}

// callEvent records how an etcd call ended, as kube's events name it
// ("Get call succeeded", "Txn call failed").
func callEvent(span tracing.Span, call string, err error) {
	if !span.Recording() {
		return
	}
	if err != nil {
		span.Event(call+" call failed", attribute.String("err", err.Error()))
		return
	}
	span.Event(call + " call succeeded")
}
