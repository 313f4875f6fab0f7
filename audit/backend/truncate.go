package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/audit"
)

// TruncatedAnnotation marks an event whose request and response objects
// were dropped to fit --audit-*-truncate-max-event-size.
const TruncatedAnnotation = "audit.k8s.io/truncated"

// TruncateConfig are the --audit-log-truncate-* or --audit-webhook-truncate-*
// flags.
type TruncateConfig struct {
	Enabled bool
	// MaxEventSize bounds one event's JSON encoding, in bytes.
	MaxEventSize int64
	// MaxBatchSize bounds the encodings of the events handed on at once.
	MaxBatchSize int64
}

// DefaultTruncate is kube's default: off, 100KB events, 10MB batches.
var DefaultTruncate = TruncateConfig{MaxEventSize: 100 * 1024, MaxBatchSize: 10 * 1024 * 1024}

// Validate reports what kube reports, whether or not truncation is enabled.
func (c TruncateConfig) Validate(plugin string) error {
	if c.MaxEventSize <= 0 {
		return fmt.Errorf("invalid audit truncate %s max event size %v, must be a positive number", plugin, c.MaxEventSize)
	}
	if c.MaxBatchSize < c.MaxEventSize {
		return fmt.Errorf("invalid audit truncate %s max batch size %v, must be greater than max event size (%v)", plugin, c.MaxBatchSize, c.MaxEventSize)
	}
	return nil
}

// WithTruncate wraps b in truncation when c enables it.
func WithTruncate(b audit.Backend, c TruncateConfig, logger *slog.Logger) audit.Backend {
	if !c.Enabled {
		return b
	}
	return &Truncate{delegate: b, c: c, logger: logger}
}

// Truncate keeps events and batches under their size limits: an event too
// large loses its request and response objects (if its level recorded
// them) and is annotated; one still too large is dropped and logged; the
// events of one call are handed on in batches no larger than MaxBatchSize.
type Truncate struct {
	delegate audit.Backend
	c        TruncateConfig
	logger   *slog.Logger
}

var _ audit.Backend = (*Truncate)(nil)

// ProcessEvents hands the events on in batches; false if a batch failed.
func (t *Truncate) ProcessEvents(events ...*auditv1.Event) bool {
	var (
		batch     []*auditv1.Event
		batchSize int64
		dropped   []*auditv1.Event
		errs      []error
	)
	ok := true
	for _, ev := range events {
		size, err := encodedSize(ev)
		if err == nil && size > t.c.MaxEventSize && recordsObjects(ev.Level) {
			ev = truncated(ev)
			size, err = encodedSize(ev)
		}
		if err == nil && size > t.c.MaxEventSize {
			err = errors.New("event is too large even after truncating")
		}
		if err != nil {
			dropped, errs = append(dropped, ev), append(errs, err)
			continue
		}
		if len(batch) > 0 && batchSize+size > t.c.MaxBatchSize {
			ok = t.delegate.ProcessEvents(batch...) && ok
			batch, batchSize = nil, 0
		}
		batch, batchSize = append(batch, ev), batchSize+size
	}
	if len(batch) > 0 {
		ok = t.delegate.ProcessEvents(batch...) && ok
	}
	if len(dropped) > 0 {
		pluginError(t.logger, "truncate", errors.Join(errs...), dropped...)
	}
	return ok
}

// recordsObjects: only the Request and RequestResponse levels carry objects.
func recordsObjects(l auditv1.Level) bool {
	return l == auditv1.LevelRequest || l == auditv1.LevelRequestResponse
}

// truncated is a copy of ev without its objects, annotated as truncated.
func truncated(ev *auditv1.Event) *auditv1.Event {
	out := *ev
	out.RequestObject, out.ResponseObject = nil, nil
	out.Annotations = make(map[string]string, len(ev.Annotations)+1)
	for k, v := range ev.Annotations {
		out.Annotations[k] = v
	}
	out.Annotations[TruncatedAnnotation] = "true"
	return &out
}

// encodedSize is the size of ev as kube measures it: its JSON encoding with
// kind and apiVersion, and the encoder's newline.
func encodedSize(ev *auditv1.Event) (int64, error) {
	b, err := json.Marshal(typed(ev))
	return int64(len(b)) + 1, err
}

func (t *Truncate) Run(ctx context.Context) { t.delegate.Run(ctx) }
func (t *Truncate) Shutdown()               { t.delegate.Shutdown() }
func (t *Truncate) String() string          { return "truncate<" + t.delegate.String() + ">" }
