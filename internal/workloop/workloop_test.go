package workloop_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/capstan-io/capstan/internal/testkit"
	"github.com/capstan-io/capstan/internal/workloop"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// newQueue is a real rate-limited queue whose rate limiter delays by
// nothing, so that a key added rate limited is back at once.
func newQueue() workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.NewTypedItemExponentialFailureRateLimiter[string](0, 0),
		workqueue.TypedRateLimitingQueueConfig[string]{})
}

func TestWorker(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		// failures is how often the key failed before.
		failures  int
		cancelled bool
		syncErr   error
		// Want: the key's requeues after, the keys queued again, and
		// what failed was told.
		requeues, queued int
		logged           []error
	}{
		{name: "synced after failing is forgotten", failures: 2, requeues: 0},
		{name: "failed comes back rate limited", failures: 1, syncErr: boom, requeues: 2, queued: 1, logged: []error{boom}},
		{name: "failed as the loop stops is dropped quietly", failures: 1, cancelled: true, syncErr: context.Canceled, requeues: 1},
	} {
		q := newQueue()
		for range tc.failures {
			q.AddRateLimited("k")
		}
		ctx, cancel := context.WithCancel(context.Background())
		if tc.cancelled {
			cancel()
		}
		var synced []string
		var logged []error
		next := workloop.Worker(q, func(_ context.Context, key string) error {
			synced = append(synced, key)
			return tc.syncErr
		}, func(key string, err error) { logged = append(logged, err) })
		if !next(ctx) {
			t.Errorf("%s: the worker stopped", tc.name)
		}
		cancel()
		if !slices.Equal(synced, []string{"k"}) {
			t.Errorf("%s: synced %q, want the key once", tc.name, synced)
		}
		if got := q.NumRequeues("k"); got != tc.requeues {
			t.Errorf("%s: %d requeues, want %d", tc.name, got, tc.requeues)
		}
		if got := q.Len(); got != tc.queued {
			t.Errorf("%s: %d keys queued, want %d", tc.name, got, tc.queued)
		}
		if !slices.Equal(logged, tc.logged) {
			t.Errorf("%s: failed told %v, want %v", tc.name, logged, tc.logged)
		}
		q.ShutDown()
	}
}

func TestWorkerStopsWithTheQueue(t *testing.T) {
	q := newQueue()
	q.ShutDown()
	next := workloop.Worker(q, func(context.Context, string) error {
		t.Error("synced a key of a queue shut down")
		return nil
	}, func(string, error) {})
	if next(context.Background()) {
		t.Error("the worker went on after the queue shut down")
	}
}

// TestRun: keys are synced only once the informer's cache has synced, the
// ones queued before Run included; when the context ends, Run shuts the
// queue down and returns once every worker and informer has stopped.
func TestRun(t *testing.T) {
	s := testkit.StartServer(t, "--controllers=")
	client := s.Client(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "workloop"}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createConfigMap(t, client, "before")

	informer := coreinformers.NewConfigMapInformer(client, "workloop", 0, cache.Indexers{})
	q := newQueue()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			q.Add(key)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	q.Add("workloop/before") // queued before the informer runs

	var mu sync.Mutex
	var early []string // keys synced before the cache had them
	saw := make(chan string, 10)
	const workers = 3
	var stopped atomic.Int32
	next := workloop.Worker(q, func(_ context.Context, key string) error {
		_, found, err := informer.GetStore().GetByKey(key)
		if err != nil || !found || !informer.HasSynced() {
			mu.Lock()
			early = append(early, key)
			mu.Unlock()
		}
		saw <- key
		return nil
	}, func(string, error) {})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		workloop.Run(runCtx, q, workers, func(ctx context.Context) bool {
			more := next(ctx)
			if !more {
				stopped.Add(1)
			}
			return more
		}, informer)
	}()

	receive(t, saw, "workloop/before")
	createConfigMap(t, client, "after")
	receive(t, saw, "workloop/after")
	mu.Lock()
	if early != nil {
		t.Errorf("keys synced before the cache had them: %q", early)
	}
	mu.Unlock()

	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if got := stopped.Load(); got != workers {
		t.Errorf("%d workers had stopped when Run returned, want %d", got, workers)
	}
	if !q.ShuttingDown() || !informer.IsStopped() {
		t.Errorf("after Run: queue shutting down %v, informer stopped %v", q.ShuttingDown(), informer.IsStopped())
	}
}

// TestRunWaitsForTheCache: with an informer that cannot list (its server
// is gone), no key is synced, and the end of the context still stops Run.
func TestRunWaitsForTheCache(t *testing.T) {
	tried := make(chan struct{}, 1)
	cfg := &rest.Config{Host: "https://127.0.0.1:1", WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			select {
			case tried <- struct{}{}:
			default:
			}
			return rt.RoundTrip(r)
		})
	}}
	informer := coreinformers.NewConfigMapInformer(kubernetes.NewForConfigOrDie(cfg), "", 0, cache.Indexers{})
	q := newQueue()
	q.Add("ns/cm")
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		workloop.Run(ctx, q, 2, func(context.Context) bool { calls.Add(1); return false }, informer)
	}()
	select {
	case <-tried:
	case <-time.After(30 * time.Second):
		t.Fatal("the informer never tried to list")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("processNext called %d times before the cache synced", n)
	}
	if !q.ShuttingDown() {
		t.Error("the queue was not shut down")
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func createConfigMap(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().ConfigMaps("workloop").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// receive waits for key on ch: the informer's add of an object may sync
// its key again, so other keys may come first.
func receive(t *testing.T, ch <-chan string, key string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case got := <-ch:
			if got == key {
				return
			}
		case <-deadline:
			t.Fatalf("%q was never synced", key)
		}
	}
}
