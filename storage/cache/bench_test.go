package cache

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

func benchConfigMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "bench", "tier": "x"}},
		Data:       map[string]string{"key": "value", "config.yaml": "a: 1\nb: two\nc: [3, 4]\n"},
	}
}

// populate creates n ConfigMaps in ns from 8 writers.
func populate(b *testing.B, s storage.Interface, ns string, n int) {
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < n; i += 8 {
				name := fmt.Sprintf("cm-%05d", i)
				if err := s.Create(context.Background(), cmKey(ns, name), benchConfigMap(ns, name), &corev1.ConfigMap{}, 0); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkGetList10000 lists 10,000 ConfigMaps from the cache and from
// etcd3: at resourceVersion "0", consistently (""), and in pages of 500.
func BenchmarkGetList10000(b *testing.B) {
	const n = 10000
	s := newTestStore(b)
	populate(b, s, "bench", n)
	c := newTestCacher(b, s, Config{})
	for _, tc := range []struct {
		name  string
		rv    string
		limit int64
	}{{"rv=0", "0", 0}, {"consistent", "", 0}, {"consistent,limit=500", "", 500}} {
		for _, impl := range []struct {
			name string
			s    storage.Interface
		}{{"cache", c}, {"etcd3", s}} {
			b.Run(tc.name+"/"+impl.name, func(b *testing.B) {
				for b.Loop() {
					if got := listAll(b, impl.s, tc.rv, tc.limit); got != n {
						b.Fatalf("listed %d", got)
					}
				}
			})
		}
	}
}

func listAll(b *testing.B, s storage.Interface, rv string, limit int64) int {
	opts := storage.ListOptions{Recursive: true, ResourceVersion: rv, Predicate: storage.SelectionPredicate{Limit: limit}}
	total := 0
	for {
		l := &corev1.ConfigMapList{}
		if err := s.GetList(context.Background(), "/configmaps/bench", opts, l); err != nil {
			b.Fatal(err)
		}
		total += len(l.Items)
		if l.Continue == "" {
			return total
		}
		opts.Predicate.Continue = l.Continue
	}
}

// BenchmarkWatchFanOut100: one update seen by 100 watchers of the cache,
// or 100 etcd3 watches. An op is a write and its delivery to all.
func BenchmarkWatchFanOut100(b *testing.B) {
	s := newTestStore(b)
	c := newTestCacher(b, s, Config{})
	create(b, s, "fanout", "a", "n", "0")
	for _, impl := range []struct {
		name string
		s    storage.Interface
	}{{"cache", c}, {"etcd3", s}} {
		b.Run(impl.name, func(b *testing.B) {
			var delivered sync.WaitGroup
			rv := fmt.Sprint(currentRV(b, s))
			for range 100 {
				w := startWatch(b, impl.s, "/configmaps/fanout", storage.ListOptions{Recursive: true, ResourceVersion: rv})
				go drain(w, &delivered)
			}
			i := 0
			for b.Loop() {
				i++
				delivered.Add(100)
				setData(b, s, "fanout", "a", "n", fmt.Sprint(i))
				delivered.Wait()
			}
		})
	}
}

func drain(w watch.Interface, delivered *sync.WaitGroup) {
	for range w.ResultChan() {
		delivered.Done()
	}
}

func currentRV(b *testing.B, s storage.Interface) uint64 {
	rv, err := s.CurrentResourceVersion(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return rv
}

// BenchmarkDispatch100 measures the cache alone: one event applied to the
// state and history and delivered to 100 watchers, without a backend (each
// delivery timed, as kube's dispatch stages).
func BenchmarkDispatch100(b *testing.B) {
	c, err := New(Config{Storage: newTestStore(b), NewFunc: func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc: func() runtime.Object { return &corev1.ConfigMapList{} }, ResourcePrefix: "/configmaps"})
	if err != nil {
		b.Fatal(err)
	}
	c.replace(newTree(), 1)
	var delivered sync.WaitGroup
	for range 100 {
		w := startWatch(b, c, "/configmaps/ns", storage.ListOptions{Recursive: true, ResourceVersion: "1"})
		go drain(w, &delivered)
	}
	rv := uint64(1)
	for b.Loop() {
		rv++
		cm := benchConfigMap("ns", fmt.Sprintf("cm-%d", rv%1000))
		cm.ResourceVersion = fmt.Sprint(rv)
		delivered.Add(100)
		// As the reflector's watch sends it: with its decoding time.
		if err := c.apply(watch.Event{Type: watch.Modified, Object: &storage.TimedObject{Object: cm, Decoded: time.Now()}}); err != nil {
			b.Fatal(err)
		}
		delivered.Wait()
	}
}

// BenchmarkApply10000 measures what one event costs the cache with 10,000
// objects and no watchers: B/op is the memory an event keeps while it is
// in the history (its snapshot's copied B-tree path, and the event).
func BenchmarkApply10000(b *testing.B) {
	c, err := New(Config{Storage: newTestStore(b), NewFunc: func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc: func() runtime.Object { return &corev1.ConfigMapList{} }, ResourcePrefix: "/configmaps",
		History: HistoryConfig{MaxEvents: 1000}})
	if err != nil {
		b.Fatal(err)
	}
	state := newTree()
	objs := make([]*corev1.ConfigMap, 10000)
	for i := range objs {
		objs[i] = benchConfigMap("ns", fmt.Sprintf("cm-%05d", i))
		objs[i].ResourceVersion = "1"
		state.ReplaceOrInsert(&element{key: cmKey("ns", objs[i].Name), obj: objs[i]})
	}
	c.replace(state, 1)
	rv := uint64(1)
	for b.Loop() {
		rv++
		cm := *objs[(rv*7919)%10000]
		cm.ResourceVersion = fmt.Sprint(rv)
		if err := c.apply(watch.Event{Type: watch.Modified, Object: &cm}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPaginatedList5000 is capstan-load's paginated list: one
// namespace of 5,000 ConfigMaps beside another of 5,000, read in pages of
// 500, the first page consistent and the others from its continue token.
// "writes" changes an object of the listed namespace before every page, so
// that the continued pages read an older snapshot of the history rather
// than the latest state.
func BenchmarkPaginatedList5000(b *testing.B) {
	const n = 5000
	s := newTestStore(b)
	populate(b, s, "bench", n)
	populate(b, s, "other", n)
	c := newTestCacher(b, s, Config{})
	for _, writes := range []bool{false, true} {
		b.Run(fmt.Sprintf("writes=%t", writes), func(b *testing.B) {
			i := 0
			for b.Loop() {
				opts := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 500}}
				total := 0
				for {
					if writes {
						i++
						setData(b, s, "bench", fmt.Sprintf("cm-%05d", i%n), "key", fmt.Sprint(i))
					}
					l := &corev1.ConfigMapList{}
					if err := c.GetList(context.Background(), "/configmaps/bench", opts, l); err != nil {
						b.Fatal(err)
					}
					total += len(l.Items)
					if l.Continue == "" {
						break
					}
					opts.Predicate.Continue = l.Continue
				}
				if total != n {
					b.Fatalf("listed %d", total)
				}
			}
		})
	}
}
