package ha

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// writers create config maps through the load balancer as retrying
// clients do: a failed create is sent again until it succeeds, and an
// AlreadyExists answer to a retry means an earlier attempt was stored.
type writers struct {
	ns string

	mu    sync.Mutex // guards acked
	acked []string   // names whose create was acknowledged

	count     atomic.Int64 // acknowledged creates
	transient atomic.Int64 // attempts that failed and were retried
	failed    atomic.Int64 // creates given up on
	stop      context.CancelFunc
	wg        sync.WaitGroup
}

// startWriters runs n writers, each with a client of its own (its own
// connection through the balancer).
func startWriters(n int, ns string, client func() kubernetes.Interface) *writers {
	ctx, cancel := context.WithCancel(context.Background())
	w := &writers{ns: ns, stop: cancel}
	for i := range n {
		c := client()
		w.wg.Go(func() {
			for j := 0; ctx.Err() == nil; j++ {
				w.create(ctx, c, fmt.Sprintf("w%d-%d", i, j))
			}
		})
	}
	return w
}

// create sends one config map's create until it is acknowledged.
func (w *writers) create(ctx context.Context, c kubernetes.Interface, name string) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": name}}
	if w.retry(ctx, func(ctx context.Context) error {
		_, err := c.CoreV1().ConfigMaps(w.ns).Create(ctx, cm, metav1.CreateOptions{})
		return err
	}) {
		w.mu.Lock()
		w.acked = append(w.acked, name)
		w.mu.Unlock()
		w.count.Add(1)
	}
}

// createNamespace creates namespace name as the writers create.
func (w *writers) createNamespace(ctx context.Context, c kubernetes.Interface, name string) {
	w.retry(ctx, func(ctx context.Context) error {
		_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return err
	})
}

// retry sends a create until it is acknowledged or 30 s pass, and counts
// the attempts that failed and the creates given up on. An AlreadyExists
// answer to a retry means an earlier attempt was stored.
func (w *writers) retry(ctx context.Context, create func(context.Context) error) bool {
	deadline := time.Now().Add(30 * time.Second)
	for attempt := 0; ; attempt++ {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err := create(rctx)
		cancel()
		if err == nil || (attempt > 0 && apierrors.IsAlreadyExists(err)) {
			return true
		}
		if time.Now().After(deadline) {
			w.failed.Add(1)
			return false
		}
		w.transient.Add(1)
		time.Sleep(100 * time.Millisecond) // a client's backoff
	}
}

// finish stops the writers and returns the acknowledged names.
func (w *writers) finish() []string {
	w.stop()
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.acked...)
}

// waitWrites waits until n more creates are acknowledged.
func (w *writers) waitWrites(ctx context.Context, n int64) error {
	want := w.count.Load() + n
	for w.count.Load() < want {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d more acknowledged writes: %w", n, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
