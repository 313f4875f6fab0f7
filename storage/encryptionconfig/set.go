package encryptionconfig

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/capstan-io/capstan/storage/value"
)

// Set serves the transformers of the current configuration. The
// transformer of a resource looks the configuration up on every call, so
// that a reload takes effect on the storage already built.
type Set struct {
	current atomic.Pointer[Config]
	path    string
	reload  bool
	logger  *slog.Logger
}

// NewSet loads path (see Load). With reload, Run reloads it. logger
// receives reload and KMS probe failures (nil discards).
func NewSet(ctx context.Context, path string, reload bool, logger *slog.Logger) (*Set, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c, err := Load(ctx, path, reload, logger)
	if err != nil {
		return nil, err
	}
	s := &Set{path: path, reload: reload, logger: logger}
	s.current.Store(c)
	return s, nil
}

// For returns the transformer of resource gr.
func (s *Set) For(gr groupResource) value.Transformer { return resourceTransformer{set: s, gr: gr} }

// Current is the configuration in force.
func (s *Set) Current() *Config { return s.current.Load() }

// HasHealthCheck tells whether kube would add the kms-providers check:
// with automatic reload, or when KMS providers are configured.
func (s *Set) HasHealthCheck() bool { return s.reload || s.current.Load().Health != nil }

// Check is the kms-providers check of the current configuration.
func (s *Set) Check(ctx context.Context) error {
	if h := s.current.Load().Health; h != nil {
		return h.Check(ctx)
	}
	return nil
}

type resourceTransformer struct {
	set *Set
	gr  groupResource
}

func (r resourceTransformer) TransformFromStorage(ctx context.Context, data, ad []byte) ([]byte, bool, error) {
	return r.set.current.Load().For(r.gr).TransformFromStorage(ctx, data, ad)
}

func (r resourceTransformer) TransformToStorage(ctx context.Context, data, ad []byte) ([]byte, error) {
	return r.set.current.Load().For(r.gr).TransformToStorage(ctx, data, ad)
}

// ReloadInterval is how often Run looks at the file: kube's minute.
const ReloadInterval = time.Minute

// Run reloads the file every interval until ctx is done, if automatic
// reload is on. A file whose content is unchanged is not loaded again; one
// that is invalid, or whose KMS plugins do not become healthy, is logged
// and retried while the configuration in force stays.
func (s *Set) Run(ctx context.Context, interval time.Duration) {
	if !s.reload {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		if err := s.Reload(ctx); err != nil {
			s.logger.Error("error processing encryption config file", "path", s.path, "err", err)
		}
	}
}

// Reload loads the file if its content changed and swaps it in once its
// KMS plugins are healthy. The old configuration's KMS connections are
// closed after a grace period for the calls still using them.
func (s *Set) Reload(ctx context.Context) error {
	old := s.current.Load()
	if _, hash, err := readFile(s.path); err != nil {
		return err
	} else if hash == old.Hash {
		return nil
	}
	c, err := Load(ctx, s.path, true, s.logger)
	if err != nil {
		return err
	}
	if c.Hash == old.Hash {
		c.Close()
		return nil
	}
	if err := c.waitHealthy(ctx); err != nil {
		c.Close()
		return err
	}
	s.current.Store(c)
	time.AfterFunc(closeGracePeriod, old.Close)
	return nil
}

// closeGracePeriod is how long replaced KMS connections stay open.
const closeGracePeriod = 10 * time.Second

// waitHealthy polls the new configuration's KMS check, as kube does before
// using it, for up to closeGracePeriod.
func (c *Config) waitHealthy(ctx context.Context) error {
	if c.Health == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, closeGracePeriod)
	defer cancel()
	for {
		err := c.Health.Check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("health check for new transformers failed: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
