package handlers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/etcd3"
)

// TestDeleteCollectionAnswer: deletecollection, with and without a label
// selector, deletes exactly the selected config maps and answers, in every
// form, byte for byte the codec's encoding of the list of them as they
// were (kube's answer), though the listed objects are written one by one
// from the watch cache.
func TestDeleteCollectionAnswer(t *testing.T) {
	for _, encoded := range []bool{true, false} {
		t.Run(fmt.Sprintf("encoded=%t", encoded), func(t *testing.T) {
			scope, s := configMapScopeWith(t, encoded)
			n := 0
			for _, selector := range []string{"", "tier=web"} {
				for _, accept := range listAccepts {
					n++
					ns := fmt.Sprintf("dc%d", n)
					t.Run(fmt.Sprintf("%q/%s", selector, accept), func(t *testing.T) {
						createTiered(t, s, ns)
						createTiered(t, s, ns+"-other")
						want := listAnswer(t, scope, ns, selector, accept)
						rec := httptest.NewRecorder()
						scope.DeleteCollection(rec, deleteCollectionRequest(ns, selector, accept))
						if rec.Code != http.StatusOK {
							t.Fatalf("deletecollection = %d: %s", rec.Code, rec.Body)
						}
						if !bytes.Equal(rec.Body.Bytes(), want) {
							t.Errorf("deletecollection answered\n %q\nwant %q", rec.Body.Bytes(), want)
						}
						left := map[string]string{"": "", "tier=web": "b,d"}[selector]
						if got := storedNames(t, s, ns); got != left {
							t.Errorf("left in %s: %q, want %q", ns, got, left)
						}
						if got := storedNames(t, s, ns+"-other"); got != "a,b,c,d" {
							t.Errorf("left in the other namespace: %q", got)
						}
					})
				}
			}
		})
	}
}

// TestDeleteCollectionSharesTheCachesItems: the deletion lists through
// the watch cache's shared items, so that it decodes no object at once
// but the one each delete reads.
func TestDeleteCollectionSharesTheCachesItems(t *testing.T) {
	scope, s := configMapScope(t)
	createTiered(t, s, "shared")
	r := deleteCollectionRequest("shared", "tier=web", kruntime.ContentTypeJSON)
	_, items, err := scope.Storage.(rest.ResponseCollectionDeleter).DeleteCollectionForResponse(r.Context(), nil, &metav1.DeleteOptions{},
		&rest.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"tier": "web"}), FieldSelector: fields.Everything()})
	if err != nil {
		t.Fatal(err)
	}
	if items == nil || items.Len() != 2 || items.Key(0) != "/configmaps/shared/a" || items.Key(1) != "/configmaps/shared/c" {
		t.Fatalf("items handed over: %v", items)
	}
	if got := storedNames(t, s, "shared"); got != "b,d" {
		t.Errorf("left: %q, want b,d", got)
	}
}

// createTiered writes config maps a to d into ns, a and c labelled
// tier=web, b and d tier=db.
func createTiered(t *testing.T, s *etcd3.Store, ns string) {
	t.Helper()
	for i, name := range []string{"a", "b", "c", "d"} {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"tier": []string{"web", "db"}[i%2]}},
			Data:       map[string]string{"k": strings.Repeat(name, 10)},
		}
		if err := s.Create(context.Background(), cmKey(ns, name), cm, &corev1.ConfigMap{}, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// listAnswer is what DeleteCollection answered before it wrote its items
// one by one: the store's List of what selector selects, written whole.
func listAnswer(t *testing.T, scope *Scope, ns, selector, accept string) []byte {
	t.Helper()
	sel, err := labels.Parse(selector)
	if err != nil {
		t.Fatal(err)
	}
	r := listRequest(ns, accept)
	list, err := scope.Storage.(rest.Lister).List(r.Context(), &rest.ListOptions{LabelSelector: sel, FieldSelector: fields.Everything()})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	scope.writeObject(rec, r, http.StatusOK, list)
	return rec.Body.Bytes()
}

func deleteCollectionRequest(ns, selector, accept string) *http.Request {
	r := httptest.NewRequest(http.MethodDelete, "/api/v1/namespaces/"+ns+"/configmaps?labelSelector="+url.QueryEscape(selector), nil)
	r.Header.Set("Accept", accept)
	return r.WithContext(request.WithNamespace(r.Context(), ns))
}

// storedNames lists ns's config maps from etcd.
func storedNames(t *testing.T, s *etcd3.Store, ns string) string {
	t.Helper()
	var list corev1.ConfigMapList
	if err := s.GetList(context.Background(), "/configmaps/"+ns+"/", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything()}}, &list); err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(list.Items))
	for i, cm := range list.Items {
		names[i] = cm.Name
	}
	return strings.Join(names, ",")
}

// BenchmarkDeleteCollectionPeakHeap deletes 20,000 config maps of 512
// bytes of data with one deletecollection, answered as JSON and as
// protobuf, and reports the peak heap while it ran (sampled every
// millisecond) above the live heap before it.
func BenchmarkDeleteCollectionPeakHeap(b *testing.B) {
	const n = 20000
	for _, accept := range listMediaTypes[:2] {
		b.Run(accept, func(b *testing.B) {
			scope, s := configMapScope(b)
			var peaks, lives uint64
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				ns := fmt.Sprintf("del%d", i)
				createConfigMaps(b, s, ns, n, 512)
				// The cache sees them all before the deletion lists.
				w := newDiscard()
				scope.List(w, listRequest(ns, accept), false)
				base := liveHeap()
				b.StartTimer()
				peak, live := peakHeapDuring(func() {
					w := newDiscard()
					scope.DeleteCollection(w, deleteCollectionRequest(ns, "", accept))
					if w.code != http.StatusOK {
						b.Fatalf("deletecollection = %d", w.code)
					}
				})
				peaks += peak - min(peak, base)
				lives += live - min(live, base)
			}
			b.ReportMetric(float64(peaks)/float64(b.N)/(1<<20), "peak-MiB")
			b.ReportMetric(float64(lives)/float64(b.N)/(1<<20), "peak-live-MiB")
		})
	}
}

// liveHeap is the heap's live bytes after a collection.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// peakHeapDuring runs f and returns the largest heap (objects, live or
// not yet collected) and the largest live heap (as the last collection
// marked it) seen while it ran, sampled every millisecond.
func peakHeapDuring(f func()) (peak, live uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			live = max(live, s[1].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	return peak, live
}
