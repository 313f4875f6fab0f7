package attack

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// TestListsDoNotEachHoldTheList: many clients that list a large namespace
// and read the answer slowly do not make the server hold a copy of the
// list for each of them; lists are written item by item as the client
// takes them. No CVE stands for it: kube's issues of LIST requests that
// run the server out of memory do (the reason for its list width
// estimates and streaming encoders).
func TestListsDoNotEachHoldTheList(t *testing.T) {
	s := start(t)
	const items, itemBytes, lists = 40, 256 << 10, 12
	value := strings.Repeat("x", itemBytes)
	for i := range items {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big-%02d", i)}, Data: map[string]string{"v": value}}
		if _, err := s.client.CoreV1().ConfigMaps("default").Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dataset := uint64(items * itemBytes)
	// HTTP/1.1, so that a client that stops reading stops the server's
	// writes (TCP's window), not an HTTP/2 flow-control buffer.
	tlsConfig, err := rest.TLSConfigFor(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig.NextProtos = []string{"http/1.1"}
	tr := &http.Transport{TLSClientConfig: tlsConfig, TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	before := liveHeap()
	var bodies []io.ReadCloser
	for _, rv := range []string{"", "0"} {
		for range lists / 2 {
			req, _ := http.NewRequestWithContext(ctx(t), http.MethodGet, s.URL+"/api/v1/namespaces/default/configmaps?resourceVersion="+rv, nil)
			req.Header.Set("Accept", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			// Read a little, then stall.
			if _, err := io.ReadFull(resp.Body, make([]byte, 4096)); err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, resp.Body)
		}
	}
	held := liveHeap() - min(before, liveHeap())
	// Each stalled list may hold the items in flight, never the whole list:
	// a server that built each answer first would hold lists x dataset.
	t.Logf("%d stalled lists of %d MiB hold %d KiB of live heap", lists, dataset>>20, held>>10)
	if limit := 3 * dataset; held > limit {
		t.Errorf("%d stalled lists of %d MiB hold %d MiB of live heap, want at most %d MiB", lists, dataset>>20, held>>20, limit>>20)
	}
	var wg sync.WaitGroup
	for _, b := range bodies {
		wg.Go(func() {
			defer b.Close()
			if n, err := io.Copy(io.Discard, b); err != nil || uint64(n) < dataset {
				t.Errorf("list read %d bytes, %v", n, err)
			}
		})
	}
	wg.Wait()
}

// liveHeap is the heap left after a full collection, in bytes.
func liveHeap() uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}
