package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestShutdownEndsWatches: a watch in progress ends, without an error
// event, when the server stops.
func TestShutdownEndsWatches(t *testing.T) {
	e := start(t)
	ns := e.namespace(t)
	w, err := e.c.CoreV1().ConfigMaps(ns).Watch(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e.configMap(t, ns, "a", nil)
	if ev := nextEvent(t, w); ev.Type != "ADDED" {
		t.Fatalf("first event = %s", ev.Type)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		e.Stop(t)
	}()
	select {
	case ev, open := <-w.ResultChan():
		if open {
			t.Fatalf("watch got %s %+v at shutdown, want its end", ev.Type, ev.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch still open 30s after shutdown began")
	}
	<-stopped
}

// TestShutdownDelay: during --shutdown-delay-duration /readyz fails while
// requests are still served.
func TestShutdownDelay(t *testing.T) {
	e := start(t, "--shutdown-delay-duration=3s")
	ns := e.namespace(t)
	hc := e.httpClient(t)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		e.Stop(t)
	}()
	eventually(t, 3*time.Second, "readyz fails", func(context.Context) (bool, error) {
		r := doWith(t, hc, http.MethodGet, e.URL+"/readyz?verbose", nil)
		return r.code == 500 && strings.Contains(string(r.body), "[-]shutdown failed"), nil
	})
	for _, path := range []string{"/livez", "/healthz"} {
		if r := doWith(t, hc, http.MethodGet, e.URL+path+"?verbose", nil); r.code != 200 {
			t.Errorf("%s during the shutdown delay = %d %s", path, r.code, r.body)
		}
	}
	if _, err := e.c.CoreV1().ConfigMaps(ns).List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Errorf("a list during the shutdown delay: %v", err)
	}
	e.configMap(t, ns, "during-delay", nil)
	<-stopped
}
