package app

import (
	"context"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/capstan-io/capstan/tracing"
)

// tracingShutdown bounds the flush of the last spans at exit, so that an
// unreachable collector does not hold the shutdown.
const tracingShutdown = 5 * time.Second

// startTracing starts exporting the spans of traced requests when
// --tracing-config-file names a configuration.
func (p *Process) startTracing(ctx context.Context) error {
	if p.tracing == nil {
		return nil
	}
	tp, err := tracing.NewProvider(ctx, p.tracing, "apiserver-"+uuid.NewString())
	if err != nil {
		return err
	}
	p.tracer = tp
	p.closers = append(p.closers, func() error {
		c, cancel := context.WithTimeout(context.Background(), tracingShutdown)
		defer cancel()
		return tp.Shutdown(c)
	})
	return nil
}

// tracerProvider is the server's tracer provider, nil (an interface
// without a value) when requests are not traced.
func (p *Process) tracerProvider() trace.TracerProvider {
	if p.tracer == nil {
		return nil
	}
	return p.tracer
}
