package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func scrape(t *testing.T, o Options) string {
	t.Helper()
	w := httptest.NewRecorder()
	Handler(o).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(w.Result().Body)
	return string(body)
}

func TestHandlerOptions(t *testing.T) {
	StorageEvent("", "pods")
	StorageEvent("apps", "deployments")
	EtcdBookmark("", "pods")
	all := scrape(t, Options{})
	for _, want := range []string{`apiserver_storage_events_received_total{group="",resource="pods"}`, "go_goroutines", "process_cpu_seconds_total", "etcd_bookmark_total"} {
		if !strings.Contains(all, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(all, "etcd_bookmark_counts") {
		t.Error("the hidden etcd_bookmark_counts is shown without --show-hidden-metrics-for-version")
	}
	if !strings.Contains(scrape(t, Options{ShowHiddenVersion: "1.36"}), "etcd_bookmark_counts") {
		t.Error("--show-hidden-metrics-for-version=1.36 does not show etcd_bookmark_counts")
	}
	if strings.Contains(scrape(t, Options{Disabled: []string{"go_goroutines"}}), "\ngo_goroutines ") {
		t.Error("--disabled-metrics=go_goroutines still shows it")
	}
	allowed := scrape(t, Options{AllowLabels: map[string][]string{"apiserver_storage_events_received_total,resource": {"pods"}}})
	if !strings.Contains(allowed, `apiserver_storage_events_received_total{group="apps",resource="unexpected"}`) ||
		strings.Contains(allowed, `resource="deployments"`) {
		t.Errorf("--allow-metric-labels did not fold deployments into unexpected:\n%s", grep(allowed, "storage_events_received"))
	}
}

func grep(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
