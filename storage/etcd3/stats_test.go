package etcd3

import (
	"context"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/storage"
)

// TestStats: the count is every key stored; the average size is of the
// values the store has read (lists, watches), forgetting deleted keys.
func TestStats(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t, external)
	st, err := s.Stats(ctx)
	if err != nil || st != (storage.Stats{}) {
		t.Fatalf("empty store: %+v, %v", st, err)
	}
	for i, n := range []int{100, 300} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: string(rune('a' + i))},
			Data: map[string]string{"k": strings.Repeat("x", n)}}
		if err := s.Create(ctx, "/configmaps/ns/"+cm.Name, cm, &corev1.ConfigMap{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	st, err = s.Stats(ctx)
	if err != nil || st.ObjectCount != 2 || st.AverageSizeBytes != 0 {
		t.Fatalf("before any read: %+v, %v (want 2 objects of unknown size)", st, err)
	}
	if err := s.GetList(ctx, "/configmaps/", storage.ListOptions{Recursive: true}, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	prefix, _ := s.keys.etcdKey("/configmaps/", true)
	resp, err := external.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, kv := range resp.Kvs {
		sum += int64(len(kv.Value))
	}
	st, err = s.Stats(ctx)
	if err != nil || st.ObjectCount != 2 || st.AverageSizeBytes != sum/2 || sum/2 < 200 {
		t.Fatalf("after a list: %+v, %v; want 2 objects of %d bytes", st, err, sum/2)
	}
	// A key deleted behind the store's back leaves the average too.
	keyB, _ := s.keys.etcdKey("/configmaps/ns/b", false)
	if _, err := external.Delete(ctx, keyB); err != nil {
		t.Fatal(err)
	}
	st, err = s.Stats(ctx)
	if err != nil || st.ObjectCount != 1 || st.AverageSizeBytes != int64(len(resp.Kvs[0].Value)) {
		t.Fatalf("after a delete: %+v, %v", st, err)
	}
}
