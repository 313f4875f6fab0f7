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
	slices.Sort(keys)
	for _, k := range keys {
		dir, integer := Lower, true
		switch {
		case strings.HasSuffix(k, "PerSecond"):
			dir, integer = Higher, false
		case k == "watchListRequests" || k == "earlyEvents":
			dir = Neutral
		}
		label := k
		if l, ok := metricLabels[k]; ok {
			label = l
		}
		out = append(out, metric{label: label, dir: dir, integer: integer, get: func(r Result) (float64, bool) {
			v, ok := r.Metrics[k]
			return v, ok
		}})
	}
	return out
}

// metricLabels are the table labels of Result.Metrics' keys.
var metricLabels = map[string]string{
	"requestsPerSecond": "requests per s",
	"missingEvents":     "events missed",
	"earlyEvents":       "events before the write's response",
	"watchListRequests": "WatchList requests sent",
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
	if op.Name == "deliver" || strings.HasPrefix(workload, "fill") && op.Name == "create" {
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
