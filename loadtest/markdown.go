package loadtest

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"
)

// Comparison is what the benchmark document compares: kube-apiserver and
// capstan on the same etcd, and capstan with its embedded etcd where it
// was measured.
type Comparison struct {
	Kube, Capstan, Embedded *Report
	Command                 string   // how the document was made
	Notes                   []string // lines added to the Setup section
	ChartFile               string   // the chart's path relative to the document
	// CRDSection is the CRD section to keep (see WriteCRDSection); without
	// one the document says CRDs were not measured.
	CRDSection []byte
}

// columns are the reports a table compares, in order.
func (c Comparison) columns() []*Report { return []*Report{c.Kube, c.Capstan, c.Embedded} }

// tableRow is one metric across the three reports.
type tableRow struct {
	label   string
	dir     Direction
	integer bool
	vals    [3]float64
	ok      [3]bool
}

// rows reads the metrics of workload from each report; a report without
// the workload leaves its column empty.
func (c Comparison) rows(workload string) []tableRow {
	var sample *Result
	for _, rep := range c.columns() {
		if rep == nil {
			continue
		}
		if r, ok := rep.Find(workload); ok && sample == nil {
			sample = &r
		}
	}
	if sample == nil {
		return nil
	}
	var out []tableRow
	for _, m := range metricsFor(*sample) {
		row := tableRow{label: m.label, dir: m.dir, integer: m.integer}
		for i, rep := range c.columns() {
			if rep == nil {
				continue
			}
			if r, ok := rep.Find(workload); ok {
				row.vals[i], row.ok[i] = m.get(r)
			}
		}
		if row.ok != [3]bool{} {
			out = append(out, row)
		}
	}
	return out
}

// hasEmbedded reports whether the embedded column has workload.
func (c Comparison) hasEmbedded(workload string) bool {
	if c.Embedded == nil {
		return false
	}
	_, ok := c.Embedded.Find(workload)
	return ok
}

// writeTable writes rows as a Markdown table with ratios to kube.
func writeTable(w io.Writer, rows []tableRow, embedded bool) {
	head := "| | kube-apiserver | capstan | capstan/kube |"
	sep := "| --- | ---: | ---: | ---: |"
	if embedded {
		head += " capstan embedded | embedded/kube |"
		sep += " ---: | ---: |"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, sep)
	for _, r := range rows {
		line := fmt.Sprintf("| %s%s | %s | %s | %s |", r.label, arrow(r.dir),
			cell(r, 0), cell(r, 1), ratio(r, 1))
		if embedded {
			line += fmt.Sprintf(" %s | %s |", cell(r, 2), ratio(r, 2))
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
}

func arrow(d Direction) string {
	switch d {
	case Lower:
		return " ↓"
	case Higher:
		return " ↑"
	}
	return ""
}

func cell(r tableRow, i int) string {
	if !r.ok[i] {
		return "–"
	}
	if r.integer {
		return fmt.Sprintf("%.0f", r.vals[i])
	}
	return formatNumber(r.vals[i])
}

func ratio(r tableRow, i int) string {
	if !r.ok[i] || !r.ok[0] || r.vals[0] == 0 || r.dir == Neutral {
		return "–"
	}
	if r.vals[i] < 0 || r.vals[0] < 0 {
		return "–" // a growth that came out negative: noise, no ratio
	}
	q := r.vals[i] / r.vals[0]
	// Bold only what still differs from 1 once rounded.
	better := r.dir == Lower && q < 0.995 || r.dir == Higher && q > 1.005
	if better {
		return fmt.Sprintf("**%s**", formatRatio(q))
	}
	return formatRatio(q)
}

func formatRatio(q float64) string {
	if q < 0.1 {
		return fmt.Sprintf("%.3f", q)
	}
	return fmt.Sprintf("%.2f", q)
}

// formatNumber keeps three or so significant digits.
func formatNumber(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 0.1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// chartColors are kube's and capstan's bar colors.
var chartColors = [2]color.RGBA{{0x44, 0x72, 0xc4, 0xff}, {0xed, 0x7d, 0x31, 0xff}}

// chartMinCount is the fewest samples an op needs to be charted: a start
// measured three times has no distribution worth drawing.
const chartMinCount = 10

// ChartRows pairs kube's and capstan's latency distributions per op of
// every workload both measured.
func (c Comparison) ChartRows() []ChartRow {
	var rows []ChartRow
	if c.Kube == nil || c.Capstan == nil {
		return nil
	}
	for _, kr := range c.Kube.Results {
		cr, ok := c.Capstan.Find(kr.Workload)
		if !ok {
			continue
		}
		for _, kop := range kr.Ops {
			cop, ok := cr.Op(kop.Name)
			if !ok || kop.Count < chartMinCount || cop.Count < chartMinCount {
				continue
			}
			rows = append(rows, ChartRow{Label: strings.ToUpper(kr.Workload + " " + kop.Name),
				Bars: []ChartBar{{chartColors[0], kop.Summary}, {chartColors[1], cop.Summary}}})
		}
	}
	return rows
}

// ChartLegend names the chart's colors.
func (c Comparison) ChartLegend() []ChartLegend {
	return []ChartLegend{{"kube-apiserver", chartColors[0]}, {"capstan (same etcd)", chartColors[1]}}
}
