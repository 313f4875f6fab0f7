package storagetest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

const (
	// eventTimeout is generous: a slow machine under -race must not fail.
	eventTimeout = 10 * time.Second
	// quietPeriod is how long a watch must stay silent to show that an
	// event was (correctly) not sent.
	quietPeriod = 300 * time.Millisecond
)

func startWatch(ctx context.Context, t *testing.T, s storage.Interface, k string, opts storage.ListOptions) watch.Interface {
	t.Helper()
	w, err := s.Watch(ctx, k, opts)
	if err != nil {
		t.Fatalf("Watch(%q, %+v): %v", k, opts, err)
	}
	t.Cleanup(w.Stop)
	return w
}

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed, want an event")
		}
		return e
	case <-time.After(eventTimeout):
		t.Fatalf("no event within %v", eventTimeout)
	}
	return watch.Event{}
}

// expectEvent reads the next event and checks its type and object name.
func expectEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) *corev1.ConfigMap {
	t.Helper()
	e := nextEvent(t, w)
	if e.Type == watch.Error {
		t.Fatalf("got error event %+v, want %s %s", e.Object, typ, name)
	}
	cm, ok := e.Object.(*corev1.ConfigMap)
	if !ok {
		t.Fatalf("%s event carries %T, want *ConfigMap", e.Type, e.Object)
	}
	if e.Type != typ || cm.Name != name {
		t.Fatalf("got %s %q, want %s %q", e.Type, cm.Name, typ, name)
	}
	return cm
}

func expectNoEvent(t *testing.T, w watch.Interface) {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		if ok {
			t.Fatalf("unexpected event %s %+v", e.Type, e.Object)
		}
		t.Fatal("watch closed unexpectedly")
	case <-time.After(quietPeriod):
	}
}

// expectClosed waits for the result channel to close, draining it.
func expectClosed(t *testing.T, w watch.Interface) {
	t.Helper()
	timeout := time.After(eventTimeout)
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				return
			}
		case <-timeout:
			t.Fatalf("watch not closed within %v", eventTimeout)
		}
	}
}

// expectBookmark reads a BOOKMARK event and returns its resourceVersion.
func expectBookmark(t *testing.T, w watch.Interface, initialEventsEnd bool) uint64 {
	t.Helper()
	e := nextEvent(t, w)
	if e.Type != watch.Bookmark {
		t.Fatalf("got %s %+v, want BOOKMARK", e.Type, e.Object)
	}
	cm, ok := e.Object.(*corev1.ConfigMap)
	if !ok {
		t.Fatalf("bookmark carries %T, want an empty *ConfigMap", e.Object)
	}
	if got := cm.Annotations[metav1.InitialEventsAnnotationKey] == "true"; got != initialEventsEnd {
		t.Fatalf("bookmark annotations %v, want initial-events-end %v", cm.Annotations, initialEventsEnd)
	}
	return rvOf(t, cm.ResourceVersion)
}
