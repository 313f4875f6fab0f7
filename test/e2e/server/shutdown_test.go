package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

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
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	w, err := e.Clientset.CoreV1().ConfigMaps(ns).Watch(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e.ConfigMap(t, ns, "a", nil)
	if ev := e2eutil.NextEvent(t, w); ev.Type != "ADDED" {
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
	e := e2eutil.Start(t, "--shutdown-delay-duration=3s")
	ns := e.Namespace(t)
	hc := e.HTTPClient(t)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		e.Stop(t)
	}()
	e2eutil.Eventually(t, 3*time.Second, "readyz fails", func(context.Context) (bool, error) {
		r := e2eutil.DoWith(t, hc, http.MethodGet, e.URL+"/readyz?verbose", nil)
		return r.Code == 500 && strings.Contains(string(r.Body), "[-]shutdown failed"), nil
	})
	for _, path := range []string{"/livez", "/healthz"} {
		if r := e2eutil.DoWith(t, hc, http.MethodGet, e.URL+path+"?verbose", nil); r.Code != 200 {
			t.Errorf("%s during the shutdown delay = %d %s", path, r.Code, r.Body)
		}
	}
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).List(e2eutil.Ctx(t), metav1.ListOptions{}); err != nil {
		t.Errorf("a list during the shutdown delay: %v", err)
	}
	e.ConfigMap(t, ns, "during-delay", nil)
	<-stopped
}
