package metrics

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The authentication and authorization families: kube's
// endpoints/filters metrics.
var (
	authenticatedUsers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authenticated_user_requests",
		Help: "Counter of authenticated requests broken out by username.",
	}, []string{"username"})
	authenticationAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authentication_attempts",
		Help: "Counter of authenticated attempts.",
	}, []string{"result"})
	authenticationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "authentication_duration_seconds",
		Help:    "Authentication duration in seconds broken out by result.",
		Buckets: exponential(0.001, 2, 15),
	}, []string{"result"})
	clientCertificateExpiration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "apiserver_client_certificate_expiration_seconds",
		Help: "Distribution of the remaining lifetime on the certificate used to authenticate a request.",
		Buckets: []float64{0, 1800, 3600, 7200, 21600, 43200, 86400, 172800, 345600, 604800,
			2592000, 7776000, 15552000, 31104000},
	})
	authorizationAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authorization_attempts_total",
		Help: "Counter of authorization attempts broken down by result. It can be either 'allowed', 'denied', 'no-opinion' or 'error'.",
	}, []string{"result"})
	authorizationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "authorization_duration_seconds",
		Help:    "Authorization duration in seconds broken out by result.",
		Buckets: exponential(0.001, 2, 15),
	}, []string{"result"})
)

func init() {
	register(authenticatedUsers, authenticationAttempts, authenticationDuration, clientCertificateExpiration,
		authorizationAttempts, authorizationDuration)
}

// Authentication records one authentication started at start: "error"
// when an authenticator failed, "failure" when none accepted the
// request, else "success" and the user, its name bounded as kube bounds
// it.
func Authentication(start time.Time, ok bool, err error, user string) {
	result := "success"
	switch {
	case err != nil:
		result = "error"
	case !ok:
		result = "failure"
	default:
		authenticatedUsers.WithLabelValues(compressUsername(user)).Inc()
	}
	authenticationAttempts.WithLabelValues(result).Inc()
	authenticationDuration.WithLabelValues(result).Observe(time.Since(start).Seconds())
}

// ClientCertificateExpiration records the remaining lifetime of a
// request's client certificate, before it is verified.
func ClientCertificateExpiration(remaining time.Duration) {
	clientCertificateExpiration.Observe(remaining.Seconds())
}

// compressUsername keeps a few well-known names and folds the rest, so
// that user names never grow the series.
func compressUsername(name string) string {
	switch {
	case name == "admin" || name == "client" || name == "kube_proxy" || name == "kubelet" ||
		name == "system:serviceaccount:kube-system:default":
		return name
	case strings.Contains(name, "@"):
		return "email_id"
	}
	return "other"
}

// Authorization records one authorization decision started at start:
// "allowed", "denied", "no-opinion" or "error".
func Authorization(start time.Time, result string) {
	authorizationAttempts.WithLabelValues(result).Inc()
	authorizationDuration.WithLabelValues(result).Observe(time.Since(start).Seconds())
}
