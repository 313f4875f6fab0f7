package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/internal/testkit"
)

// Many watches share a client's HTTP/2 connections (100 streams each):
// the server's frame scheduler must serve every stream, skip one whose
// client stopped reading (its flow-control window full) without holding
// the others back, and drop it when the client resets it.
func TestWatchesShareConnections(t *testing.T) {
	const watchers = 300 // more than one connection's streams
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	list, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A watch of the big config maps that is never read: after ~4 MB its
	// stream's window is full and the server cannot write to it.
	stuckCtx, unstick := context.WithCancel(e2eutil.Ctx(t))
	defer unstick()
	stuck, err := e.Clientset.CoreV1().RESTClient().Get().Namespace(ns).Resource("configmaps").
		Param("watch", "true").Param("resourceVersion", list.ResourceVersion).Param("labelSelector", "size=big").
		Stream(stuckCtx)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	small := make([]watch.Interface, watchers)
	for i := range small {
		if small[i], err = cms.Watch(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion, LabelSelector: "size=small"}); err != nil {
			t.Fatal(err)
		}
		defer small[i].Stop()
	}

	big := strings.Repeat("x", 900_000)
	for i := range 6 {
		createSized(t, e.Clientset, ns, fmt.Sprintf("big-%d", i), "big", big)
	}
	for i := range 5 {
		createSized(t, e.Clientset, ns, fmt.Sprintf("small-%d", i), "small", "")
	}
	wantAllAdded(t, small, "small-", 0, 5)

	// The client resets the stuck stream; the others go on.
	unstick()
	createSized(t, e.Clientset, ns, "small-5", "small", "")
	wantAllAdded(t, small, "small-", 5, 6)
}

func createSized(t testing.TB, c kubernetes.Interface, ns, name, size, data string) {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"size": size}},
		Data:       map[string]string{"data": data},
	}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
}

// wantAllAdded checks that each watch's next events are the ADDED events
// of prefix<from> to prefix<to-1>, in order.
func wantAllAdded(t *testing.T, ws []watch.Interface, prefix string, from, to int) {
	t.Helper()
	for i, w := range ws {
		for n := from; n < to; n++ {
			ev := e2eutil.NextEvent(t, w)
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if want := fmt.Sprintf("%s%d", prefix, n); ev.Type != watch.Added || !ok || cm.Name != want {
				t.Fatalf("watch %d: got %s %T, want ADDED %s", i, ev.Type, ev.Object, want)
			}
		}
	}
}

// BenchmarkWatchFanOut250 measures a write delivered to 250 watches of one
// namespace, opened by one client (one HTTP/2 connection), as the load
// tool's watch workload does with 1,000. An op is a create and its
// arrival at every watch; the client's decoding is part of it.
func BenchmarkWatchFanOut250(b *testing.B) {
	const watchers = 250
	s := testkit.StartServer(b)
	cfg := rest.CopyConfig(s.Config)
	cfg.QPS = -1 // no client-side rate limit: the writes are what is timed
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ns := fmt.Sprintf("bench-%d", e2eutil.NameSeq.Add(1))
	if _, err = c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	cms := c.CoreV1().ConfigMaps(ns)
	list, err := cms.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var delivered sync.WaitGroup
	for range watchers {
		w, err := cms.Watch(context.Background(), metav1.ListOptions{ResourceVersion: list.ResourceVersion, LabelSelector: "size=small"})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		go func() {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Added { // not the error of the stop at the end
					delivered.Done()
				}
			}
		}()
	}
	data := strings.Repeat("x", 256)
	i := 0
	before := processCPU(b)
	for b.Loop() {
		i++
		delivered.Add(watchers)
		createSized(b, c, ns, fmt.Sprintf("cm-%d", i), "small", data)
		delivered.Wait()
	}
	// CPU time, not wall time, is what a shared machine measures well.
	b.ReportMetric(float64(processCPU(b)-before)/float64(i), "cpu-ns/op")
}

// processCPU is the CPU time this process (server and client) used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
