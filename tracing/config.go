package tracing

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	apiserverv1alpha1 "k8s.io/apiserver/pkg/apis/apiserver/v1alpha1"
	apiserverv1beta1 "k8s.io/apiserver/pkg/apis/apiserver/v1beta1"
	cbtracing "k8s.io/component-base/tracing"
	tracingapi "k8s.io/component-base/tracing/api/v1"
)

var (
	scheme = runtime.NewScheme()
	// Strict, as kube reads the file: an unknown field is an error.
	codecs = serializer.NewCodecFactory(scheme, serializer.EnableStrict)
)

func init() {
	for _, add := range []func(*runtime.Scheme) error{apiserverv1.AddToScheme, apiserverv1beta1.AddToScheme, apiserverv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
}

// Load reads and validates a TracingConfiguration file
// (apiserver.config.k8s.io v1, v1beta1 or v1alpha1), with kube's messages.
func Load(path string) (*tracingapi.TracingConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read tracing config: unable to read tracing configuration from %q: %w", path, err)
	}
	c, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("failed to read tracing config: unable to decode tracing configuration data: %w", err)
	}
	if errs := tracingapi.ValidateTracingConfiguration(c, nil, nil); len(errs) > 0 {
		return nil, fmt.Errorf("failed to validate tracing configuration: %w", errs.ToAggregate())
	}
	return c, nil
}

func decode(data []byte) (*tracingapi.TracingConfiguration, error) {
	obj, gvk, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	switch c := obj.(type) {
	case *apiserverv1.TracingConfiguration:
		return &c.TracingConfiguration, nil
	case *apiserverv1beta1.TracingConfiguration:
		return &c.TracingConfiguration, nil
	case *apiserverv1alpha1.TracingConfiguration:
		return &c.TracingConfiguration, nil
	}
	return nil, fmt.Errorf("%s is not a TracingConfiguration", gvk)
}

// Provider is a tracer provider that flushes its spans when shut down.
type Provider interface {
	trace.TracerProvider
	Shutdown(context.Context) error
}

// NewProvider exports spans in batches over OTLP/gRPC, without TLS, to
// c's endpoint (by default localhost:4317), as service "apiserver" with
// the server's identity. Its sampler is kube's: a span whose parent was
// sampled is sampled; a new trace is sampled at samplingRatePerMillion
// (none when unset).
func NewProvider(ctx context.Context, c *tracingapi.TracingConfiguration, instanceID string) (Provider, error) {
	return cbtracing.NewProvider(ctx, c, nil, []resource.Option{resource.WithAttributes(
		attribute.String("service.name", "apiserver"),
		attribute.String("service.instance.id", instanceID),
	)})
}
