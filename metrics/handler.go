package metrics

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Options are kube's metrics flags: what /metrics leaves out or folds.
type Options struct {
	// Disabled are families never shown (--disabled-metrics).
	Disabled []string
	// AllowLabels maps "family,label" to the values the label may show
	// (--allow-metric-labels); any other value is shown as "unexpected".
	AllowLabels map[string][]string
	// ShowHiddenVersion, if "1.36", shows the families kube deprecated in
	// 1.36 and hides in 1.37 (--show-hidden-metrics-for-version).
	ShowHiddenVersion string
}

// hidden are the families kube v1.37 hides: deprecated in 1.36.
var hidden = map[string]bool{"etcd_bookmark_counts": true}

// unexpected is the value kube shows for a label value not allowed.
const unexpected = "unexpected"

// Handler serves /metrics: the registry as o shows it, in the text or
// protobuf exposition format the scraper asks for.
func Handler(o Options) http.Handler {
	return promhttp.HandlerFor(filtered{o: o}, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// filtered is the registry seen through Options. Filtering when scraped
// keeps the options a server's own: servers of one process share the
// families.
type filtered struct{ o Options }

func (f filtered) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := registry.Gather()
	out := mfs[:0]
	for _, mf := range mfs {
		name := mf.GetName()
		if slices.Contains(f.o.Disabled, name) || (hidden[name] && f.o.ShowHiddenVersion != "1.36") {
			continue
		}
		out = append(out, f.allow(mf))
	}
	return out, err
}

// allow replaces label values outside the family's allow lists with
// "unexpected" and merges the series that become one.
func (f filtered) allow(mf *dto.MetricFamily) *dto.MetricFamily {
	if len(f.o.AllowLabels) == 0 {
		return mf
	}
	changed := false
	for _, m := range mf.Metric {
		for _, lp := range m.Label {
			allowed, ok := f.o.AllowLabels[mf.GetName()+","+lp.GetName()]
			if ok && !slices.Contains(allowed, lp.GetValue()) {
				lp.Value = proto(unexpected)
				changed = true
			}
		}
	}
	if !changed {
		return mf
	}
	return mergeSeries(mf)
}

func proto(s string) *string { return &s }

// mergeSeries folds series with equal labels into one: counts and sums
// add up; a summary keeps its count and sum but loses its quantiles.
func mergeSeries(mf *dto.MetricFamily) *dto.MetricFamily {
	byKey := map[string]*dto.Metric{}
	var out []*dto.Metric
	for _, m := range mf.Metric {
		key := seriesKey(m)
		into, ok := byKey[key]
		if !ok {
			byKey[key] = m
			out = append(out, m)
			continue
		}
		addInto(into, m)
	}
	mf.Metric = out
	return mf
}

func seriesKey(m *dto.Metric) string {
	var b strings.Builder
	for _, lp := range m.Label {
		fmt.Fprintf(&b, "%s=%q,", lp.GetName(), lp.GetValue())
	}
	return b.String()
}

func addInto(into, m *dto.Metric) {
	switch {
	case into.Counter != nil:
		into.Counter.Value = f64(into.Counter.GetValue() + m.Counter.GetValue())
	case into.Gauge != nil:
		into.Gauge.Value = f64(into.Gauge.GetValue() + m.Gauge.GetValue())
	case into.Untyped != nil:
		into.Untyped.Value = f64(into.Untyped.GetValue() + m.Untyped.GetValue())
	case into.Histogram != nil:
		h, o := into.Histogram, m.Histogram
		h.SampleCount = u64(h.GetSampleCount() + o.GetSampleCount())
		h.SampleSum = f64(h.GetSampleSum() + o.GetSampleSum())
		for i := range h.Bucket {
			if i < len(o.Bucket) {
				h.Bucket[i].CumulativeCount = u64(h.Bucket[i].GetCumulativeCount() + o.Bucket[i].GetCumulativeCount())
			}
		}
	case into.Summary != nil:
		s, o := into.Summary, m.Summary
		s.SampleCount = u64(s.GetSampleCount() + o.GetSampleCount())
		s.SampleSum = f64(s.GetSampleSum() + o.GetSampleSum())
		s.Quantile = nil
	}
}

func f64(v float64) *float64 { return &v }
func u64(v uint64) *uint64   { return &v }

var _ prometheus.Gatherer = filtered{}
