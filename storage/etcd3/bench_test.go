package etcd3

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

func BenchmarkCreate(b *testing.B) {
	s := newTestStore(b, server.Client())
	ctx := b.Context()
	i := 0
	for b.Loop() {
		i++
		name := fmt.Sprintf("cm-%d", i)
		if err := s.Create(ctx, "/configmaps/ns/"+name, testConfigMap(name), &corev1.ConfigMap{}, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGuaranteedUpdate(b *testing.B) {
	s := newTestStore(b, server.Client())
	ctx := b.Context()
	if err := s.Create(ctx, "/configmaps/ns/a", testConfigMap("a"), &corev1.ConfigMap{}, 0); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		err := s.GuaranteedUpdate(ctx, "/configmaps/ns/a", &corev1.ConfigMap{}, false, nil,
			func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
				in.(*corev1.ConfigMap).Data["n"] = fmt.Sprint(i)
				return in, nil, nil
			}, nil)
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetList1000 lists 1000 ConfigMaps, unpaged and in pages of 500.
func BenchmarkGetList1000(b *testing.B) {
	s := newTestStore(b, server.Client())
	ctx := b.Context()
	for i := range 1000 {
		name := fmt.Sprintf("cm-%04d", i)
		if err := s.Create(ctx, "/configmaps/ns/"+name, testConfigMap(name), &corev1.ConfigMap{}, 0); err != nil {
			b.Fatal(err)
		}
	}
	for _, limit := range []int64{0, 500} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			for b.Loop() {
				opts := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: limit}}
				n := 0
				for {
					list := &corev1.ConfigMapList{}
					if err := s.GetList(ctx, "/configmaps/ns", opts, list); err != nil {
						b.Fatal(err)
					}
					n += len(list.Items)
					if list.Continue == "" {
						break
					}
					opts.Predicate.Continue = list.Continue
				}
				if n != 1000 {
					b.Fatalf("listed %d", n)
				}
			}
		})
	}
}
