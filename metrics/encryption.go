package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The KMS v2 families of kube's storage value metrics.
var (
	envelopeCacheMisses = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "apiserver_storage_envelope_transformation_cache_misses_total",
		Help: "Total number of cache misses while accessing key decryption key(KEK).",
	})
	dataKeyGenerationDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "apiserver_storage_data_key_generation_duration_seconds",
		Help:    "Latencies in seconds of data encryption key(DEK) generation operations.",
		Buckets: exponential(5e-6, 2, 14),
	})
	dataKeyGenerationFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "apiserver_storage_data_key_generation_failures_total",
		Help: "Total number of failed data encryption key(DEK) generation operations.",
	})
)

func init() {
	register(envelopeCacheMisses, dataKeyGenerationDuration, dataKeyGenerationFailures)
}

// EnvelopeCacheMiss counts a stored value whose data key the KMS plugin
// had to decrypt: it was not in the cache of decrypted keys.
func EnvelopeCacheMiss() { envelopeCacheMisses.Inc() }

// DataKeyGeneration records the generation of a data key (a KMS v2 seed)
// begun at start; err is its failure.
func DataKeyGeneration(start time.Time, err error) {
	if err != nil {
		dataKeyGenerationFailures.Inc()
		return
	}
	dataKeyGenerationDuration.Observe(time.Since(start).Seconds())
}
