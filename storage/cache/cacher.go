// Package cache is the watch cache: a storage.Interface in front of
// another one (etcd3) that serves watches and lists from memory.
//
// A Cacher lists the underlying storage once, then keeps a copy of every
// object of the resource current with one watch from that revision. Any
// number of watches fan out from it; lists are served from immutable
// snapshots of the state (copy-on-write B-tree clones), taken every few
// events of a recent history window and when a list asks, and rebuilt
// from the nearest one for a revision between them, so that
// exact-revision lists and continue tokens work from memory. Consistent
// reads first wait until the cache has seen the backend's current
// revision, and go to the backend if it cannot catch up quickly: the
// cache never serves stale data where the API promises fresh data.
// Concurrent consistent reads share their reads of the backend's revision
// (revisionBatcher). Writes and Count go to the backend.
//
// The history keeps a snapshot every 64 events and one when a list asks at
// the latest revision; a list at another revision rebuilds the state from
// the nearest snapshot before it and keeps it on that event. The state
// keeps each object of a built-in resource encoded (protobuf at its
// in-memory version) and decodes it when read, readers sharing one
// decoding held weakly until the next garbage collection (custom resources
// stay decoded); next to it, its labels and selectable fields, computed
// once with the registry's attribute function, so that lists, initial
// events and watch events whose predicate is the registry's select on them
// and decode only what they select.
//
// A watcher that keeps up gets each event from the cache's goroutine
// straight into its result channel; its own goroutine sends the initial
// events and any backlog. The cache watches etcd on a gRPC stream of its
// own, so that etcd's progress notifications never run ahead of its events.
// A consistent GET does not wait: it is served if the cache has that
// revision already, else from etcd, and while the cache is known to be
// behind (a write through it, or a read that saw a newer revision) GETs go
// straight to etcd. A GET answers with the object's shared, defaulted form
// (GetShared); the list handler takes the cached objects themselves
// (ListOptions.SharedItems) and in-process callers get deep copies; an
// event's object is shared by the watches that allow it.
package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/storage"
)

// Defaults of the configuration.
const (
	// DefaultHistoryWindow is kube's: a bookmark period plus 15 seconds,
	// so that a watcher can resume from its last bookmark.
	DefaultHistoryWindow = 75 * time.Second
	DefaultMinEvents     = 100
	DefaultMaxEvents     = 100 * 1024
	// DefaultWatcherBuffer is how many events wait for each watcher
	// before it counts as not keeping up.
	DefaultWatcherBuffer = 100
)

// Config describes the cache of one resource.
type Config struct {
	// Storage is the backend. Required. If it implements ProgressRequester
	// (etcd3 does), consistent reads are served from the cache.
	Storage storage.Interface
	// NewFunc and NewListFunc are the backend's. Required.
	NewFunc     func() runtime.Object
	NewListFunc func() runtime.Object
	// ResourcePrefix starts every key of the resource, as given to the
	// backend ("/configmaps"). Required.
	ResourcePrefix string
	// Codec, if set, is the storage's codec (the backend's), with which
	// the cache keeps each object encoded and decodes it when read (see
	// element); nil keeps the objects themselves.
	Codec runtime.Codec
	// Attrs, if set, is the resource's attribute function, the one its
	// registry puts in the predicates it marks ResourceAttrs: the cache
	// keeps each object's attributes and evaluates those predicates on
	// them, without decoding the objects they do not select.
	Attrs storage.AttrFunc
	// KeyFunc returns an object's key. nil means NamespacedKeyFunc.
	KeyFunc KeyFunc
	// GroupResource names the resource in logs.
	GroupResource schema.GroupResource
	// History bounds the events kept; zero fields take the defaults.
	History HistoryConfig
	// WatcherBuffer: 0 means DefaultWatcherBuffer.
	WatcherBuffer int
	// Compactions, if set, tells the revision the backend compacted to
	// (an *etcd3.Compactor); the cache then serves no older revision.
	Compactions CompactRevisioner
	Logger      *slog.Logger     // nil discards
	Clock       clock.WithTicker // nil means the real clock
}

// HistoryConfig bounds the history: events are forgotten when there are
// more than MaxEvents, or more than MinEvents and they are older than
// Window. A watch can resume, and a list be read at an exact revision,
// from any revision since the last event forgotten.
type HistoryConfig struct {
	Window               time.Duration
	MinEvents, MaxEvents int
}

// ProgressRequester is a backend whose watches can be asked to report
// the current revision (etcd3.Store): see RequestWatchProgress there.
type ProgressRequester interface {
	RequestWatchProgress(ctx context.Context) error
}

// CompactRevisioner tells the latest revision the backend compacted to.
type CompactRevisioner interface {
	CompactRevision() int64
}

// Cacher is the watch cache of one resource. Run fills it and keeps it
// current; until it is ready every call goes to the backend.
type Cacher struct {
	// Fixed by New:
	newFunc        func() runtime.Object
	newListFunc    func() runtime.Object
	resourcePrefix string
	keyFunc        KeyFunc
	codec          runtime.Codec
	attrs          storage.AttrFunc
	fieldNames     []string // the fields attrs gives, sorted; nil: none kept
	watcherBuffer  int
	logger         *slog.Logger
	clock          clock.WithTicker
	backend        backend

	// backendReached is a revision the backend is known to have reached:
	// the latest of a write through the cache or of a revision read that
	// found the cache behind. While the cache is older, it is behind.
	backendReached atomic.Uint64

	run runScratch // used by Run's goroutine only

	mu     sync.RWMutex // guards the fields below
	status cacheStatus
	rv     uint64  // the revision the cache has seen everything up to
	hist   history // the live state and recent events; Run's goroutine changes them
	// rvChanged is closed and replaced whenever rv or ready changes.
	rvChanged    chan struct{}
	watchers     watcherIndex
	progressScan progressScan
}

// backend is the storage the cache is in front of, and the helpers that
// read it; fixed by New.
type backend struct {
	storage     storage.Interface
	compactions CompactRevisioner
	progress    *progressRequester
	revisions   *revisionBatcher
	// metrics records what the cache reads and serves.
	metrics *metrics.WatchCache
	// groupResource names the resource in spans.
	groupResource schema.GroupResource
}

// runScratch is what Run's goroutine reuses from event to event.
type runScratch struct {
	budget    *timeBudget
	encodeBuf bytes.Buffer
	attrsBuf  []byte
	// targets collects the watchers of an event.
	targets []*cacheWatcher
}

// cacheStatus is whether the cache serves; guarded by Cacher.mu.
type cacheStatus struct {
	ready   bool  // the state is current up to rv
	stopped bool  // Run has returned
	lastErr error // why the cache is not ready
}

// progressScan counts the backend's progress notifications and tells when
// they last made bookmarks; guarded by Cacher.mu.
type progressScan struct {
	seq  uint64
	last time.Time
}

var _ storage.Interface = (*Cacher)(nil)

// New returns the cache described by cfg; Run starts it.
func New(cfg Config) (*Cacher, error) {
	switch {
	case cfg.Storage == nil:
		return nil, errors.New("cache: Storage is required")
	case cfg.NewFunc == nil || cfg.NewListFunc == nil:
		return nil, errors.New("cache: NewFunc and NewListFunc are required")
	}
	if _, err := storage.PrepareKey(cfg.ResourcePrefix, cfg.ResourcePrefix, true); err != nil || cfg.ResourcePrefix == "/" {
		return nil, fmt.Errorf("cache: invalid ResourcePrefix %q", cfg.ResourcePrefix)
	}
	cfg = withDefaults(cfg)
	c := &Cacher{
		backend: backend{storage: cfg.Storage, compactions: cfg.Compactions,
			metrics:       metrics.NewWatchCache(cfg.GroupResource.Group, cfg.GroupResource.Resource, cfg.History.MaxEvents),
			groupResource: cfg.GroupResource},
		newFunc: cfg.NewFunc, newListFunc: cfg.NewListFunc,
		resourcePrefix: cfg.ResourcePrefix, keyFunc: cfg.KeyFunc, codec: cfg.Codec,
		attrs: cfg.Attrs, fieldNames: fieldNamesOf(cfg.Attrs, cfg.NewFunc),
		watcherBuffer: cfg.WatcherBuffer, clock: cfg.Clock,
		logger:    cfg.Logger.With("resource", cfg.GroupResource.String()),
		run:       runScratch{budget: newTimeBudget(cfg.Clock)},
		hist:      history{cfg: cfg.History},
		rvChanged: make(chan struct{}),
		watchers:  newWatcherIndex(),
		status:    cacheStatus{lastErr: errors.New("initializing")},
	}
	var request func(context.Context) error
	if pr, ok := cfg.Storage.(ProgressRequester); ok {
		request = pr.RequestWatchProgress
	}
	c.backend.progress = newProgressRequester(request, cfg.Clock, c.logger)
	c.backend.revisions = newRevisionBatcher(cfg.Storage.CurrentResourceVersion)
	c.hist.reset(newTree(), 0)
	return c, nil
}

func withDefaults(cfg Config) Config {
	if cfg.KeyFunc == nil {
		cfg.KeyFunc = NamespacedKeyFunc(cfg.ResourcePrefix)
	}
	if cfg.History.Window <= 0 {
		cfg.History.Window = DefaultHistoryWindow
	}
	if cfg.History.MinEvents <= 0 {
		cfg.History.MinEvents = DefaultMinEvents
	}
	if cfg.History.MaxEvents <= 0 {
		cfg.History.MaxEvents = DefaultMaxEvents
	}
	cfg.History.MinEvents = min(cfg.History.MinEvents, cfg.History.MaxEvents)
	if cfg.WatcherBuffer <= 0 {
		cfg.WatcherBuffer = DefaultWatcherBuffer
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return cfg
}

// Ready reports whether the cache is serving.
func (c *Cacher) Ready() bool { return c.ReadinessCheck() == nil }

// ReadinessCheck returns nil when the cache is serving, else why not: a
// check for /readyz.
func (c *Cacher) ReadinessCheck() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	switch {
	case c.status.stopped:
		return errors.New("watch cache is stopped")
	case !c.status.ready:
		return fmt.Errorf("watch cache is not ready: %w", c.status.lastErr)
	}
	return nil
}

// Wait blocks until the cache is ready, it stops, or ctx ends.
func (c *Cacher) Wait(ctx context.Context) error {
	for {
		c.mu.RLock()
		ready, stopped, changed := c.status.ready, c.status.stopped, c.rvChanged
		c.mu.RUnlock()
		switch {
		case stopped:
			return errors.New("watch cache is stopped")
		case ready:
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Compact forgets the history older than rev: the cache then serves no
// revision before it, as the backend after a compaction to rev.
func (c *Cacher) Compact(rev uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hist.compact(rev, c.rv)
}

// setRVLocked moves the cache to revision rv and wakes whoever waits.
func (c *Cacher) setRVLocked(rv uint64) {
	c.rv = rv
	c.backend.metrics.ResourceVersion(rv)
	c.notifyLocked()
}

func (c *Cacher) notifyLocked() {
	close(c.rvChanged)
	c.rvChanged = make(chan struct{})
}

func formatRV(rv uint64) string { return strconv.FormatUint(rv, 10) }
