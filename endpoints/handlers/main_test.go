package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/endpoints/wire"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/storage/cache"
	"github.com/capstan-io/capstan/storage/embedded/embeddedtest"
	"github.com/capstan-io/capstan/storage/etcd3"
	"github.com/capstan-io/capstan/storage/storagetest"
)

// The handler tests run over a real embedded etcd and watch cache, started
// by the first test that needs them.
var etcd embeddedtest.Shared

func TestMain(m *testing.M) { os.Exit(etcd.Main(m)) }

// configMapScope is the configmaps endpoint's Scope over a watch cache on
// the embedded etcd, under a fresh prefix, and the etcd3 store under it.
// The cache keeps its objects encoded, as the server's do.
func configMapScope(t testing.TB) (*Scope, *etcd3.Store) {
	t.Helper()
	return configMapScopeWith(t, true)
}

// configMapScopeWith is configMapScope, with a cache that keeps its
// objects encoded or decoded (as a custom resource's).
func configMapScopeWith(t testing.TB, encoded bool) (*Scope, *etcd3.Store) {
	t.Helper()
	gr := schema.GroupResource{Resource: "configmaps"}
	s, err := etcd3.New(etcd3.Config{
		Client: etcd.Server(t).Client(), Codec: storagetest.NewCodec(),
		NewFunc: storagetest.NewObject, NewListFunc: storagetest.NewList,
		Prefix: etcd.Prefix(), ResourcePrefix: storagetest.ResourcePrefix, GroupResource: gr,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := cache.Config{Storage: s, NewFunc: storagetest.NewObject, NewListFunc: storagetest.NewList,
		ResourcePrefix: storagetest.ResourcePrefix, GroupResource: gr}
	if encoded {
		cfg.Codec = storagetest.NewCodec()
	}
	c, err := cache.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { c.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := c.Wait(wctx); err != nil {
		t.Fatalf("cache not ready: %v", err)
	}
	store := registry.NewStore(registry.StoreConfig{
		Resource: gr, Kind: "ConfigMap", New: storagetest.NewObject, NewList: storagetest.NewList,
		Strategy: core.ConfigMapStrategy{}, Storage: c, KeyPrefix: storagetest.ResourcePrefix,
	})
	return &Scope{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		Namespaced: true, Storage: store,
		Common: Common{Serializer: scheme.Codecs, ParameterCodec: scheme.ParameterCodec, Creater: scheme.Scheme, Typer: scheme.Scheme,
			Wire: wire.NewCaches(slog.Default())},
	}, s
}

// createConfigMaps writes n config maps named cm-00000... into ns, from 8
// writers, each with data of objectBytes.
func createConfigMaps(t testing.TB, s *etcd3.Store, ns string, n, objectBytes int) {
	t.Helper()
	data := make([]byte, objectBytes)
	for i := range data {
		data[i] = 'a' + byte(i%26)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < n; i += 8 {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%05d", i), Labels: map[string]string{"app": "bench"}},
					Data:       map[string]string{"data": string(data)},
				}
				key := cmKey(ns, cm.Name)
				if err := s.Create(context.Background(), key, cm, &corev1.ConfigMap{}, 0); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// listRequest is a GET of ns's config maps accepting mediaType.
func listRequest(ns, mediaType string, header ...string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps", nil)
	r.Header.Set("Accept", mediaType)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	return r.WithContext(request.WithNamespace(r.Context(), ns))
}

// discard is a ResponseWriter that keeps only the count of bytes written.
type discard struct {
	header http.Header
	code   int
	n      int
}

func newDiscard() *discard { return &discard{header: http.Header{}} }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) WriteHeader(code int)        { d.code = code }
func (d *discard) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
