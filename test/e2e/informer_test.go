package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// listThenWatch is a ListWatch that tells reflectors it cannot stream
// lists, so that they list and then watch.
type listThenWatch struct{ *cache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// TestInformersStayInSync runs a list+watch informer and a WatchList one
// (client-go's default) across 1,000 creates, updates and deletes, and
// compares both with a final list.
func TestInformersStayInSync(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	requests := &requestLog{}
	c := e.ClientWith(t, func(cfg *rest.Config) {
		cfg.QPS, cfg.Burst = -1, 0
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return requests.wrap(rt) })
	})
	for i := range 20 {
		e.ConfigMap(t, ns, fmt.Sprintf("pre-%d", i), nil)
	}
	lw := cache.NewListWatchFromClient(c.CoreV1().RESTClient(), "configmaps", ns, fields.Everything())
	informers := map[string]cache.SharedIndexInformer{
		"list+watch": cache.NewSharedIndexInformer(listThenWatch{lw}, &corev1.ConfigMap{}, 0, nil),
		"watchlist":  cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, nil),
	}
	stop := make(chan struct{})
	defer close(stop)
	for name, inf := range informers {
		go inf.Run(stop)
		if !cache.WaitForCacheSync(e2eutil.Ctx(t).Done(), inf.HasSynced) {
			t.Fatalf("%s informer did not sync", name)
		}
	}
	if !requests.seen("sendInitialEvents=true") {
		t.Fatalf("the WatchList informer did not stream its list: %v", requests.list())
	}
	writeRandomly(t, c, ns, 1000)

	final, err := c.CoreV1().ConfigMaps(ns).List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := fingerprint(final.Items)
	for name, inf := range informers {
		e2eutil.Eventually(t, 30*time.Second, name+" informer in sync", func(context.Context) (bool, error) {
			var items []corev1.ConfigMap
			for _, obj := range inf.GetStore().List() {
				items = append(items, *obj.(*corev1.ConfigMap))
			}
			return fingerprint(items) == want, nil
		})
	}
}

// writeRandomly makes n writes to config maps of ns from 4 workers: creates,
// updates and deletes of 50 names.
func writeRandomly(t *testing.T, c kubernetes.Interface, ns string, n int) {
	t.Helper()
	cms := c.CoreV1().ConfigMaps(ns)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n / 4 {
				name := fmt.Sprintf("cm-%d", rand.IntN(50))
				var err error
				switch i % 3 {
				case 0:
					cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"w": fmt.Sprint(w)}}
					_, err = cms.Create(context.Background(), cm, metav1.CreateOptions{})
				case 1:
					patch := fmt.Sprintf(`{"data":{"i":"%d-%d"}}`, w, i)
					_, err = cms.Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
				case 2:
					err = cms.Delete(context.Background(), name, metav1.DeleteOptions{})
				}
				if err != nil && !strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "already exists") {
					t.Errorf("write %d of worker %d: %v", i, w, err)
				}
			}
		}()
	}
	wg.Wait()
}

// fingerprint is the names and resourceVersions of items, sorted.
func fingerprint(items []corev1.ConfigMap) string {
	out := make([]string, len(items))
	for i, cm := range items {
		out[i] = cm.Name + "@" + cm.ResourceVersion
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
