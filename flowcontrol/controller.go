package flowcontrol

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/capstan-io/capstan/apis/flowcontrol/bootstrap"
	"github.com/capstan-io/capstan/flowcontrol/fairqueuing"
	"github.com/capstan-io/capstan/metrics"
)

// borrowingPeriod is how often levels lend and borrow seats, kube's.
const borrowingPeriod = 10 * time.Second

// Config configures a Controller.
type Config struct {
	// ServerConcurrencyLimit is the seats of all levels together: kube's
	// --max-requests-inflight plus --max-mutating-requests-inflight.
	ServerConcurrencyLimit int
	// DefaultWaitLimit is how long a request may wait in a queue when it
	// has no deadline (watches): a quarter of --request-timeout.
	DefaultWaitLimit time.Duration
	// ObjectCounts, if set, gives the number and average size of stored
	// objects of a resource, which lists are made wider by.
	ObjectCounts ObjectCounter
	Clock        clock.WithTickerAndDelayedExecution
	Logger       *slog.Logger
}

// Controller is API Priority and Fairness: it classifies requests and
// admits them through their level's queue set. Until its informers have
// synced, only the mandatory exempt and catch-all levels exist.
type Controller struct {
	cfg Config
	// state is the configuration requests are classified by; replaced
	// whole on every change so that classification takes no lock.
	state atomic.Pointer[state]

	mu     sync.Mutex // guards levels; serializes reconfiguration
	levels map[string]*level

	retry   retryAfterTracker
	watches *watchTracker
}

// state is one digested configuration.
type state struct {
	schemas []*flowcontrolv1.FlowSchema // in matching order, all usable
	levels  map[string]*level
}

// level is a priority level and its queue set. Levels outlive a
// configuration that still names them, so their queues are kept.
type level struct {
	pl       *flowcontrolv1.PriorityLevelConfiguration
	exempt   bool
	queuing  bool // more than one queue: flows are hashed
	queues   *fairqueuing.QueueSet
	gauges   *metrics.FlowLevelGauges // the queue set's observer
	limits   limits
	demand   demandStats
	current  int // current concurrency limit, after borrowing
	maxSeats int // the widest estimate, 0 for no level bound
}

// NewController returns a controller serving the mandatory configuration.
func NewController(cfg Config) *Controller {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ServerConcurrencyLimit <= 0 {
		cfg.ServerConcurrencyLimit = 600
	}
	if cfg.DefaultWaitLimit <= 0 {
		cfg.DefaultWaitLimit = 15 * time.Second
	}
	c := &Controller{cfg: cfg, levels: map[string]*level{}, watches: newWatchTracker()}
	c.retry.now = cfg.Clock.Now
	c.digest(nil, nil)
	return c
}

// Run watches the configuration objects through client, keeps the
// FlowSchemas' Dangling condition and rebalances borrowing until ctx is
// done. It returns once the informers are started.
func (c *Controller) Run(ctx context.Context, config *rest.Config) error {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	plInformer := factory.Flowcontrol().V1().PriorityLevelConfigurations()
	fsInformer := factory.Flowcontrol().V1().FlowSchemas()
	changed := make(chan struct{}, 1)
	notify := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke(changed) },
		UpdateFunc: func(any, any) { poke(changed) },
		DeleteFunc: func(any) { poke(changed) },
	}
	if _, err := plInformer.Informer().AddEventHandler(notify); err != nil {
		return err
	}
	if _, err := fsInformer.Informer().AddEventHandler(notify); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	go func() {
		defer factory.Shutdown()
		if !cache.WaitForCacheSync(ctx.Done(), plInformer.Informer().HasSynced, fsInformer.Informer().HasSynced) {
			return
		}
		ticker := c.cfg.Clock.NewTicker(borrowingPeriod)
		defer ticker.Stop()
		written := writtenConditions{}
		for {
			select {
			case <-ctx.Done():
				return
			case <-changed:
				pls, _ := plInformer.Lister().List(labels.Everything())
				fss, _ := fsInformer.Lister().List(labels.Everything())
				written.prune(fss)
				for _, u := range c.digest(pls, fss) {
					if written.pending(u) {
						continue
					}
					if err := c.writeDangling(ctx, client, u); err != nil {
						// Try again later: nothing else may change.
						time.AfterFunc(5*time.Second, func() { poke(changed) })
						continue
					}
					written[u.name] = u
				}
			case <-ticker.C():
				c.rebalance()
			}
		}
	}()
	return nil
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// digest makes the given objects, with the mandatory ones they lack, the
// configuration, and returns the FlowSchema status changes to write.
func (c *Controller) digest(pls []*flowcontrolv1.PriorityLevelConfiguration, fss []*flowcontrolv1.FlowSchema) []danglingUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	pls = withMandatoryLevels(pls)
	var shareSum float64
	for _, pl := range pls {
		shares, _, _ := specShares(&pl.Spec)
		shareSum += float64(shares)
	}
	levels := make(map[string]*level, len(pls))
	nominalSum, waitingSum := 0, 0
	for _, pl := range pls {
		// A new level value each time: requests read the published one
		// without the lock. Its queues and borrowing state carry over.
		l := &level{pl: pl}
		old, seen := c.levels[pl.Name]
		if seen {
			l.queues, l.gauges, l.demand, l.current = old.queues, old.gauges, old.demand, old.current
		} else {
			l.queues, l.gauges = fairqueuing.New(c.cfg.Clock), metrics.FlowLevelGaugesOf(pl.Name)
			l.queues.SetObserver(l.gauges)
		}
		fresh := !seen
		l.exempt = pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt
		l.limits = levelLimits(c.cfg.ServerConcurrencyLimit, &pl.Spec, shareSum)
		l.queuing, l.maxSeats = false, 0
		if q := queuingOf(pl); q != nil {
			l.queuing = q.Queues > 1
			l.maxSeats = maxSeats(l.limits.nominal, q.HandSize)
		}
		if fresh {
			l.current = l.limits.nominal - l.limits.lendable/2
		}
		nominalSum += l.limits.nominal
		if q := queuingOf(pl); q != nil {
			waitingSum += int(q.Queues * q.QueueLengthLimit)
		}
		levels[pl.Name] = l
	}
	c.levels = levels
	metrics.SetInflightLimits(nominalSum, nominalSum, waitingSum)
	c.rebalanceLocked(nominalSum)

	schemas, updates := usableSchemas(fss, levels, metav1.NewTime(c.cfg.Clock.Now()))
	c.state.Store(&state{schemas: schemas, levels: levels})
	return updates
}

// withMandatoryLevels adds exempt and catch-all when missing, as kube
// imagines them, and drops objects of neither type (validation forbids
// them, but the filter must never depend on that).
func withMandatoryLevels(pls []*flowcontrolv1.PriorityLevelConfiguration) []*flowcontrolv1.PriorityLevelConfiguration {
	out := make([]*flowcontrolv1.PriorityLevelConfiguration, 0, len(pls)+2)
	have := map[string]bool{}
	for _, pl := range pls {
		usable := pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt ||
			pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementLimited && pl.Spec.Limited != nil
		if !usable {
			continue
		}
		out = append(out, pl)
		have[pl.Name] = true
	}
	for _, pl := range bootstrap.MandatoryPriorityLevelConfigurations() {
		if !have[pl.Name] {
			out = append(out, pl)
		}
	}
	return out
}

// usableSchemas orders the schemas for matching, leaves out those whose
// level does not exist, and adds the mandatory exempt (first) and
// catch-all (last) when missing.
func usableSchemas(fss []*flowcontrolv1.FlowSchema, levels map[string]*level, now metav1.Time) ([]*flowcontrolv1.FlowSchema, []danglingUpdate) {
	var out []*flowcontrolv1.FlowSchema
	var updates []danglingUpdate
	have := map[string]bool{}
	for _, fs := range fss {
		plName := fs.Spec.PriorityLevelConfiguration.Name
		_, found := levels[plName]
		if u, ok := danglingChange(fs, !found, now); ok {
			updates = append(updates, u)
		}
		if found {
			out = append(out, fs)
			have[fs.Name] = true
		}
	}
	slices.SortFunc(out, lessFlowSchema)
	for _, fs := range bootstrap.MandatoryFlowSchemas() {
		switch {
		case have[fs.Name]:
		case fs.Name == flowcontrolv1.FlowSchemaNameCatchAll:
			out = append(out, fs)
		default:
			out = append([]*flowcontrolv1.FlowSchema{fs}, out...)
		}
	}
	return out, updates
}

func queuingOf(pl *flowcontrolv1.PriorityLevelConfiguration) *flowcontrolv1.QueuingConfiguration {
	if l := pl.Spec.Limited; l != nil && l.LimitResponse.Type == flowcontrolv1.LimitResponseTypeQueue {
		return l.LimitResponse.Queuing
	}
	return nil
}

// rebalance is the periodic borrowing between levels.
func (c *Controller) rebalance() {
	c.mu.Lock()
	defer c.mu.Unlock()
	nominalSum := 0
	for _, l := range c.levels {
		nominalSum += l.limits.nominal
	}
	c.rebalanceLocked(nominalSum)
}

// rebalanceLocked reads each level's seat demand since the last time,
// sets the current limits and configures the queue sets with them.
func (c *Controller) rebalanceLocked(nominalSum int) {
	names := make([]string, 0, len(c.levels))
	for name := range c.levels {
		names = append(names, name)
	}
	slices.Sort(names)
	bls := make([]*borrowLevel, len(names))
	demands := make([]fairqueuing.Demand, len(names))
	for i, name := range names {
		l := c.levels[name]
		demands[i] = l.queues.ResetDemand()
		l.demand.update(demands[i])
		bls[i] = &borrowLevel{exempt: l.exempt, limits: l.limits, demand: l.demand, current: l.current}
	}
	metrics.FlowFairFraction(rebalance(nominalSum, bls))
	for i, name := range names {
		l := c.levels[name]
		l.current = bls[i].current
		metrics.FlowLevel(name, l.limits.nominal, l.limits.min, l.limits.max, l.current,
			float64(l.demand.highWatermark), demands[i].Average, demands[i].StdDev, l.demand.smoothed)
		metrics.FlowAllocation(name, bls[i].target)
		qc := fairqueuing.Config{Exempt: l.exempt, ConcurrencyLimit: l.current}
		if q := queuingOf(l.pl); q != nil {
			qc.Queues, qc.HandSize, qc.QueueLengthLimit = int(q.Queues), int(q.HandSize), int(q.QueueLengthLimit)
		}
		l.gauges.SetLimits(max(qc.QueueLengthLimit, 1)*max(qc.Queues, 1), c.utilizationDenominator(l.current))
		if err := l.queues.SetConfig(qc); err != nil {
			// Validation rejects such levels; keep the last good queues.
			c.cfg.Logger.Error("priority level has unusable queuing", "priorityLevel", name, "err", err)
			_ = l.queues.SetConfig(fairqueuing.Config{ConcurrencyLimit: l.current})
		}
	}
}

// utilizationDenominator is what a level's utilization is a fraction of:
// its current limit or, for a level with none, a tenth of the server's.
func (c *Controller) utilizationDenominator(current int) int {
	if current > 0 {
		return current
	}
	return max(1, int(math.Round(float64(c.cfg.ServerConcurrencyLimit)/10)))
}

// String describes a level's limits, for logs and tests.
func (l *level) String() string {
	return fmt.Sprintf("%s nominal=%d min=%d max=%d current=%d", l.pl.Name, l.limits.nominal, l.limits.min, l.limits.max, l.current)
}
