package tracing

import (
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	cbtracing "k8s.io/component-base/tracing"
)

// EtcdDialOptions are the etcd client's gRPC options under tp: every
// call to etcd is a client span (etcdserverpb.KV/Range, .../Txn, ...)
// under the storage span that made it, with its messages as events and
// the trace context sent to etcd, as kube's etcd client makes them.
// With tp nil (tracing off) there are none, and nothing on the path.
func EtcdDialOptions(tp trace.TracerProvider) []grpc.DialOption {
	if tp == nil {
		return nil
	}
	return []grpc.DialOption{grpc.WithStatsHandler(otelgrpc.NewClientHandler(
		otelgrpc.WithTracerProvider(tp),
		otelgrpc.WithPropagators(cbtracing.Propagators()),
		otelgrpc.WithMessageEvents(otelgrpc.ReceivedEvents, otelgrpc.SentEvents),
	))}
}
