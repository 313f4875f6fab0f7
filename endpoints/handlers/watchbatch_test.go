package handlers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// TestQueuedWatchEventsWrittenTogether: events that wait in a watch's
// channel (a WatchList's initial events) reach the response in a few
// writes of many events, and the stream says exactly what one write per
// event says; an event that comes alone is then written and flushed.
func TestQueuedWatchEventsWrittenTogether(t *testing.T) {
	scope, _ := configMapScope(t)
	const queued = 500
	for _, accept := range []string{kruntime.ContentTypeJSON, kruntime.ContentTypeProtobuf} {
		t.Run(accept, func(t *testing.T) {
			results := make(chan watch.Event, queued)
			var want bytes.Buffer
			event := func(i int) watch.Event {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("cm-%05d", i), ResourceVersion: "7"},
					Data: map[string]string{"data": "0123456789abcdef"}}
				want.Write(watchEventBytes(t, scope, accept, watch.Event{Type: watch.Added, Object: cm.DeepCopy()}))
				return watch.Event{Type: watch.Added, Object: cm}
			}
			for i := range queued {
				results <- event(i)
			}
			rw := newFlushRecorder()
			r, _ := http.NewRequest(http.MethodGet, "/api/v1/namespaces/ns/configmaps?watch=1", nil)
			r.Header.Set("Accept", accept)
			out, err := negotiateOutput(r, scope.Serializer, scope.answerShapes())
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Go(func() { scope.streamEvents(context.Background(), rw, r, out, chanWatch(results)) })
			rw.waitFlushed(want.Len())
			writes := rw.writeCount()
			if writes > queued/50 {
				t.Errorf("%d queued events in %d writes", queued, writes)
			}
			results <- event(queued)
			rw.waitFlushed(want.Len())
			if rw.writeCount() == writes {
				t.Error("the lone event was not written")
			}
			close(results)
			wg.Wait()
			if !bytes.Equal(rw.body.Bytes(), want.Bytes()) {
				t.Fatalf("stream of %d bytes, want the %d of one write per event", rw.body.Len(), want.Len())
			}
		})
	}
}

// chanWatch is a watch of the events of a channel.
type chanWatch chan watch.Event

func (c chanWatch) ResultChan() <-chan watch.Event { return c }
func (c chanWatch) Stop()                          {}

// flushRecorder is a ResponseWriter that counts the writes and tells the
// length of the body at each flush.
type flushRecorder struct {
	header  http.Header
	mu      sync.Mutex
	body    bytes.Buffer
	writes  int
	flushed chan int
}

func newFlushRecorder() *flushRecorder {
	return &flushRecorder{header: http.Header{}, flushed: make(chan int, 1000)}
}

func (f *flushRecorder) Header() http.Header { return f.header }
func (f *flushRecorder) WriteHeader(int)     {}

func (f *flushRecorder) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	return f.body.Write(p)
}

func (f *flushRecorder) Flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flushed <- f.body.Len()
}

func (f *flushRecorder) writeCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

// waitFlushed waits for a flush of a body of n bytes.
func (f *flushRecorder) waitFlushed(n int) {
	for got := range f.flushed {
		if got == n {
			return
		}
	}
}
