package loadtest

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func testReport(name string, scale float64, embedded bool) *Report {
	s := Summarize(msList(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0, time.Second)
	s.P50Ms *= scale
	server := Usage{PeakRSSBytes: uint64(scale * (100 << 20)), RSSBytes: 90 << 20, CPUSeconds: scale}
	res := map[string]Usage{"server": server, SumRole: server}
	if !embedded {
		res["etcd"] = Usage{PeakRSSBytes: 50 << 20, RSSBytes: 40 << 20, CPUSeconds: 1}
		res[SumRole] = Usage{PeakRSSBytes: server.PeakRSSBytes + 50<<20, RSSBytes: 130 << 20, CPUSeconds: scale + 1}
	}
	return &Report{Server: name, Machine: Machine{CPUs: 2}, ContentType: "application/vnd.kubernetes.protobuf",
		Results: []Result{
			{Workload: "startup", Ops: []Op{{"ready", s}}, Resources: res},
			{Workload: "crud", Params: map[string]int{"objects": 10}, Ops: []Op{{"create", s}, {"get", s}},
				Resources: res, Metrics: map[string]float64{"requestsPerSecond": 100 / scale}},
		}}
}

func TestWriteMarkdown(t *testing.T) {
	c := Comparison{Kube: testReport("kube", 1, false), Capstan: testReport("capstan", 0.5, false),
		Embedded: testReport("capstan-embedded", 0.25, true), Command: "bench/compare.sh", ChartFile: "b.png"}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, c); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	for _, want := range []string{
		"| create p50 (ms) ↓ | 5.00 | 2.50 | **0.50** |",
		"| crud: requests per s ↑ | 100 | 200 | **2.00** | 400 | **4.00** |",
		"| crud: CPU sum (s) ↓ | 2.00 | 1.50 | **0.75** | 0.25 | **0.12** |",
		"| peak RSS etcd (MiB) ↓ | 50.0 | 50.0 | 1.00 |",
		"| ready median (s) ↓ | 0.005 | 0.003 | **0.50** | 0.001 | **0.25** |",
		"| RSS when ready etcd (MiB) ↓ | 40.0 | 40.0 | 1.00 | – | – |",
		"| RSS when ready sum (MiB) ↓ | 130 | 130 | 1.00 | 90.0 | **0.69** |",
		"![latency per operation, log scale](b.png)", "1,000 CRDs", "Parameters: objects=10.",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("document lacks %q:\n%s", want, doc)
		}
	}
}

func TestChart(t *testing.T) {
	many := Summary{Count: 50, P50Ms: 2, P90Ms: 5, P99Ms: 9, P999Ms: 20, MaxMs: 30}
	few := Summary{Count: chartMinCount - 1, P50Ms: 2000, MaxMs: 3000}
	rep := func(name string) *Report {
		return &Report{Server: name, Results: []Result{
			{Workload: "startup", Ops: []Op{{"ready", few}}},
			{Workload: "crud", Ops: []Op{{"create", many}, {"get", many}}},
		}}
	}
	c := Comparison{Kube: rep("kube"), Capstan: rep("capstan")}
	rows := c.ChartRows()
	if len(rows) != 2 || rows[0].Label != "CRUD CREATE" || len(rows[0].Bars) != 2 {
		t.Fatalf("chart rows = %+v: want crud create and get, not the few starts", rows)
	}
	img := Chart("title", c.ChartLegend(), rows)
	if want := chartHeaderH + 2*(2*(chartBarH+chartBarGap)+chartRowGap) + chartFooterH; img.Bounds().Dy() != want {
		t.Errorf("chart height %d, want %d", img.Bounds().Dy(), want)
	}
	axis := newLogAxis(rows, 0, 300)
	if axis.loDec != 0 || axis.hiDec != 2 || axis.x(10) != 150 || axis.x(0) != 0 || axis.x(1e9) != 300 {
		t.Errorf("axis = %+v; x(10) = %d", axis, axis.x(10))
	}
	if got := img.RGBAAt(axis.x0+chartMargin+chartLabelW+1, chartHeaderH+1); got != chartColors[0] {
		t.Errorf("the first bar starts with %v, want kube's color", got)
	}
}

func TestFormatNumber(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 3: "3.00", 1234.5: "1234", 12.34: "12.3", 1.234: "1.23", 0.01234: "0.012"} {
		if got := formatNumber(v); got != want {
			t.Errorf("formatNumber(%v) = %q, want %q", v, got, want)
		}
	}
}
