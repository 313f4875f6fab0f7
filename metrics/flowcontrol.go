package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The API Priority and Fairness families: kube's
// util/flowcontrol/metrics, for what capstan's flowcontrol does.
var (
	apfDurationBuckets = []float64{0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30}
	apfRejected        = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_flowcontrol_rejected_requests_total",
		Help: "Number of requests rejected by API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema", "reason"})
	apfDispatched = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_flowcontrol_dispatched_requests_total",
		Help: "Number of requests executed by API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema"})
	apfExecuting = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_flowcontrol_current_executing_requests",
		Help: "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema"})
	apfExecutingSeats = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_flowcontrol_current_executing_seats",
		Help: "Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema"})
	apfWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_flowcontrol_request_wait_duration_seconds",
		Help:    "Length of time a request spent waiting in its queue",
		Buckets: apfDurationBuckets,
	}, []string{"priority_level", "flow_schema", "execute"})
	apfExecution = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_flowcontrol_request_execution_seconds",
		Help:    "Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the API Priority and Fairness subsystem",
		Buckets: apfDurationBuckets,
	}, []string{"priority_level", "flow_schema", "type"})
	apfSeats = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_flowcontrol_work_estimated_seats",
		Help:    "Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 100},
	}, []string{"priority_level", "flow_schema"})
	apfLevelGauges = map[string]*prometheus.GaugeVec{}
)

// levelGauge is a per-level gauge of kube's, with its help.
func levelGauge(name, help string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_" + name, Help: help}, []string{"priority_level"})
	apfLevelGauges[name] = g
	return g
}

var (
	apfNominal  = levelGauge("nominal_limit_seats", "Nominal number of execution seats configured for each priority level")
	apfLower    = levelGauge("lower_limit_seats", "Configured lower bound on number of execution seats available to each priority level")
	apfUpper    = levelGauge("upper_limit_seats", "Configured upper bound on number of execution seats available to each priority level")
	apfCurrent  = levelGauge("current_limit_seats", "current derived number of execution seats available to each priority level")
	apfHighMark = levelGauge("demand_seats_high_watermark", "High watermark, over last adjustment period, of demand_seats")
	apfAverage  = levelGauge("demand_seats_average", "Time-weighted average, over last adjustment period, of demand_seats")
	apfStdDev   = levelGauge("demand_seats_stdev", "Time-weighted standard deviation, over last adjustment period, of demand_seats")
	apfSmoothed = levelGauge("demand_seats_smoothed", "Smoothed seat demands")
)

func init() {
	register(apfRejected, apfDispatched, apfExecuting, apfExecutingSeats, apfWait, apfExecution, apfSeats)
	for _, g := range apfLevelGauges {
		register(g)
	}
}

// FlowRejected records a request its level turned away after waiting
// since arrived: "queue-full" or "time-out".
func FlowRejected(level, schema, reason string, arrived time.Time) {
	apfRejected.WithLabelValues(level, schema, reason).Inc()
	apfWait.WithLabelValues(level, schema, "false").Observe(time.Since(arrived).Seconds())
}

// FlowExecuting records a request of seats its level admitted after
// waiting since arrived. It returns the function to call when its
// execution (a watch: its initial stage) ends.
func FlowExecuting(level, schema string, seats int, arrived time.Time) (done func()) {
	now := time.Now()
	f := flows.get(flowKey{level, schema})
	f.dispatched.Inc()
	f.wait.Observe(now.Sub(arrived).Seconds())
	f.seats.Observe(float64(seats))
	f.executing.Inc()
	f.executingSeats.Add(float64(seats))
	return func() {
		f.executing.Dec()
		f.executingSeats.Sub(float64(seats))
		f.execution.Observe(time.Since(now).Seconds())
	}
}

// flowKey is a priority level and flow schema: bounded by the
// configuration objects, which capstan never forgets series of.
type flowKey struct{ level, schema string }

// flowSeries are the dispatch series of one level and schema.
type flowSeries struct {
	dispatched                prometheus.Counter
	wait, seats, execution    prometheus.Observer
	executing, executingSeats prometheus.Gauge
}

var flows = newSeriesCache(func(k flowKey) *flowSeries {
	return &flowSeries{
		dispatched:     apfDispatched.WithLabelValues(k.level, k.schema),
		wait:           apfWait.WithLabelValues(k.level, k.schema, "true"),
		seats:          apfSeats.WithLabelValues(k.level, k.schema),
		execution:      apfExecution.WithLabelValues(k.level, k.schema, "regular"),
		executing:      apfExecuting.WithLabelValues(k.level, k.schema),
		executingSeats: apfExecutingSeats.WithLabelValues(k.level, k.schema),
	}
})

// FlowLevel records a level's limits after a rebalance, and the demand
// for its seats over the period that ended (relative to its nominal
// seats, as kube reports it).
func FlowLevel(level string, nominal, lower, upper, current int, highWatermark, average, stdDev, smoothed float64) {
	apfNominal.WithLabelValues(level).Set(float64(nominal))
	apfLower.WithLabelValues(level).Set(float64(lower))
	apfUpper.WithLabelValues(level).Set(float64(upper))
	apfCurrent.WithLabelValues(level).Set(float64(current))
	apfHighMark.WithLabelValues(level).Set(highWatermark)
	apfAverage.WithLabelValues(level).Set(average)
	apfStdDev.WithLabelValues(level).Set(stdDev)
	apfSmoothed.WithLabelValues(level).Set(smoothed)
}

// The timing ratio histograms of kube's APF and its allocation gauges.
var (
	apfSeatUtilization = newTimingFamily("apiserver_flowcontrol_priority_level_seat_utilization",
		"Observations, at the end of every nanosecond, of utilization of seats for any stage of execution (but only initial stage for WATCHes)",
		[]float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1},
		prometheus.Labels{"phase": "executing"}, "priority_level")
	apfRequestUtilization = newTimingFamily("apiserver_flowcontrol_priority_level_request_utilization",
		"Observations, at the end of every nanosecond, of number of requests (as a fraction of the relevant limit) waiting or in any stage of execution (but only initial stage for WATCHes)",
		[]float64{0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.25, 0.5, 0.75, 1}, nil, "phase", "priority_level")
	apfDemandSeats = newTimingFamily("apiserver_flowcontrol_demand_seats",
		"Observations, at the end of every nanosecond, of (the number of seats each priority level could use) / (nominal number of seats for that level)",
		[]float64{0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4, 1.7, 2, 2.8, 4, 6}, nil, "priority_level")
	apfReadVsWrite = newTimingFamily("apiserver_flowcontrol_read_vs_write_current_requests",
		"Observations, at the end of every nanosecond, of the number of requests (as a fraction of the relevant limit) waiting or in regular stage of execution",
		[]float64{0, 0.001, 0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1}, nil, "phase", "request_kind")
	apfCurrentR = levelGauge("current_r", "R(time of last change)")
	apfTarget   = levelGauge("target_seats", "Seat allocation targets")
	apfFairFrac = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "apiserver_flowcontrol_seat_fair_frac",
		Help: "Fair fraction of server's concurrency to allocate to each priority level that can use it",
	})
	apfWatchCount = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_flowcontrol_watch_count_samples",
		Help:    "count of watchers for mutating requests in API Priority and Fairness",
		Buckets: []float64{0, 1, 10, 100, 1000, 10000},
	}, []string{"priority_level", "flow_schema"})
)

func init() { register(apfFairFrac, apfWatchCount) }

// FlowLevelGauges are a priority level's timing ratio histograms and its
// virtual time, which its queue set updates on every change.
type FlowLevelGauges struct {
	mu                                sync.Mutex // guards the four series
	waiting, executing, seats, demand *ratioSeries
	r                                 prometheus.Gauge
}

// FlowLevelGaugesOf returns the gauges of a level: one set per level name
// in the process, as every family here (kube keeps a level's series for
// the life of the process, as this does).
func FlowLevelGaugesOf(level string) *FlowLevelGauges { return flowLevelGauges.get(level) }

var flowLevelGauges = newSeriesCache(func(level string) *FlowLevelGauges {
	g := &FlowLevelGauges{r: apfCurrentR.WithLabelValues(level)}
	g.waiting = newRatioSeries(apfRequestUtilization, &g.mu, "waiting", level)
	g.executing = newRatioSeries(apfRequestUtilization, &g.mu, "executing", level)
	g.seats = newRatioSeries(apfSeatUtilization, &g.mu, level)
	g.demand = newRatioSeries(apfDemandSeats, &g.mu, level)
	return g
})

// Note records the level's requests and seats after a change, and its
// virtual time.
func (g *FlowLevelGauges) Note(waiting, executing, seatsInUse, seatsWaiting int, r float64) {
	g.r.Set(r)
	w, e, s, d := float64(waiting), float64(executing), float64(seatsInUse), float64(seatsInUse+seatsWaiting)
	g.mu.Lock()
	defer g.mu.Unlock()
	if w == g.waiting.num && e == g.executing.num && s == g.seats.num && d == g.demand.num {
		return
	}
	now := time.Now()
	g.waiting.setLocked(now, w)
	g.executing.setLocked(now, e)
	g.seats.setLocked(now, s)
	g.demand.setLocked(now, d)
}

// SetLimits sets the denominators: the level's queue capacity (queues
// times queue length, at least 1) and its current concurrency limit
// (for a level with none, a tenth of the server's, as kube).
func (g *FlowLevelGauges) SetLimits(queueCapacity, concurrency int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	g.waiting.setDenominatorLocked(now, float64(queueCapacity))
	g.executing.setDenominatorLocked(now, float64(concurrency))
	g.seats.setDenominatorLocked(now, float64(concurrency))
	g.demand.setDenominatorLocked(now, float64(concurrency))
}

// FlowAllocation records a rebalance's seat targets of one level.
func FlowAllocation(level string, target float64) { apfTarget.WithLabelValues(level).Set(target) }

// FlowFairFraction records the rebalance's fair fraction: the factor
// every level's target was scaled by (0 when the levels got their
// minimum or a share of it).
func FlowFairFraction(f float64) { apfFairFrac.Set(f) }

// FlowWatchCount records the watchers a write of level and schema may
// notify, as its width was estimated.
func FlowWatchCount(level, schema string, watchers int) {
	apfWatchCount.WithLabelValues(level, schema).Observe(float64(watchers))
}
