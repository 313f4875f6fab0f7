package etcd3

import (
	"bytes"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/storagetest"
	"github.com/capstan-io/capstan/storage/value"
	"github.com/capstan-io/capstan/storage/value/encrypt"
)

// gcmKeys is an aesgcm provider whose keys are named by the given names,
// the first writing, as the encryption configuration builds it.
func gcmKeys(t testing.TB, names ...string) value.Transformer {
	t.Helper()
	var keys []value.Prefixed
	for _, name := range names {
		g, err := encrypt.NewGCM(bytes.Repeat([]byte(name[:1]), 32))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, value.Prefixed{Prefix: []byte(name + ":"), Transformer: g})
	}
	return value.NewPrefixUnion(nil, value.Prefixed{Prefix: []byte("k8s:enc:aesgcm:v1:"), Transformer: value.NewPrefixUnion(nil, keys...)})
}

func newEncryptedStore(t testing.TB, prefix string, tr value.Transformer) *Store {
	t.Helper()
	s, err := New(Config{
		Client: server.Client(), Codec: storagetest.NewCodec(), NewFunc: storagetest.NewObject, NewListFunc: storagetest.NewList,
		Prefix: prefix, ResourcePrefix: storagetest.ResourcePrefix, GroupResource: schema.GroupResource{Resource: "configmaps"},
		Transformer: tr,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEncryptedConformance runs the storage suite on encrypted values.
func TestEncryptedConformance(t *testing.T) {
	fresh := func(t *testing.T) *Store {
		return newEncryptedStore(t, fmt.Sprintf("/test-%d/registry", prefixes.Add(1)), gcmKeys(t, "key1"))
	}
	compact := compactor(server.Client())
	t.Run("create", func(t *testing.T) { storagetest.RunTestCreate(t.Context(), t, fresh(t)) })
	t.Run("get", func(t *testing.T) { storagetest.RunTestGet(t.Context(), t, fresh(t)) })
	t.Run("update", func(t *testing.T) { storagetest.RunTestGuaranteedUpdate(t.Context(), t, fresh(t)) })
	t.Run("delete", func(t *testing.T) { storagetest.RunTestDelete(t.Context(), t, fresh(t)) })
	t.Run("list", func(t *testing.T) { storagetest.RunTestList(t.Context(), t, fresh(t), compact) })
	t.Run("watch", func(t *testing.T) { storagetest.RunTestWatch(t.Context(), t, fresh(t), compact) })
}

// TestStaleRewrite: an update that changes nothing still writes a value
// read with an old key, and only that one.
func TestStaleRewrite(t *testing.T) {
	ctx := t.Context()
	prefix := fmt.Sprintf("/test-%d/registry", prefixes.Add(1))
	old := newEncryptedStore(t, prefix, gcmKeys(t, "key1"))
	if err := old.Create(ctx, "/configmaps/ns/a", testConfigMap("a"), nil, 0); err != nil {
		t.Fatal(err)
	}
	raw := func() []byte {
		resp, err := server.Client().Get(ctx, prefix+"/configmaps/ns/a")
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatal(resp, err)
		}
		return resp.Kvs[0].Value
	}
	if !bytes.HasPrefix(raw(), []byte("k8s:enc:aesgcm:v1:key1:")) {
		t.Fatalf("stored %q", raw())
	}
	rotated := newEncryptedStore(t, prefix, gcmKeys(t, "key2", "key1"))
	noop := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) { return in, nil, nil }
	update := func(cached runtime.Object) string {
		out := &corev1.ConfigMap{}
		if err := rotated.GuaranteedUpdate(ctx, "/configmaps/ns/a", out, false, nil, noop, cached); err != nil {
			t.Fatal(err)
		}
		return out.ResourceVersion
	}
	cur := &corev1.ConfigMap{}
	if err := rotated.Get(ctx, "/configmaps/ns/a", storage.GetOptions{}, cur); err != nil {
		t.Fatal(err)
	}
	// From a cached copy, as the watch cache passes one: the stale value
	// is only known after the read the comparison makes.
	rv := update(cur.DeepCopy())
	if rv == cur.ResourceVersion || !bytes.HasPrefix(raw(), []byte("k8s:enc:aesgcm:v1:key2:")) {
		t.Fatalf("the stale value was not rewritten: rv %s, stored %q", rv, raw()[:24])
	}
	if again := update(nil); again != rv {
		t.Fatalf("a current value was rewritten: rv %s then %s", rv, again)
	}
	if err := old.Get(ctx, "/configmaps/ns/a", storage.GetOptions{}, &corev1.ConfigMap{}); err == nil {
		t.Fatal("a store without key2 read the rewritten value")
	}
}
