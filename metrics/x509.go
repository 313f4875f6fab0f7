package metrics

import "github.com/prometheus/client_golang/prometheus"

// X509Counters count the connections to a backend whose serving
// certificate kube calls deprecated: no subjectAltName (the name was only
// in the Common Name) or a SHA-1 signature. Go refuses both; the counters
// tell an operator which backends to re-issue certificates for.
type X509Counters struct {
	MissingSAN, InsecureSHA1 prometheus.Counter
}

// WebhookX509 counts admission and conversion webhooks' certificates;
// AggregatorX509 counts extension API servers'.
var (
	WebhookX509    = newX509Counters("apiserver_webhooks", "webhook")
	AggregatorX509 = newX509Counters("apiserver_kube_aggregator", "extension API server")
)

func newX509Counters(prefix, backend string) X509Counters {
	return X509Counters{
		MissingSAN: prometheus.NewCounter(prometheus.CounterOpts{
			Name: prefix + "_x509_missing_san_total",
			Help: "Requests to a " + backend + " whose serving certificate has no subjectAltName extension, " +
				"or connections to one refused for that reason.",
		}),
		InsecureSHA1: prometheus.NewCounter(prometheus.CounterOpts{
			Name: prefix + "_x509_insecure_sha1_total",
			Help: "Requests to a " + backend + " whose serving certificate chain has a SHA-1 signature, " +
				"or connections to one refused for that reason.",
		}),
	}
}

func init() {
	register(WebhookX509.MissingSAN, WebhookX509.InsecureSHA1, AggregatorX509.MissingSAN, AggregatorX509.InsecureSHA1)
}
