package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/capstan-io/capstan/audit"
)

// BatchConfig is the --audit-*-batch-* flags.
type BatchConfig struct {
	BufferSize   int           // events held before new ones are dropped
	MaxBatchSize int           // events per delivery
	MaxBatchWait time.Duration // a smaller batch waits at most this long
	// Throttle limits deliveries to QPS per second, bursts of Burst.
	ThrottleEnable bool
	ThrottleQPS    float32
	ThrottleBurst  int
	// AsyncDelegate delivers batches concurrently (the webhook's default);
	// otherwise one after the other (the log's).
	AsyncDelegate bool
}

// DefaultLogBatch and DefaultWebhookBatch are kube's defaults.
var (
	DefaultLogBatch     = BatchConfig{BufferSize: 10000, MaxBatchSize: 1}
	DefaultWebhookBatch = BatchConfig{BufferSize: 10000, MaxBatchSize: 400, MaxBatchWait: 30 * time.Second,
		ThrottleEnable: true, ThrottleQPS: 10, ThrottleBurst: 15, AsyncDelegate: true}
)

// Validate reports what is wrong with c, for backend plugin.
func (c BatchConfig) Validate(plugin string) error {
	switch {
	case c.BufferSize <= 0:
		return fmt.Errorf("invalid audit batch %s buffer size %v, must be a positive number", plugin, c.BufferSize)
	case c.MaxBatchSize <= 0:
		return fmt.Errorf("invalid audit batch %s max batch size %v, must be a positive number", plugin, c.MaxBatchSize)
	case c.ThrottleEnable && c.ThrottleQPS <= 0:
		return fmt.Errorf("invalid audit batch %s throttle QPS %v, must be a positive number", plugin, c.ThrottleQPS)
	case c.ThrottleEnable && c.ThrottleBurst <= 0:
		return fmt.Errorf("invalid audit batch %s throttle burst %v, must be a positive number", plugin, c.ThrottleBurst)
	}
	return nil
}

// Buffered queues copies of events and hands them to its delegate in
// batches, from its own goroutine. A full queue drops events: requests
// never wait for the delegate.
type Buffered struct {
	delegate audit.Backend
	config   BatchConfig
	throttle flowcontrol.RateLimiter // nil: no limit
	logger   *slog.Logger
	buffer   chan *auditv1.Event

	stop      context.CancelFunc
	done      chan struct{} // closed when the collecting goroutine ends
	stopOnce  sync.Once
	delivered sync.WaitGroup // asynchronous deliveries
}

// NewBuffered returns delegate behind a buffer; Run starts it.
func NewBuffered(delegate audit.Backend, c BatchConfig, logger *slog.Logger) *Buffered {
	b := &Buffered{delegate: delegate, config: c, logger: logger,
		buffer: make(chan *auditv1.Event, c.BufferSize), done: make(chan struct{})}
	if c.ThrottleEnable {
		b.throttle = flowcontrol.NewTokenBucketRateLimiter(c.ThrottleQPS, c.ThrottleBurst)
	}
	return b
}

// ProcessEvents queues copies of the events, dropping those that do not
// fit. It always reports success, as kube's does.
func (b *Buffered) ProcessEvents(events ...*auditv1.Event) bool {
	for i, ev := range events {
		select {
		case b.buffer <- ev.DeepCopy():
		default:
			pluginError(b.logger, "buffered", errors.New("audit buffer queue blocked"), events[i:]...)
			return true
		}
	}
	return true
}

// Run starts delivering until ctx is done or Shutdown.
func (b *Buffered) Run(ctx context.Context) {
	ctx, b.stop = context.WithCancel(ctx)
	b.delegate.Run(ctx)
	go func() {
		defer close(b.done)
		for ctx.Err() == nil {
			b.deliver(b.collect(ctx))
		}
		// Whatever is queued at the end still goes out.
		for batch := b.collect(nil); len(batch) > 0; batch = b.collect(nil) {
			b.deliver(batch)
		}
	}()
}

// collect waits for a batch: full, or as old as MaxBatchWait, or ctx
// done. With a nil ctx it takes only what is queued.
func (b *Buffered) collect(ctx context.Context) []*auditv1.Event {
	var stop <-chan struct{}
	var timeout <-chan time.Time
	if ctx != nil {
		stop = ctx.Done()
		if b.config.MaxBatchSize > 1 {
			t := time.NewTimer(b.config.MaxBatchWait)
			defer t.Stop()
			timeout = t.C
		}
	}
	var batch []*auditv1.Event
	for len(batch) < b.config.MaxBatchSize {
		if ctx == nil {
			select {
			case ev := <-b.buffer:
				batch = append(batch, ev)
				continue
			default:
				return batch
			}
		}
		select {
		case ev := <-b.buffer:
			batch = append(batch, ev)
		case <-timeout:
			return batch
		case <-stop:
			return batch
		}
	}
	return batch
}

func (b *Buffered) deliver(batch []*auditv1.Event) {
	if len(batch) == 0 {
		return
	}
	if b.throttle != nil {
		b.throttle.Accept()
	}
	if !b.config.AsyncDelegate {
		b.delegate.ProcessEvents(batch...)
		return
	}
	b.delivered.Add(1)
	go func() {
		defer b.delivered.Done()
		b.delegate.ProcessEvents(batch...)
	}()
}

// Shutdown delivers what is queued and waits for deliveries to end.
func (b *Buffered) Shutdown() {
	b.stopOnce.Do(func() {
		if b.stop == nil { // never ran
			close(b.done)
		} else {
			b.stop()
		}
	})
	<-b.done
	b.delivered.Wait()
	b.delegate.Shutdown()
}

func (b *Buffered) String() string { return "buffered<" + b.delegate.String() + ">" }
