package etcd3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/utils/clock"
)

const (
	// compactRevKey is the key through which every apiserver of a cluster
	// (capstan or kube-apiserver) agrees on who compacts: its value is the
	// last revision compacted, its version counts compaction rounds.
	compactRevKey = "compact_rev_key"
	// DefaultCompactionInterval is kube-apiserver's default.
	DefaultCompactionInterval = 5 * time.Minute
)

// CompactorConfig describes a Compactor.
type CompactorConfig struct {
	Client *clientv3.Client
	// Interval between compactions; 0 means DefaultCompactionInterval.
	// History younger than one interval is kept: that is how far back a
	// watch or a paged list can resume.
	Interval time.Duration
	Logger   *slog.Logger // nil discards
	Clock    clock.Clock  // nil means the real clock
}

// Compactor removes etcd history older than one interval. Several
// apiservers on one etcd each run one; the compare-and-swap on
// compactRevKey lets one of them compact per interval.
type Compactor struct {
	client   *clientv3.Client
	interval time.Duration
	logger   *slog.Logger
	clock    clock.Clock

	mu        sync.Mutex // guards compacted
	compacted int64
}

// NewCompactor returns a compactor; Run starts it.
func NewCompactor(cfg CompactorConfig) (*Compactor, error) {
	if cfg.Client == nil {
		return nil, errors.New("compactor: Client is required")
	}
	c := &Compactor{client: cfg.Client, interval: cfg.Interval, logger: cfg.Logger, clock: cfg.Clock}
	if c.interval <= 0 {
		c.interval = DefaultCompactionInterval
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	return c, nil
}

// CompactRevision returns the latest revision known to be compacted.
func (c *Compactor) CompactRevision() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.compacted
}

func (c *Compactor) observe(rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.compacted = max(c.compacted, rev)
}

// CompactNow compacts to rev at once, outside the rounds of Run (tests
// force a compaction with it), and reports it through CompactRevision.
func (c *Compactor) CompactNow(ctx context.Context, rev int64) error {
	if _, err := c.client.Compact(ctx, rev); err != nil && !isCompacted(err) {
		return fmt.Errorf("compacting to %d: %w", rev, err)
	}
	c.observe(rev)
	return nil
}

// Run compacts every interval until ctx ends. Each round it claims the
// round by bumping compactRevKey's version from the one it last saw, and
// on success compacts to the revision it saw one round earlier: what is
// compacted is always at least one interval old. If another apiserver got
// the round first, the swap fails and this one just catches up with the
// version; if that apiserver dies, the next swap here succeeds.
func (c *Compactor) Run(ctx context.Context) {
	var version, rev int64
	for {
		select {
		case <-c.clock.After(c.interval):
		case <-ctx.Done():
			return
		}
		var err error
		version, rev, err = c.compactOnce(ctx, version, rev)
		if err != nil && ctx.Err() == nil {
			c.logger.Error("etcd compaction failed", "endpoints", c.client.Endpoints(), "err", err)
		}
	}
}

// compactOnce runs one round: see Run. It returns the version and the
// revision to use next round.
func (c *Compactor) compactOnce(ctx context.Context, version, rev int64) (nextVersion, nextRev int64, err error) {
	resp, err := c.client.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(compactRevKey), "=", version)).
		Then(clientv3.OpPut(compactRevKey, strconv.FormatInt(rev, 10))).
		Else(clientv3.OpGet(compactRevKey)).
		Commit()
	if err != nil {
		return version, rev, fmt.Errorf("claiming compaction: %w", err)
	}
	current := resp.Header.Revision
	if !resp.Succeeded {
		// Someone else compacted this round: adopt their count.
		kv := firstKV(resp)
		if kv == nil {
			return 0, current, nil
		}
		if done, perr := strconv.ParseInt(string(kv.Value), 10, 64); perr == nil {
			c.observe(done)
		}
		return kv.Version, current, nil
	}
	if rev == 0 {
		return version + 1, current, nil // the first round only records a revision
	}
	// Already compacted further (by etcd's own auto-compaction, say) is
	// as good as done.
	if _, err := c.client.Compact(ctx, rev); err != nil && !isCompacted(err) {
		return version + 1, current, fmt.Errorf("compacting to %d: %w", rev, err)
	}
	c.observe(rev)
	c.logger.Debug("etcd compacted", "revision", rev)
	return version + 1, current, nil
}
