package metrics

import (
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
