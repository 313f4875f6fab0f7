package cache

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage/storagetest"
)

// BenchmarkFillHeap30000 creates 30,000 ConfigMaps (256 bytes of data
// each, encoded as in a server) in a cache whose history keeps them all,
// as capstan-load's fill does within the 75 s window, and reports the
// heap the cache then holds: the state, the events and what the history
// keeps of the states between them.
func BenchmarkFillHeap30000(b *testing.B) {
	const n = 30000
	data := strings.Repeat("x", 256)
	for b.Loop() {
		c, err := New(Config{Storage: newTestStore(b), NewFunc: storagetest.NewObject, NewListFunc: storagetest.NewList,
			ResourcePrefix: storagetest.ResourcePrefix, Codec: storagetest.NewCodec(), History: HistoryConfig{MaxEvents: 2 * n}})
		if err != nil {
			b.Fatal(err)
		}
		c.replace(newTree(), 1)
		before := heapInUse()
		for i := range n {
			cm := benchConfigMap("fill", fmt.Sprintf("cm-%05d", i))
			cm.Data = map[string]string{"data": data}
			cm.ResourceVersion = fmt.Sprint(i + 2)
			if err := c.apply(watch.Event{Type: watch.Added, Object: cm}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(heapInUse()-before)/(1<<20), "heap-MB")
		runtime.KeepAlive(c)
	}
}

// heapInUse is the heap's live bytes after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
