package cache

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/storagetest"
)

// BenchmarkSelectorList10000 lists 10,000 cached ConfigMaps with selectors
// that match none, one, and all of them: on the attributes the cache kept
// (kept), and on decoded objects (decoded: the predicate's attribute
// function is its own).
func BenchmarkSelectorList10000(b *testing.B) {
	const n = 10000
	s := newTestStore(b)
	populate(b, s, "bench", n)
	c := newTestCacher(b, s, Config{Attrs: cmAttrs})
	for _, tc := range []struct {
		name        string
		label, fsel string
		want        int
	}{
		{"label,none", "app=none", "", 0},
		{"field,one", "", "metadata.name=cm-04242", 1},
		{"label,all", "app=bench,tier", "", n},
	} {
		pred := storage.SelectionPredicate{GetAttrs: cmAttrs}
		if tc.label != "" {
			sel, err := labels.Parse(tc.label)
			if err != nil {
				b.Fatal(err)
			}
			pred.Label = sel
		}
		if tc.fsel != "" {
			pred.Field = fields.ParseSelectorOrDie(tc.fsel)
		}
		for _, kept := range []bool{true, false} {
			pred.ResourceAttrs = kept
			b.Run(fmt.Sprintf("%s/kept=%v", tc.name, kept), func(b *testing.B) {
				b.ReportAllocs()
				opts := storage.ListOptions{Recursive: true, ResourceVersion: "0", Predicate: pred}
				for b.Loop() {
					l := &corev1.ConfigMapList{}
					if err := c.GetList(context.Background(), "/configmaps/bench", opts, l); err != nil {
						b.Fatal(err)
					}
					if len(l.Items) != tc.want {
						b.Fatalf("listed %d, want %d", len(l.Items), tc.want)
					}
				}
			})
		}
	}
}

// cmAttrs is a ConfigMap's labels and selectable fields, as the registry
// gives them.
func cmAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return nil, nil, fmt.Errorf("not a ConfigMap: %T", obj)
	}
	return cm.Labels, fields.Set{"metadata.name": cm.Name, "metadata.namespace": cm.Namespace}, nil
}

// BenchmarkHeapPerElement reports the heap a cache of 10,000 ConfigMaps
// holds per object, with labels shared by all and with a label of each
// object's own.
func BenchmarkHeapPerElement(b *testing.B) {
	const n = 10000
	for _, tc := range []struct {
		name  string
		label func(i int) map[string]string
	}{
		{"shared-labels", func(int) map[string]string { return map[string]string{"app": "bench", "tier": "x"} }},
		{"own-labels", func(i int) map[string]string {
			return map[string]string{"app": "bench", "tier": "x", "instance": fmt.Sprintf("i-%05d", i)}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := newTestStore(b)
			for i := range n {
				cm := benchConfigMap("bench", fmt.Sprintf("cm-%05d", i))
				cm.Labels = tc.label(i)
				if err := s.Create(context.Background(), cmKey("bench", cm.Name), cm, &corev1.ConfigMap{}, 0); err != nil {
					b.Fatal(err)
				}
			}
			newTestCacher(b, s, Config{Attrs: cmAttrs}) // what the first cache makes once
			var perElement float64
			for b.Loop() {
				before := heapInUse()
				newTestCacher(b, s, Config{Attrs: cmAttrs})
				perElement = float64(int64(heapInUse())-int64(before)) / n
			}
			b.ReportMetric(perElement, "B/elem")
		})
	}
}

// BenchmarkSelectorDispatch100 delivers a change of one of 100 objects to
// 100 watchers that each select one of them by a field (as kubelets watch
// their node's pods), each change to the one that selects it: on the
// attributes the cache kept (kept), and on decoded objects (decoded).
func BenchmarkSelectorDispatch100(b *testing.B) {
	for _, kept := range []bool{true, false} {
		b.Run(fmt.Sprintf("kept=%v", kept), func(b *testing.B) {
			c, err := New(Config{Storage: newTestStore(b), NewFunc: func() runtime.Object { return &corev1.ConfigMap{} },
				NewListFunc: func() runtime.Object { return &corev1.ConfigMapList{} }, ResourcePrefix: "/configmaps",
				Codec: storagetest.NewCodec(), Attrs: cmAttrs})
			if err != nil {
				b.Fatal(err)
			}
			c.replace(newTree(), 1)
			rv := uint64(1)
			apply := func(typ watch.EventType, i int) {
				rv++
				cm := benchConfigMap("ns", fmt.Sprintf("cm-%02d", i))
				cm.ResourceVersion = fmt.Sprint(rv)
				if err := c.apply(watch.Event{Type: typ, Object: cm}); err != nil {
					b.Fatal(err)
				}
			}
			for i := range 100 {
				apply(watch.Added, i)
			}
			var delivered sync.WaitGroup
			for i := range 100 {
				pred := storage.SelectionPredicate{Field: fields.OneTermEqualSelector("metadata.name", fmt.Sprintf("cm-%02d", i)),
					GetAttrs: cmAttrs, ResourceAttrs: kept}
				w := startWatch(b, c, "/configmaps/ns", storage.ListOptions{Recursive: true, ResourceVersion: fmt.Sprint(rv), Predicate: pred})
				go drain(w, &delivered)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				delivered.Add(1)
				apply(watch.Modified, i%100)
				delivered.Wait()
				i++
			}
		})
	}
}
