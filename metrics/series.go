package metrics

import "sync"

// seriesCache remembers the series a vector's WithLabelValues returned
// for each key, so that a request finds its series with one map read.
// client_golang hashes and validates every label value on each lookup:
// on a GET that was half of what metrics cost (BenchmarkRequestMetrics).
// Keys must be bounded like the label values they stand for; nothing here
// forgets a key, so only families whose series are never deleted use it.
type seriesCache[K comparable, V any] struct {
	mu    sync.RWMutex
	m     map[K]V
	build func(K) V
}

func newSeriesCache[K comparable, V any](build func(K) V) *seriesCache[K, V] {
	return &seriesCache[K, V]{m: map[K]V{}, build: build}
}

// get returns k's series, making them on first use.
func (c *seriesCache[K, V]) get(k K) V {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[k]; ok {
		return v
	}
	v = c.build(k)
	c.m[k] = v
	return v
}
