package loadtest

import (
	"fmt"
	"slices"
	"strings"
)

// Direction says which way a metric is better.
type Direction int

// Which way is better.
const (
	Neutral Direction = iota
	Lower
	Higher
)

// metric is one row of a comparison table: a label and how to read it
// from a Result.
type metric struct {
	label   string
	dir     Direction
	get     func(Result) (float64, bool)
	integer bool // a count
}

// metricsFor lists the rows of a workload's table, shaped by a sample
// result (the ops, roles and metrics it has).
func metricsFor(sample Result) []metric {
	var out []metric
	for _, op := range sample.Ops {
		out = append(out, opMetrics(sample.Workload, op)...)
	}
	out = append(out, resourceMetrics(sample)...)
	keys := make([]string, 0, len(sample.Metrics))
	for k := range sample.Metrics {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		ia, ib := metricIndex(a), metricIndex(b)
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		spec, ok := lookupMetric(k)
		if !ok {
			spec = metricSpec{label: k, dir: Lower, integer: true}
			if strings.HasSuffix(k, "PerSecond") {
				spec.dir, spec.integer = Higher, false
			}
		}
		out = append(out, metric{label: spec.label, dir: spec.dir, integer: spec.integer, get: func(r Result) (float64, bool) {
			v, ok := r.Metrics[k]
			return v, ok
		}})
	}
	return out
}

// metricSpec is how a key of Result.Metrics shows in a table.
type metricSpec struct {
	label   string
	dir     Direction
	integer bool
}

// metricSpecs are the table rows of Result.Metrics' keys, in table
// order. A key not here is a count, lower better, or with the suffix
// PerSecond a rate; it comes after these.
var metricSpecs = []struct {
	key string
	metricSpec
}{
	{"requestsPerSecond", metricSpec{"requests per s", Higher, false}},
	{"getsPerSecond", metricSpec{"GETs per s", Higher, false}},
	{"listsPerSecond", metricSpec{"lists per s", Higher, false}},
	{"rssWatchingMiB", metricSpec{"RSS server with the watches open (MiB)", Lower, false}},
	{"rssPerWatcherKiB", metricSpec{"RSS per watch (KiB)", Lower, false}},
	{"heapWatchingMiB", metricSpec{"Go heap in use with the watches open (MiB)", Lower, false}},
	{"heapPerWatcherKiB", metricSpec{"Go heap per watch (KiB)", Lower, false}},
	{"earlyEvents", metricSpec{"events before the write's response", Neutral, true}},
	{"missingEvents", metricSpec{"events missed", Lower, true}},
	{"watchListRequests", metricSpec{"WatchList requests sent", Neutral, true}},
	{"createSeconds", metricSpec{"all creates answered (s)", Lower, false}},
	{"establishedSeconds", metricSpec{"all Established (s)", Lower, false}},
	{"servedSeconds", metricSpec{"all Established and in discovery (s)", Lower, false}},
	{"crdsPerSecond", metricSpec{"CRDs served per s", Higher, false}},
	{"rssBeforeMiB", metricSpec{"RSS server before (MiB)", Lower, false}},
	{"rssServedMiB", metricSpec{"RSS server when all served (MiB)", Lower, false}},
	{"rssSettledMiB", metricSpec{"RSS server idle after (MiB)", Lower, false}},
	{"rssPerCRDKiB", metricSpec{"RSS per CRD, idle (KiB)", Lower, false}},
	{"heapBeforeMiB", metricSpec{"Go heap in use before (MiB)", Lower, false}},
	{"heapSettledMiB", metricSpec{"Go heap in use after (MiB)", Lower, false}},
	{"heapPerCRDKiB", metricSpec{"Go heap per CRD (KiB)", Lower, false}},
	{"settleCPUSeconds", metricSpec{"CPU server while idle after (s)", Lower, false}},
	{"firstCRsSeconds", metricSpec{"first CR in each of the CRDs (s)", Lower, false}},
	{"rssBuiltMiB", metricSpec{"RSS server after the CRs (MiB)", Lower, false}},
	{"heapBuiltMiB", metricSpec{"Go heap in use after the CRs (MiB)", Lower, false}},
	{"heapPerBuiltCRDKiB", metricSpec{"Go heap per CRD with a CR (KiB)", Lower, false}},
	{"deleteSeconds", metricSpec{"deleting all CRDs (s)", Lower, false}},
	{"crdsLeftAfterDelete", metricSpec{"CRDs left after the deletion timed out", Lower, true}},
}

// lookupMetric is the spec of a metric key.
func lookupMetric(key string) (metricSpec, bool) {
	if i := metricIndex(key); i < len(metricSpecs) {
		return metricSpecs[i].metricSpec, true
	}
	return metricSpec{}, false
}

// metricIndex is the position of key in metricSpecs, len(metricSpecs) if
// it is not there.
func metricIndex(key string) int {
	for i, m := range metricSpecs {
		if m.key == key {
			return i
		}
	}
	return len(metricSpecs)
}

// opMetrics are an op's percentiles, as many as its count supports: p99
// needs 100 samples, p99.9 1,000; fewer samples show the max instead.
func opMetrics(workload string, op Op) []metric {
	get := func(f func(Summary) float64, scale float64) func(Result) (float64, bool) {
		return func(r Result) (float64, bool) {
			o, ok := r.Op(op.Name)
			if !ok || o.Count == 0 {
				return 0, false
			}
			return f(o.Summary) * scale, true
		}
	}
	if workload == "startup" {
		return []metric{
			{label: op.Name + " median (s)", dir: Lower, get: get(func(s Summary) float64 { return s.P50Ms }, 1e-3)},
			{label: op.Name + " min (s)", dir: Lower, get: get(func(s Summary) float64 { return s.MinMs }, 1e-3)},
			{label: op.Name + " max (s)", dir: Lower, get: get(func(s Summary) float64 { return s.MaxMs }, 1e-3)},
		}
	}
	out := []metric{{label: op.Name + " p50 (ms)", dir: Lower, get: get(func(s Summary) float64 { return s.P50Ms }, 1)}}
	if op.Count >= 100 {
		out = append(out, metric{label: op.Name + " p99 (ms)", dir: Lower, get: get(func(s Summary) float64 { return s.P99Ms }, 1)})
	}
	if op.Count >= 1000 {
		out = append(out, metric{label: op.Name + " p99.9 (ms)", dir: Lower, get: get(func(s Summary) float64 { return s.P999Ms }, 1)})
	}
	if op.Count < 100 {
		out = append(out, metric{label: op.Name + " max (ms)", dir: Lower, get: get(func(s Summary) float64 { return s.MaxMs }, 1)})
	}
	if op.Name == "deliver" || strings.HasPrefix(workload, "fill") && op.Name == "create" || workload == "admission" {
		out = append(out, metric{label: op.Name + " per s", dir: Higher, get: get(func(s Summary) float64 { return s.PerSecond }, 1)})
	}
	return out
}

// resourceMetrics are RSS and CPU by role. Startup, idle and fill report
// RSS at the end of their window (when ready, after idling, after
// filling); the others the peak while they ran.
func resourceMetrics(sample Result) []metric {
	rss, rssLabel := func(u Usage) uint64 { return u.PeakRSSBytes }, "peak RSS"
	if sample.Workload == "startup" || sample.Workload == "idle" || strings.HasPrefix(sample.Workload, "fill") {
		rss, rssLabel = func(u Usage) uint64 { return u.RSSBytes }, "RSS"
	}
	cpuLabel := "CPU"
	if sample.Workload == "startup" {
		rssLabel, cpuLabel = "RSS when ready", "CPU until ready"
	}
	var out []metric
	for _, role := range []string{"server", "etcd", SumRole} {
		use := func(f func(Usage) float64) func(Result) (float64, bool) {
			return func(r Result) (float64, bool) {
				u, ok := r.Resources[role]
				if !ok {
					return 0, false
				}
				return f(u), true
			}
		}
		out = append(out,
			metric{label: fmt.Sprintf("%s %s (MiB)", rssLabel, role), dir: Lower, get: use(func(u Usage) float64 { return mib(rss(u)) })},
			metric{label: fmt.Sprintf("%s %s (s)", cpuLabel, role), dir: Lower, get: use(func(u Usage) float64 { return u.CPUSeconds })})
	}
	return out
}
